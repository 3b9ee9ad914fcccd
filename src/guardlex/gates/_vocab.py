"""The packs' lexicon vocabulary, normalised and compiled once for the gates.

Abbreviations (never end a sentence), unit words with their canonical unit, rate words
("per", "/", 每), polarity pairs and "unlimited" words come from ``lexicon.yaml`` of
every locale (see ``docs/packs.md``). Words are normalised here with the one
normaliser, so a pack may write them in natural orthography.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from guardlex.gates._text import TIMEOUT, normalise
from guardlex.gates.types import PacksLike


@dataclass(frozen=True)
class Polarity:
    """One polarity pair: normalised positive and negative forms."""

    positive: tuple[str, ...]
    negative: tuple[str, ...]


def _words(items: Any) -> list[str]:
    if not items:
        return []
    if isinstance(items, str):
        items = [items]
    out = []
    for item in items:
        norm = normalise(str(item))
        if norm:
            out.append(norm)
    return out


def _alternation(words: Iterable[str]) -> str:
    uniq = sorted(set(words), key=lambda w: (-len(w), w))
    return "|".join(regex.escape(w) for w in uniq)


def _bounded(word: str) -> str:
    """A literal with a word boundary on each side whose edge is a non-Han word character."""
    body = regex.escape(word)
    if regex.match(r"[^\W\p{Han}]", word[0]):
        body = r"(?<!\w)" + body
    if regex.match(r"[^\W\p{Han}]", word[-1]):
        body = body + r"(?!\w)"
    return body


def word_regex(words: Iterable[str]) -> regex.Pattern[str] | None:
    """Whole-word alternation over normalised text, longest form first.

    Han characters need no boundary (Chinese has no spaces), nor does a form that starts
    or ends with punctuation (``/``).
    """
    uniq = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    if not uniq:
        return None
    return regex.compile("|".join(_bounded(w) for w in uniq))


@dataclass(frozen=True)
class Vocab:
    """Lexicon vocabulary merged over the selected locales."""

    locales: tuple[str, ...]
    abbreviations: frozenset[str]
    units: Mapping[str, str]  # normalised surface word -> canonical unit
    per: tuple[str, ...]
    polarities: tuple[Polarity, ...]
    unlimited: tuple[str, ...]
    unit_re: regex.Pattern[str] | None
    per_re: regex.Pattern[str] | None
    unlimited_re: regex.Pattern[str] | None
    rate_tail_re: regex.Pattern[str] | None  # "per <unit>" right before a position
    polarity_re: regex.Pattern[str] | None  # every positive and negative form
    polarity_of: Mapping[str, tuple[tuple[int, str], ...]]  # form -> ((pair, "+"/"-"), ...)

    def unit_of(self, word: str) -> str | None:
        """Canonical unit of a normalised surface word."""
        return self.units.get(word)

    def is_abbreviation(self, candidates: Iterable[str]) -> bool:
        """Whether any normalised candidate (``"z. b."``, ``"dr."``) is a known abbreviation."""
        return any(c in self.abbreviations for c in candidates)


EMPTY = Vocab((), frozenset(), {}, ("/",), (), (), None, None, None, None, None, {})


def build(lexicons: Mapping[str, Mapping[str, Any]]) -> Vocab:
    """Compile the vocabulary of the given ``{locale: lexicon}`` mappings."""
    abbreviations: set[str] = set()
    units: dict[str, str] = {}
    per: list[str] = ["/"]
    polarities: list[Polarity] = []
    unlimited: list[str] = []
    for _, lex in sorted(lexicons.items()):
        for abbr in _words(lex.get("abbreviations")):
            abbreviations.add(abbr)
            abbreviations.add(abbr.replace(" ", ""))
        for canonical, surfaces in (lex.get("units") or {}).items():
            for surface in _words(surfaces):
                units.setdefault(surface, str(canonical))
            units.setdefault(normalise(str(canonical)), str(canonical))
        per.extend(_words(lex.get("per")))
        for pair in lex.get("negations") or []:
            if not isinstance(pair, Mapping):
                continue
            pos = tuple(_words(pair.get("positive")))
            neg = tuple(_words(pair.get("negative")))
            if pos or neg:
                polarities.append(Polarity(pos, neg))
        unlimited.extend(_words(lex.get("unlimited")))
    per_words = tuple(dict.fromkeys(per))
    polarity_of: dict[str, list[tuple[int, str]]] = {}
    for idx, pol in enumerate(polarities):
        for form in pol.positive:
            polarity_of.setdefault(form, []).append((idx, "+"))
        for form in pol.negative:
            polarity_of.setdefault(form, []).append((idx, "-"))
    rate_tail = None
    if units:
        rate_tail = regex.compile(
            r"(?:" + _alternation(w for w in per_words if w) + r")\s*"
            r"(?P<unit>" + _alternation(units) + r")\s*$"
        )
    return Vocab(
        locales=tuple(sorted(lexicons)),
        abbreviations=frozenset(abbreviations),
        units=units,
        per=per_words,
        polarities=tuple(polarities),
        unlimited=tuple(dict.fromkeys(unlimited)),
        unit_re=word_regex(units),
        per_re=word_regex(per_words),
        unlimited_re=word_regex(unlimited),
        rate_tail_re=rate_tail,
        polarity_re=word_regex(polarity_of),
        polarity_of={k: tuple(v) for k, v in polarity_of.items()},
    )


_LOCK = threading.Lock()
_CACHE: dict[tuple[int, tuple[str, ...]], tuple[PacksLike, Vocab]] = {}


def vocab_for(packs: PacksLike | None, locales: Sequence[str] | None = None) -> Vocab:
    """The vocabulary of ``packs`` (all its locales, or the given ones), cached per packs."""
    if packs is None:
        return EMPTY
    selected = tuple(sorted(locales if locales is not None else packs.locales))
    key = (id(packs), selected)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is packs:
            return hit[1]
    vocab = build({loc: packs.lexicon(loc) for loc in selected})
    with _LOCK:
        _CACHE[key] = (packs, vocab)
    return vocab


@functools.lru_cache(maxsize=1)
def default_packs() -> PacksLike:
    """The shipped packs, loaded once per process (``guardlex.load_packs()``)."""
    from guardlex import load_packs

    return load_packs()


def search(pattern: regex.Pattern[str] | None, text: str, pos: int = 0) -> Any:
    """``pattern.search`` with the gates' timeout; ``None`` for a missing pattern."""
    if pattern is None:
        return None
    return pattern.search(text, pos, timeout=TIMEOUT)
