"""Text helpers shared by the compiler, the matcher and the linter.

The engine never normalises on its own: every phrase, pattern and question goes through
``guardlex.normalise`` so that rules and input meet in the same form. This module only
adds what matching needs on top (character classes, the word-boundary convention, and a
thin adapter that returns normalised text together with a mapping back to the original).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol

import regex

# A "word character" for whole-word matching is regex's \w: letters, combining marks
# (Devanagari matras and virama, Arabic marks), digits and connector punctuation. The
# stdlib ``re`` treats a matra as a non-word character and would split Hindi words.
WORD_START = r"(?<!\w)"
WORD_END = r"(?!\w)"

_HAN = regex.compile(r"\p{Han}")


class NormalisedLike(Protocol):
    """What the engine needs from ``guardlex.normalise.Normalised``."""

    @property
    def text(self) -> str: ...

    @property
    def offsets(self) -> Sequence[int]: ...

    def source_span(self, start: int, end: int) -> tuple[int, int]: ...


@lru_cache(maxsize=8192)
def is_han(ch: str) -> bool:
    """True for a CJK ideograph: such characters need no word boundary."""
    return bool(ch) and _HAN.match(ch, timeout=1.0) is not None


def is_word_char(ch: str) -> bool:
    """Whether ``ch`` counts as part of a word for whole-word matching (regex's ``\\w``)."""
    if not ch:
        return False
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


def _load_normaliser() -> tuple[Callable[[str], str], Callable[[str], NormalisedLike]]:
    from guardlex.normalise import normalise, normalise_with_offsets

    return normalise, normalise_with_offsets


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """Normalise ``text`` with the one guardlex normaliser (memoised: packs repeat words)."""
    return _load_normaliser()[0](text)


def normalise_with_offsets(text: str) -> NormalisedLike:
    """Normalise ``text`` and keep the way back to the original offsets."""
    return _load_normaliser()[1](text)
