"""Shared pieces of the faithfulness gate: size limits, packs and stopwords, evidence
items, name mentions and the comparable form of an extracted value."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import regex

from guardlex.errors import InputTooLargeError
from guardlex.gates._text import (
    _GROUPING,
    TIMEOUT,
    check_size,
    normalise,
    number_readings,
)
from guardlex.gates._vocab import (
    default_packs,
)
from guardlex.gates.types import (
    Evidence,
    PacksLike,
)
from guardlex.normalise import is_han

#: Size limits (characters) for one answer and for all quotes or evidence together.
MAX_ANSWER_CHARS = 100_000
MAX_EVIDENCE_CHARS = 5_000_000
#: Limits: quotes per audit, subject names, computed values, characters of a field name,
#: a subject name or a formula.
MAX_QUOTES = 10_000
MAX_SUBJECTS = 1_000
MAX_COMPUTED = 1_000
MAX_NAME_CHARS = 1_000

#: The canonical value an extracted "unlimited" fact carries.
UNLIMITED = "unlimited"


def _is_han(ch: str) -> bool:
    return (
        "\u3400" <= ch <= "\u9fff"
        or "\uf900" <= ch <= "\ufaff"
        or "\U00020000" <= ch <= "\U0003134f"
    )


def _has_han(word: str) -> bool:
    # max() runs in C: most words have no character at or above the CJK blocks
    return bool(word) and max(word) >= "\u3400" and any(_is_han(ch) for ch in word)


def _packs(packs: PacksLike | None) -> PacksLike | None:
    if packs is not None:
        return packs
    return default_packs()


_STOP_CACHE: dict[tuple[int, tuple[str, ...] | None], tuple[Any, frozenset[str]]] = {}


def _stopwords(packs: PacksLike | None, locales: Sequence[str] | None) -> frozenset[str]:
    """The packs' stopwords (already normalised by the packs), cached per packs object."""
    getter = getattr(packs, "stopwords", None)
    if packs is None or getter is None:
        return frozenset()
    key = (id(packs), None if locales is None else tuple(locales))
    hit = _STOP_CACHE.get(key)
    if hit is not None and hit[0] is packs:
        return hit[1]
    out: set[str] = set()
    for loc in locales if locales is not None else packs.locales:
        try:
            out.update(getter(loc))
        except LookupError:  # a pack without stopwords contributes none
            continue
    words = frozenset(out)
    _STOP_CACHE[key] = (packs, words)
    return words


def mentions(norm: str, name: str) -> list[int]:
    """Where a normalised name occurs in normalised text as whole words (Han: anywhere).

    A plain substring search checked at both ends, not a pattern built from ``name``: the
    name is caller data of up to thousands of characters, and compiling it as a regular
    expression cost seconds to minutes. Same results as ``finditer`` of
    ``(?<!\\w)name(?!\\w)``: leftmost, non-overlapping, ``\\w`` as ``regex`` reads it.
    """
    if not name:
        return []
    anywhere = is_han(name[0])
    out: list[int] = []
    i = norm.find(name)
    while i >= 0:
        end = i + len(name)
        if anywhere or (not _is_word(norm[i - 1 : i]) and not _is_word(norm[end : end + 1])):
            out.append(i)
            i = norm.find(name, end)
        else:
            i = norm.find(name, i + 1)
    return out


_WORD_CHAR = regex.compile(r"\w")


def _is_word(ch: str) -> bool:
    """``ch`` (one character or empty) is a word character for ``\\w``."""
    return bool(ch) and _WORD_CHAR.match(ch, timeout=TIMEOUT) is not None


def _value_tokens(value: Any) -> list[frozenset[str]] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, Fraction)):
        return [frozenset({str(value)})]
    if isinstance(value, float):
        text = repr(value)
        return number_readings(text[:-2] if text.endswith(".0") else text)
    norm = normalise(str(value)).translate(_GROUPING) if isinstance(value, str) else ""
    if regex.fullmatch(r"\d+(?:[.,]\d+)*", norm, timeout=TIMEOUT):
        return number_readings(norm)
    return None


def documents_of(documents: Any) -> list[Evidence]:
    """Evidence items from ``Evidence`` values or mappings; a str, None or a single
    mapping is a ``TypeError`` (pass a list), and the text is size-limited."""
    if (
        documents is None
        or isinstance(documents, (str, bytes, Mapping, Evidence))
        or not hasattr(documents, "__iter__")
    ):
        raise TypeError(
            "documents must be a list of evidence items {doc, text, ...}, "
            f"not {type(documents).__name__}"
        )
    items = list(documents)
    if len(items) > MAX_QUOTES:
        raise InputTooLargeError(f"documents has {len(items)} items; the limit is {MAX_QUOTES}.")
    docs = [d if isinstance(d, Evidence) else Evidence.from_mapping(d) for d in items]
    check_size(sum(len(d.text) for d in docs), MAX_EVIDENCE_CHARS, "the evidence")
    return docs


def _token_char(ch: str) -> bool:
    """A character that continues a token: a letter, digit or mark outside Han (Chinese
    has no word boundaries, so a Han neighbour never joins a token)."""
    return (ch.isalnum() or unicodedata.category(ch)[0] == "M") and not _is_han(ch)


def quoted(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` exactly and starts and ends at token
    boundaries there: "5 users" is not quoted by "25 users", nor "20 sea" by "20 seats"."""
    if not quote:
        return False
    first, last = quote[0], quote[-1]
    check_left, check_right = _token_char(first), _token_char(last)
    pos = text.find(quote)
    while pos != -1:
        end = pos + len(quote)
        left_ok = not check_left or pos == 0 or not _token_char(text[pos - 1])
        right_ok = not check_right or end == len(text) or not _token_char(text[end])
        if left_ok and right_ok:
            return True
        pos = text.find(quote, pos + 1)
    return False
