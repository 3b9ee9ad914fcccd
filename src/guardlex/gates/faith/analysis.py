"""Analysis of a text into sentences, clauses, numbers with their units, polarity words
and "unlimited" words: what every check of the faithfulness gate reads."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex

from guardlex.gates._text import (
    TIMEOUT,
    Value,
    normalise,
    values,
)
from guardlex.gates._vocab import (
    Vocab,
    runs,
    words_of,
)
from guardlex.gates.faith.common import _has_han, _is_han
from guardlex.gates.faith.money import _letter, _money_at, _money_before, _skip_space, _skip_token
from guardlex.gates.numerals import is_word_number, with_numerals
from guardlex.gates.segment import split_sentences

_CLAUSE_BREAK = regex.compile(r"[;!?。，；！？、،؛\n]|[.,](?!\d)|(?<!\d)[.,]")
_WORD = regex.compile(r"\w+")


# ------------------------------------------------------------------------------------
# Analysis of a text into clauses, numbers with their units, polarity and unlimited words


@dataclass(frozen=True)
class _Polar:
    pair: int
    sign: str  # "+" or "-"
    form: str
    # what the polarity word is said of: the distinctive words of its clause with only
    # its own form masked ("support" in "support is not included", although "support"
    # is itself a form of another pair); the sentence's words when the clause has none
    about: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Clause:
    text: str
    content: frozenset[str]
    polar: tuple[_Polar, ...]
    unlimited: tuple[str, ...]
    units: frozenset[str]


@dataclass(frozen=True)
class _Number:
    value: Value
    units: frozenset[str]  # units attached to the number ("8 per seat per month")
    rate: frozenset[str]  # the attached units introduced by a rate word (seat, month)
    context: frozenset[str]  # attached units plus every unit named in its clause
    clause: int
    sentence: int
    money: bool = False  # a currency sign or word next to it ("8 EUR", "$8", "500 هزار تومان")
    currency: str | None = None  # its ISO code when the lexicons know it ("EUR" for €, euros)


@dataclass(frozen=True)
class Analysis:
    """One text, analysed once: normalised sentences, clauses and numbers."""

    sentences: tuple[str, ...]  # normalised
    clauses: tuple[_Clause, ...]
    numbers: tuple[_Number, ...]
    keys: frozenset[str]  # number readings present anywhere
    sentence_content: tuple[frozenset[str], ...] = ()  # distinctive words per sentence


def _content(words: Iterable[str], vocab: Vocab, stop: frozenset[str]) -> frozenset[str]:
    """Distinctive words of a clause: no digits, stopwords or unit words; Han runs as
    character bigrams (Chinese has no spaces to split on). Rate words stay: German "pro"
    is also the plan name "Pro"."""
    out: set[str] = set()
    for word in words:
        if word.isdigit():
            continue
        if _has_han(word):
            piece = ""
            for ch in word + " ":
                if _is_han(ch):
                    piece += ch
                    continue
                if len(piece) == 1:
                    out.add(piece)
                out.update(piece[i : i + 2] for i in range(len(piece) - 1))
                piece = ""
            word = "".join(" " if _is_han(ch) else ch for ch in word)
        for part in word.split():
            if len(part) >= 2 and not part.isdigit():
                out.add(part)
    return frozenset(w for w in out if w not in stop and w not in vocab.units)


@dataclass
class _Scan:
    """One normalised sentence with every vocabulary match found in one pass each."""

    norm: str
    per_at: dict[int, int]  # start -> end of a rate word ("per", "/", 每)
    per_to: dict[int, int]  # end -> start
    unit_at: dict[int, tuple[int, str]]  # start -> (end, canonical unit)
    unit_to: dict[int, tuple[int, str]]  # end -> (start, canonical unit)


def _chain_units(scan: _Scan, start: int, end: int) -> tuple[frozenset[str], frozenset[str], bool]:
    """Units attached to the number at ``start:end`` ("20 seats", "8 EUR per seat per month",
    "8 元/席位/月", a rate right before it: "每席位每月 8 元"), which of them are rates,
    and whether money is named next to it (currency words are skipped, not units)."""
    norm = scan.norm
    units: set[str] = set()
    rate: set[str] = set()
    pos = end
    skipped = False
    after_per = False
    money = _money_before(norm, start)
    while pos < len(norm):
        p = _skip_space(norm, pos)
        if not units and p not in scan.unit_at:
            nxt = _money_at(norm, p)
            if nxt > p:
                money = True
                pos = nxt
                continue
        if p in scan.unit_at and (p not in scan.per_at or scan.unit_at[p][0] >= scan.per_at[p]):
            # a unit, or one that starts with its rate word (Spanish "por hora", 每月)
            u_end, unit = scan.unit_at[p]
            units.add(unit)
            if after_per or p in scan.per_at:
                rate.add(unit)
            pos, after_per = u_end, False
            continue
        if p in scan.per_at:
            pos = scan.per_at[p]
            after_per = True
            continue
        if not units and not skipped:
            nxt = _skip_token(norm, p)
            if nxt > p:
                skipped = True
                pos = nxt
                continue
        break
    q = start
    while q > 0:
        q2 = q
        while q2 > 0 and norm[q2 - 1].isspace():
            q2 -= 1
        if q2 not in scan.unit_to:
            break
        u_start, unit = scan.unit_to[q2]
        if u_start in scan.per_at:  # a unit that starts with its rate word: 每月
            units.add(unit)
            rate.add(unit)
            q = u_start
            continue
        p2 = u_start
        while p2 > 0 and norm[p2 - 1].isspace():
            p2 -= 1
        if p2 not in scan.per_to:
            break
        units.add(unit)
        rate.add(unit)
        q = scan.per_to[p2]
    return frozenset(units), frozenset(rate), money


def _clauses(norm: str, found: Sequence[Value]) -> list[tuple[int, int]]:
    """Clause spans of normalised text; dots and commas inside numbers, URLs and addresses
    do not break a clause."""
    masked = _mask(norm, ((v.start, v.end) for v in found if v.kind != "number"))
    spans = []
    start = 0
    for m in _CLAUSE_BREAK.finditer(masked, timeout=TIMEOUT):
        a, b = m.span()
        if a > start:
            spans.append((start, a))
        start = b
    if start < len(norm):
        spans.append((start, len(norm)))
    return [(a, b) for a, b in spans if norm[a:b].strip()]


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with the given spans blanked out (same length, so offsets still hold)."""
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def _predicates(
    norm: str, polar_m: list[tuple[int, int, str]], vocab: Vocab, stop: frozenset[str]
) -> list[tuple[int, int, str]]:
    """Polarity matches without those that are the subject of the next one: in "Support
    is not included" / "技术支持不包含在内" the noun "support" (a form of "supported") is
    what "not included" is said of. A match counts as a subject when a match of another
    pair follows it with only stopwords between (one short word when no stopwords are
    known)."""
    if len(polar_m) < 2:
        return polar_m
    out = []
    for (a, b, form), nxt in zip(polar_m, [*polar_m[1:], None], strict=True):
        if nxt is not None:
            pairs = {pair for pair, _ in vocab.polarity_of.get(form, ())}
            next_pairs = {pair for pair, _ in vocab.polarity_of.get(nxt[2], ())}
            between = norm[b : nxt[0]]
            words = _WORD.findall(between, timeout=TIMEOUT)
            plain = all(ch.isspace() or ch.isalnum() or ch in "'’" for ch in between)
            if (
                plain
                and not pairs & next_pairs
                and len(words) <= 3
                and (all(w in stop for w in words) if stop else len(words) <= 1)
            ):
                continue
        out.append((a, b, form))
    return out


def _words(text: str) -> list[str]:
    return [w for _, _, w in words_of(text)]


def _about(
    bare: str,
    start: int,
    end: int,
    a: int,
    b: int,
    vocab: Vocab,
    stop: frozenset[str],
    cache: dict[tuple[int, int], frozenset[str]],
) -> frozenset[str]:
    """What the polarity word at ``start:end`` is said of: the distinctive words of its
    clause ``a:b`` with only its own span blanked (Han runs have no spaces to split on),
    or of its whole sentence when the clause has none ("It is, however, not included")."""
    own = bare[:start] + " " * (end - start) + bare[end:]
    mine = _content(_words(own[a:b]), vocab, stop)
    if mine:
        return mine
    key = (start, end)
    if key not in cache:
        cache[key] = _content(_words(own), vocab, stop)
    return cache[key]


def analyse(
    text: str,
    vocab: Vocab,
    stop: frozenset[str] = frozenset(),
    *,
    sentences: bool = True,
    prepared: tuple[str, list[Value]] | None = None,
    evidence: bool = False,
) -> Analysis:
    """Analyse a text (an answer or a quote) into clauses and numbers with units.

    A number word or a one-character Chinese numeral is a number of an answer only where
    a unit or money follows it ("twenty seats"); in ``evidence`` it always is ("a team of
    twelve" supports "12 people").

    Each vocabulary pattern runs once per sentence (a regex call with a timeout costs
    microseconds); clauses and unit chains are then worked out from the match positions.
    """
    raw_sentences = split_sentences(text, vocab.is_abbreviation) if sentences else [text]
    norm_sentences: list[str] = []
    clauses: list[_Clause] = []
    numbers: list[_Number] = []
    keys: set[str] = set()
    sentence_content: list[frozenset[str]] = []
    for s_idx, raw in enumerate(raw_sentences):
        first_clause = len(clauses)
        # the sentence gate has normalised the sentence and found its values already
        norm = prepared[0] if prepared is not None and not sentences else normalise(raw)
        norm_sentences.append(norm)
        found = (
            prepared[1]
            if prepared is not None and not sentences
            else values(norm, skip_enumerator=True)
        )
        # numerals and number words: one Han character (五) or a word (twenty) only
        # counts where a unit or money follows it (below)
        found = with_numerals(norm, found, vocab, min_han=1, words=True)
        all_words = words_of(norm)
        run = runs(norm, all_words)
        polar_m = _predicates(norm, vocab.polarity_m.find(norm, all_words, run), vocab, stop)
        unlimited_m = vocab.unlimited_m.find(norm, all_words, run)
        na_m = vocab.not_applicable_m.find(norm, all_words, run) if vocab.not_applicable else []
        unit_m = [
            (a, b, vocab.unit_of(w) or w) for a, b, w in vocab.unit_m.find(norm, all_words, run)
        ]
        per_m = vocab.per_m.find(norm, all_words, run)
        scan = _Scan(
            norm,
            per_at={a: b for a, b, _ in per_m},
            per_to={b: a for a, b, _ in per_m},
            unit_at={a: (b, u) for a, b, u in unit_m},
            unit_to={b: (a, u) for a, b, u in unit_m},
        )
        masked_spans = [(a, b) for a, b, _ in polar_m + unlimited_m]
        masked = _mask(norm, masked_spans) if masked_spans else norm
        words = [(a, w) for a, _, w in (words_of(masked) if masked_spans else all_words)]
        # every word except "unlimited" forms: a polarity form of one pair can be the
        # subject of another ("Support is not included": support / not included)
        bare = _mask(norm, [(a, b) for a, b, _ in unlimited_m]) if unlimited_m else norm
        sent_about: dict[tuple[int, int], frozenset[str]] = {}
        for a, b in _clauses(norm, found):

            def inside(pos: int, a: int = a, b: int = b) -> bool:
                return a <= pos < b

            clause = _Clause(
                text=norm[a:b],
                content=_content((w for pos, w in words if inside(pos)), vocab, stop),
                polar=tuple(
                    _Polar(
                        pair, sign, form, _about(bare, start, end, a, b, vocab, stop, sent_about)
                    )
                    for start, end, form in polar_m
                    if inside(start)
                    for pair, sign in vocab.polarity_of.get(form, ())
                ),
                unlimited=tuple(form for start, _, form in unlimited_m if inside(start))
                + tuple(form for start, _, form in na_m if inside(start)),
                units=frozenset(u for start, _, u in unit_m if inside(start)),
            )
            clauses.append(clause)
            c_idx = len(clauses) - 1
            for v in found:
                if v.kind == "number" and inside(v.start):
                    attached, rate, money = _chain_units(scan, v.start, v.end)
                    if not (attached or money or evidence) and _weak(v):
                        continue
                    numbers.append(
                        _Number(
                            v,
                            attached,
                            rate,
                            attached | clause.units,
                            c_idx,
                            s_idx,
                            money,
                            _currency(norm, v.start, v.end, vocab) if money else None,
                        )
                    )
                    keys.update(v.keys)
        sentence_content.append(frozenset().union(*(c.content for c in clauses[first_clause:])))
    return Analysis(
        tuple(norm_sentences),
        tuple(clauses),
        tuple(numbers),
        frozenset(keys),
        tuple(sentence_content),
    )


def _currency(norm: str, start: int, end: int, vocab: Vocab) -> str | None:
    """The ISO code of the currency right after or right before a number ("8 EUR",
    "€ 8", "R$ 49", "8 元", "900 руб."), when the lexicons list it."""
    table = vocab.currency_of
    if not table:
        return None
    p = end
    while p < len(norm) and norm[p].isspace():
        p += 1
    q = p
    while q < len(norm) and (_letter(norm[q]) or norm[q] in "$."):
        q += 1
    for cut in (q, q - 1):
        if cut > p and norm[p:cut] in table:
            return table[norm[p:cut]]
    if p < len(norm):
        for size in (3, 2, 1):
            if norm[p : p + size] in table:
                return table[norm[p : p + size]]
    b = start
    while b > 0 and norm[b - 1].isspace():
        b -= 1
    a = b
    while a > 0 and (_letter(norm[a - 1]) or unicodedata.category(norm[a - 1]) == "Sc"):
        a -= 1
    word = norm[a:b]
    return table.get(word) or (table.get(word[-1:]) if word else None)


def _weak(v: Value) -> bool:
    """A number word (twenty) or a Chinese numeral of one character (五): a value only
    where a unit or money follows it ("twenty seats", "五个席位")."""
    return is_word_number(v) and (len(v.text) == 1 or not _has_han(v.text))


def _merge(analyses: Sequence[Analysis]) -> Analysis:
    if len(analyses) == 1:
        return analyses[0]
    sentences: list[str] = []
    clauses: list[_Clause] = []
    numbers: list[_Number] = []
    keys: set[str] = set()
    content: list[frozenset[str]] = []
    for a in analyses:
        s_off, c_off = len(sentences), len(clauses)
        sentences.extend(a.sentences)
        content.extend(a.sentence_content)
        clauses.extend(a.clauses)
        numbers.extend(
            _Number(
                n.value,
                n.units,
                n.rate,
                n.context,
                n.clause + c_off,
                n.sentence + s_off,
                n.money,
                n.currency,
            )
            for n in a.numbers
        )
        keys.update(a.keys)
    return Analysis(
        tuple(sentences), tuple(clauses), tuple(numbers), frozenset(keys), tuple(content)
    )
