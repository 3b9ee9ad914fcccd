"""Every shipped YAML file reads the same with libyaml's C parser and the pure-Python one.

The pack loader uses the C parser when PyYAML has it; the C parser accepts a few flow
lists the Python parser rejects (an unquoted ``?`` inside ``[...]``), so a pack could load
on one machine and fail on another, or a tool could read other data than the router.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    [
        *(ROOT / "src" / "guardlex" / "locales").glob("*/*.yaml"),
        *(ROOT / "tests" / "data").glob("**/*.yaml"),
    ]
)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_yaml_reads_the_same_with_both_parsers(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    pure = yaml.load(text, Loader=yaml.SafeLoader)
    fast = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert pure == fast
