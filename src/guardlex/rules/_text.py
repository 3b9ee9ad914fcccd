"""Text helpers shared by the compiler, the matcher and the linter.

The engine never normalises on its own: every phrase, pattern and question goes through
``guardlex.normalise`` so that rules and input meet in the same form. This module only
adds what matching needs on top (character classes, the word-boundary convention, and a
thin adapter that returns normalised text together with a mapping back to the original).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
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

    text: str

    def source_span(self, start: int, end: int) -> tuple[int, int]: ...


def is_han(ch: str) -> bool:
    """True for a CJK ideograph: such characters need no word boundary."""
    return bool(ch) and _HAN.match(ch) is not None


def is_word_char(ch: str) -> bool:
    """Whether ``ch`` counts as part of a word for whole-word matching (regex's ``\\w``)."""
    if not ch:
        return False
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


def _load_normaliser() -> tuple[Callable[[str], str], Callable[[str], NormalisedLike]]:
    try:
        from guardlex.normalise import normalise, normalise_with_offsets
    except ImportError:  # TEMPORARY: until guardlex.normalise lands (helper A)
        return _fallback_normalise, _fallback_with_offsets
    return normalise, normalise_with_offsets  # type: ignore[return-value]


class _FallbackNormalised:
    def __init__(self, text: str, offsets: list[int], length: int) -> None:
        self.text = text
        self.offsets = offsets
        self._length = length

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        if start >= end:
            pos = self.offsets[start] if start < len(self.offsets) else self._length
            return pos, pos
        return self.offsets[start], self.offsets[end - 1] + 1


_FOLD = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ة": "ه", "أ": "ا", "إ": "ا", "ٱ": "ا"})


def _fallback_with_offsets(text: str) -> NormalisedLike:
    out: list[str] = []
    offs: list[int] = []
    for i, ch in enumerate(text):
        piece = unicodedata.normalize("NFKC", ch).casefold().translate(_FOLD)
        piece = "".join(
            c
            for c in unicodedata.normalize("NFD", piece)
            if not (unicodedata.category(c) == "Mn" and "LATIN" in unicodedata.name(ch, ""))
        )
        piece = unicodedata.normalize("NFC", piece)
        for c in piece:
            if c == "\u200c":
                prev = out[-1] if out else ""
                nxt = text[i + 1] if i + 1 < len(text) else ""
                if "\u0600" <= prev <= "\u06ff" and "\u0600" <= nxt <= "\u06ff":
                    c = " "
                else:
                    continue
            elif unicodedata.category(c) == "Cf" or "\u064b" <= c <= "\u065f" or c == "\u0640":
                continue
            if c.isspace():
                if not out or out[-1] == " ":
                    continue
                c = " "
            if c.isdigit() and unicodedata.category(c) == "Nd":
                c = str(unicodedata.digit(c))
            out.append(c)
            offs.append(i)
    while out and out[-1] == " ":
        out.pop()
        offs.pop()
    return _FallbackNormalised("".join(out), offs, len(text))


def _fallback_normalise(text: str) -> str:
    return _fallback_with_offsets(text).text


def normalise(text: str) -> str:
    """Normalise ``text`` with the one guardlex normaliser."""
    return _load_normaliser()[0](text)


def normalise_with_offsets(text: str) -> NormalisedLike:
    """Normalise ``text`` and keep the way back to the original offsets."""
    return _load_normaliser()[1](text)
