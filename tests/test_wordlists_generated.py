"""The committed word lists (locales/<code>/words.txt) are what tools/gen_wordlists.py makes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALES = sorted(p.name for p in (ROOT / "src" / "guardlex" / "locales").iterdir() if p.is_dir())


@pytest.mark.parametrize("locale", LOCALES)
def test_committed_word_list_equals_generator_output(
    locale: str, tool: Callable[[str], ModuleType]
) -> None:
    gen = tool("gen_wordlists")
    path = ROOT / "src" / "guardlex" / "locales" / locale / "words.txt"
    if not gen.wants_list(locale):
        assert not path.exists(), f"tools/wordlists.yaml skips {locale}: delete {path}"
        return
    assert path.is_file(), f"run: python tools/gen_wordlists.py {locale}"
    assert path.read_text(encoding="utf-8") == gen.build(locale), (
        f"run: python tools/gen_wordlists.py {locale}"
    )


@pytest.mark.parametrize("locale", LOCALES)
def test_word_lists_are_normalised_single_words(locale: str) -> None:
    from guardlex.normalise import normalise
    from guardlex.rules.typos import read_words

    path = ROOT / "src" / "guardlex" / "locales" / locale / "words.txt"
    if not path.exists():
        return
    words = read_words(path)
    assert len(words) > 10_000
    assert all(w == normalise(w) and " " not in w for w in words[:: max(1, len(words) // 500)])
