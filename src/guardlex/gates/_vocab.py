"""The packs' lexicon vocabulary, normalised and compiled once for the gates.

Abbreviations (never end a sentence), unit words with their canonical unit, rate words
("per", "/", 每), polarity pairs and "unlimited" words come from ``lexicon.yaml`` of
every locale (see ``docs/packs.md``). Words are normalised here with the one
normaliser, so a pack may write them in natural orthography.
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
        text = str(item)
        # a form written with a ZWNJ (Persian می‌شود) is also met joined (میشود); the
        # normaliser turns the ZWNJ into a space, so both spellings are listed
        variants = [text, text.replace("\u200c", "")] if "\u200c" in text else [text]
        for variant in variants:
            norm = normalise(variant)
            if norm and norm not in out:
                out.append(norm)
    return out


def _edge(ch: str) -> bool:
    """Whether a word needs a boundary on this side: a non-Han word character."""
    return bool(regex.match(r"[^\W\p{Han}]", ch, timeout=TIMEOUT))


def word_regex(words: Iterable[str]) -> regex.Pattern[str] | None:
    """Whole-word matcher for a word list over normalised text, longest form first.

    Han characters need no boundary (Chinese has no spaces), nor does a form that starts
    or ends with punctuation (``/``). The lists are compiled as ``regex`` named lists
    (``\\L<name>``), so nothing needs escaping by hand. Used for the few forms with
    punctuation; plain words and Han go through ``PhraseMatcher``'s dictionaries.
    """
    groups: dict[tuple[bool, bool], list[str]] = {}
    for w in {w for w in words if w}:
        groups.setdefault((_edge(w[0]), _edge(w[-1])), []).append(w)
    if not groups:
        return None
    parts = []
    lists: dict[str, list[str]] = {}
    for i, ((left, right), items) in enumerate(sorted(groups.items())):
        name = f"w{i}"
        lists[name] = items
        parts.append((r"(?<!\w)" if left else "") + rf"\L<{name}>" + (r"(?!\w)" if right else ""))
    return regex.compile("|".join(parts), **lists)


_WORD = regex.compile(r"\w+")
_PLAIN_WORDS = regex.compile(r"[^\W\p{Han}]+(?: [^\W\p{Han}]+)*")
_HAN_ONLY = regex.compile(r"\p{Han}+")

#: A word occurrence in normalised text: (start, end, word).
Word = tuple[int, int, str]


class _WordChars(dict[int, int]):
    """A ``str.translate`` table that blanks every character outside ``\\w`` (letters,
    digits, marks, connector punctuation, ZWNJ/ZWJ), computed once per character."""

    def __missing__(self, code: int) -> int:
        ch = chr(code)
        keep = (
            ch.isalpha()
            or unicodedata.category(ch) in ("Nd", "Nl", "Mn", "Mc", "Me", "Pc")
            or ch in "\u200c\u200d"
        )
        self[code] = code if keep else 32
        return self[code]


_WORD_CHARS = _WordChars()


def words_of(text: str) -> list[Word]:
    """The ``\\w+`` runs of a text with their spans.

    No regex: a ``finditer`` with a timeout costs about a microsecond and a half per
    match, and this runs several times per checked sentence. Characters outside ``\\w``
    are blanked with one ``str.translate`` and the rest is split on spaces.

    >>> words_of("8 EUR/seat, 20 seats.")
    [(0, 1, '8'), (2, 5, 'EUR'), (6, 10, 'seat'), (12, 14, '20'), (15, 20, 'seats')]
    """
    flat = text.translate(_WORD_CHARS)
    out: list[Word] = []
    pos = 0
    for word in flat.split():
        start = flat.find(word, pos)
        pos = start + len(word)
        out.append((start, pos, word))
    return out


def runs(text: str, words: Sequence[Word]) -> list[int]:
    """``run[i]``: how many words after ``words[i]`` follow it at exactly one space each
    (the longest phrase that can start there)."""
    n = len(words)
    run = [0] * (n + 1)
    for i in range(n - 2, -1, -1):
        end = words[i][1]
        if words[i + 1][0] == end + 1 and text[end] == " ":
            run[i] = run[i + 1] + 1
    return run


class PhraseMatcher:
    """Find the phrases of a word list in normalised text, leftmost-longest, fast.

    Phrases of plain words ("not included") are looked up as word tuples, Han phrases
    ("不含税") as substrings of Han runs, both in dictionaries: one pass over the words of a
    sentence instead of a regex alternation of hundreds of phrases. The few phrases with
    punctuation ("p. ej.", "/") go through a small regex.
    """

    def __init__(self, phrases: Iterable[str], proclitics: Sequence[str] = ()) -> None:
        # conjunctions written onto the next word (Arabic و, ف): "وغير مشمول" is "غير مشمول"
        self.proclitics = tuple(p for p in proclitics if p)
        self.clitic_starts = frozenset(p[0] for p in self.proclitics)
        self.by_words: dict[tuple[str, ...], str] = {}
        self.han: dict[str, str] = {}
        other: list[str] = []
        for phrase in {p for p in phrases if p}:
            if _PLAIN_WORDS.fullmatch(phrase, timeout=TIMEOUT):
                self.by_words[tuple(phrase.split(" "))] = phrase
            elif _HAN_ONLY.fullmatch(phrase, timeout=TIMEOUT):
                self.han[phrase] = phrase
            else:
                other.append(phrase)
        self.max_words = max((len(k) for k in self.by_words), default=0)
        self.firsts = frozenset(k[0] for k in self.by_words)
        self.max_han = max((len(k) for k in self.han), default=0)
        self.other = word_regex(other)
        self.other_phrases = tuple(other)

    def find(
        self,
        text: str,
        words: Sequence[Word] | None = None,
        run: Sequence[int] | None = None,
    ) -> list[tuple[int, int, str]]:
        """Non-overlapping ``(start, end, phrase)`` matches, leftmost-longest.

        ``words`` (``words_of(text)``) and ``run`` (``runs(text, words)``) may be passed
        when several matchers scan the same text."""
        found: list[tuple[int, int, str]] = []
        if words is None:
            words = words_of(text)
        if self.by_words:
            n = len(words)
            if run is None:
                run = runs(text, words)
            i = 0
            while i < n:
                hit = 0
                first = words[i][2]
                skip = 0
                if first not in self.firsts and first[0] in self.clitic_starts:
                    for clitic in self.proclitics:
                        if first.startswith(clitic) and first[len(clitic) :] in self.firsts:
                            first, skip = first[len(clitic) :], len(clitic)
                            break
                if first in self.firsts:
                    for k in range(min(self.max_words, run[i] + 1), 0, -1):
                        key = (first, *(w for _, _, w in words[i + 1 : i + k]))
                        phrase = self.by_words.get(key)
                        if phrase is not None:
                            found.append((words[i][0] + skip, words[i + k - 1][1], phrase))
                            hit = k
                            break
                i += hit or 1
        if self.han and text and max(text) >= "\u3400":
            for start, _, word in words:
                if max(word) < "\u3400":
                    continue
                p = 0
                while p < len(word):
                    hit = 0
                    for size in range(min(self.max_han, len(word) - p), 0, -1):
                        phrase = self.han.get(word[p : p + size])
                        if phrase is not None:
                            found.append((start + p, start + p + size, phrase))
                            hit = size
                            break
                    p += hit or 1
        # a substring test first: a regex call with a timeout costs microseconds
        if self.other is not None and any(p in text for p in self.other_phrases):
            found.extend(
                (m.start(), m.end(), m.group()) for m in self.other.finditer(text, timeout=TIMEOUT)
            )
        if len(found) < 2:
            return found
        found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
        out: list[tuple[int, int, str]] = []
        end = -1
        for match in found:
            if match[0] >= end:
                out.append(match)
                end = match[1]
        return out


@dataclass(frozen=True)
class Vocab:
    """Lexicon vocabulary merged over the selected locales."""

    locales: tuple[str, ...]
    abbreviations: frozenset[str]  # never end a sentence, and those that may
    units: Mapping[str, str]  # normalised surface word -> canonical unit
    per: tuple[str, ...]
    polarities: tuple[Polarity, ...]
    unlimited: tuple[str, ...]
    polarity_of: Mapping[str, tuple[tuple[int, str], ...]]  # form -> ((pair, "+"/"-"), ...)
    unit_m: PhraseMatcher
    per_m: PhraseMatcher
    unlimited_m: PhraseMatcher
    polarity_m: PhraseMatcher
    #: abbreviations that may also end a sentence (``etc.``, Russian ``г.``): an end
    #: before a capital or an uncased letter, not before a lower-case letter or a digit
    final_abbreviations: frozenset[str] = frozenset()
    #: words after which a one- or two-digit number with a dot is an ordinal (German
    #: "2. Mai"), not a sentence end
    ordinal_nouns: frozenset[str] = frozenset()
    #: words saying a slot has no number because it does not apply ("not applicable")
    not_applicable: tuple[str, ...] = ()
    not_applicable_m: PhraseMatcher = field(default_factory=lambda: PhraseMatcher(()))
    #: number words read as values (normalised word -> digits: "twenty" -> "20")
    number_words: Mapping[str, str] = field(default_factory=dict)
    #: a positional numeral system written with characters (Chinese): digit characters,
    #: multiplier characters (十 百 千 万 亿) and decimal points (点)
    numeral_digits: Mapping[str, int] = field(default_factory=dict)
    numeral_multipliers: Mapping[str, int] = field(default_factory=dict)
    numeral_points: frozenset[str] = frozenset()
    #: currency signs, codes and words (normalised) -> ISO code
    currency_of: Mapping[str, str] = field(default_factory=dict)

    def no_number(self, norm: str) -> bool:
        """Whether normalised text says its slot has no number: an "unlimited" or a "not
        applicable" word ("unlimited seats", "n/a", "不适用")."""
        return bool(self.unlimited_m.find(norm) or self.not_applicable_m.find(norm))

    def unit_of(self, word: str) -> str | None:
        """Canonical unit of a normalised surface word."""
        return self.units.get(word)

    def is_abbreviation(self, candidates: Iterable[str]) -> bool:
        """Whether any normalised candidate (``"z. b."``, ``"dr."``) is a known abbreviation
        (of either kind)."""
        return any(c in self.abbreviations for c in candidates)

    def abbreviation_kind(self, candidates: Iterable[str]) -> str | None:
        """``"never"`` when a candidate is an abbreviation that never ends a sentence
        (``dr.``, ``z. b.``), ``"final"`` when it is one that may (``etc.``, ``г.``), else
        ``None``. The longest candidate decides (``и т. д.`` before ``д.``)."""
        kind = None
        for c in candidates:
            if c in self.abbreviations:
                kind = "final" if c in self.final_abbreviations else "never"
        return kind

    def is_ordinal_noun(self, word: str) -> bool:
        """Whether a normalised word follows an ordinal number with a dot (``mai``)."""
        return word in self.ordinal_nouns


EMPTY = Vocab(
    (),
    frozenset(),
    {},
    ("/",),
    (),
    (),
    {},
    PhraseMatcher(()),
    PhraseMatcher(("/",)),
    PhraseMatcher(()),
    PhraseMatcher(()),
)


def build(lexicons: Mapping[str, Mapping[str, Any]]) -> Vocab:
    """Compile the vocabulary of the given ``{locale: lexicon}`` mappings."""
    abbreviations: set[str] = set()
    final_abbreviations: set[str] = set()
    ordinal_nouns: set[str] = set()
    not_applicable: list[str] = []
    number_words: dict[str, str] = {}
    numeral_digits: dict[str, int] = {}
    mults: dict[str, int] = {}
    numeral_points: set[str] = set()
    currency_of: dict[str, str] = {}
    units: dict[str, str] = {}
    per: list[str] = ["/"]
    polarities: list[Polarity] = []
    unlimited: list[str] = []
    proclitics: list[str] = []
    for _, lex in sorted(lexicons.items()):
        proclitics.extend(_words(lex.get("proclitics")))
        for abbr in _words(lex.get("abbreviations")):
            abbreviations.add(abbr)
            abbreviations.add(abbr.replace(" ", ""))
        for abbr in _words(lex.get("final_abbreviations")):
            for form in (abbr, abbr.replace(" ", "")):
                abbreviations.add(form)
                final_abbreviations.add(form)
        ordinal_nouns.update(_words(lex.get("ordinal_nouns")))
        not_applicable.extend(_words(lex.get("not_applicable")))
        for digits, words in (lex.get("number_words") or {}).items():
            for word in _words(words):
                number_words.setdefault(word, str(digits))
        for table, into in (("numeral_digits", numeral_digits), ("numeral_multipliers", mults)):
            for digits, chars in (lex.get(table) or {}).items():
                for ch in _words(chars):
                    into.setdefault(ch, int(digits))
        numeral_points.update(_words(lex.get("numeral_point")))
        for code, words in (lex.get("currencies") or {}).items():
            for word in _words(words):
                currency_of.setdefault(word, str(code))
    never = {a for a in abbreviations if a not in final_abbreviations}
    for _, lex in lexicons.items():
        for abbr in _words(lex.get("abbreviations")):
            never.update((abbr, abbr.replace(" ", "")))
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
    return Vocab(
        locales=tuple(sorted(lexicons)),
        abbreviations=frozenset(abbreviations),
        units=units,
        per=per_words,
        polarities=tuple(polarities),
        unlimited=tuple(dict.fromkeys(unlimited)),
        polarity_of={k: tuple(v) for k, v in polarity_of.items()},
        unit_m=PhraseMatcher(units, proclitics),
        per_m=PhraseMatcher(per_words, proclitics),
        unlimited_m=PhraseMatcher(unlimited, proclitics),
        polarity_m=PhraseMatcher(polarity_of, proclitics),
        # one that some locale says never ends a sentence (a title: Spanish "sr.") never does
        final_abbreviations=frozenset(final_abbreviations - never),
        ordinal_nouns=frozenset(ordinal_nouns),
        not_applicable=tuple(dict.fromkeys(not_applicable)),
        not_applicable_m=PhraseMatcher(not_applicable, proclitics),
        number_words=number_words,
        numeral_digits=numeral_digits,
        numeral_multipliers=mults,
        numeral_points=frozenset(numeral_points),
        currency_of=currency_of,
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
