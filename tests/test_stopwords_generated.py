"""The committed stopword files are exactly what tools/gen_stopwords.py produces."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALES = sorted(p.name for p in (ROOT / "src" / "guardlex" / "locales").iterdir() if p.is_dir())


def _tool():
    spec = importlib.util.spec_from_file_location(
        "gen_stopwords", ROOT / "tools" / "gen_stopwords.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_stopwords"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("locale", LOCALES)
def test_committed_stopwords_equal_generator_output(locale: str) -> None:
    tool = _tool()
    overrides = tool.yaml.safe_load(tool.OVERRIDES.read_text(encoding="utf-8"))["locales"]
    expected = tool.build(locale, overrides)
    committed = (ROOT / "src" / "guardlex" / "locales" / locale / "stopwords.yaml").read_text(
        encoding="utf-8"
    )
    assert committed == expected, f"run: python tools/gen_stopwords.py {locale}"


@pytest.mark.parametrize("locale", LOCALES)
def test_kept_content_words_are_not_stopwords(locale: str) -> None:
    from guardlex.normalise import normalise

    tool = _tool()
    overrides = tool.yaml.safe_load(tool.OVERRIDES.read_text(encoding="utf-8"))["locales"]
    data = tool.yaml.safe_load(
        (ROOT / "src" / "guardlex" / "locales" / locale / "stopwords.yaml").read_text("utf-8")
    )
    words = set(data["words"])
    kept = {normalise(w) for w in overrides.get(locale, {}).get("keep", [])}
    assert not words & kept
    assert all(w == normalise(w) for w in words), "every stopword is in normalised form"
