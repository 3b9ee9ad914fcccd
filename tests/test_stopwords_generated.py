"""The committed stopword files are exactly what tools/gen_stopwords.py produces."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALES = sorted(p.name for p in (ROOT / "src" / "guardlex" / "locales").iterdir() if p.is_dir())


@pytest.mark.parametrize("locale", LOCALES)
def test_committed_stopwords_equal_generator_output(
    locale: str, tool: Callable[[str], ModuleType]
) -> None:
    gen = tool("gen_stopwords")
    overrides = gen.yaml.safe_load(gen.OVERRIDES.read_text(encoding="utf-8"))["locales"]
    expected = gen.build(locale, overrides)
    committed = (ROOT / "src" / "guardlex" / "locales" / locale / "stopwords.yaml").read_text(
        encoding="utf-8"
    )
    assert committed == expected, f"run: python tools/gen_stopwords.py {locale}"


@pytest.mark.parametrize("locale", LOCALES)
def test_kept_content_words_are_not_stopwords(
    locale: str, tool: Callable[[str], ModuleType]
) -> None:
    from guardlex.normalise import normalise

    gen = tool("gen_stopwords")
    overrides = gen.yaml.safe_load(gen.OVERRIDES.read_text(encoding="utf-8"))["locales"]
    data = gen.yaml.safe_load(
        (ROOT / "src" / "guardlex" / "locales" / locale / "stopwords.yaml").read_text("utf-8")
    )
    words = set(data["words"])
    kept = {normalise(w) for w in overrides.get(locale, {}).get("keep", [])}
    assert not words & kept
    assert all(w == normalise(w) for w in words), "every stopword is in normalised form"
