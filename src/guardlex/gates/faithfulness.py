"""The faithfulness gate: fields and answers checked against the exact quotes they rest on.

Three functions, each a comparison of strings:

* ``accept`` admits one extracted field only if its quote is an exact substring of the
  evidence, its value occurs in the quote as a whole token, and its subject (product,
  plan, person) occurs in the same quote;
* ``audit`` lists what an answer says that its quotes do not: a number that is in no
  quote, a number whose unit changed (8 per seat per month is not 8 per person per day),
  a flipped polarity ("not included" / "included"), an "unlimited" turned into a number,
  a number attached to another subject, and computed numbers whose formula inputs are
  not quoted;
* ``resolve`` answers one field from the documents in force, and says CONFLICT instead
  of choosing when they disagree.

Unit words, rate words ("per", "/", 每), polarity pairs and "unlimited" words come from
the packs' ``lexicon.yaml`` of every locale. The checks are deliberately narrow: they
catch the high-risk rewrites of numbers, units, negations and subjects; a paraphrase the
vocabulary does not know passes them, it is not judged.
"""

from __future__ import annotations

import functools
import operator
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from fractions import Fraction
from typing import Any

import regex

from guardlex.errors import InputTooLargeError
from guardlex.gates._text import (
    TIMEOUT,
    Value,
    check_size,
    normalise,
    number_readings,
    require_str,
    require_texts,
    values,
)
from guardlex.gates._vocab import (
    PhraseMatcher,
    Vocab,
    default_packs,
    runs,
    vocab_for,
    words_of,
)
from guardlex.gates.errors import FormulaError
from guardlex.gates.segment import split_sentences
from guardlex.gates.types import (
    CONFLICT,
    EMPTY_QUOTE,
    FORMULA_INPUT_NOT_IN_QUOTE,
    FORMULA_MISMATCH,
    HIT_BUT_UNANSWERABLE,
    NO_HIT,
    NUMBER_NOT_IN_QUOTE,
    OK,
    POLARITY_FLIP,
    QUOTE_NOT_IN_EVIDENCE,
    SUBJECT_MISMATCH,
    SUBJECT_NOT_IN_QUOTE,
    UNIT_MISMATCH,
    UNLIMITED_AS_NUMBER,
    VALUE_NOT_IN_QUOTE,
    Evidence,
    Fact,
    FieldResult,
    PacksLike,
    Resolution,
    Violation,
)

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

_CLAUSE_BREAK = regex.compile(r"[;!?。，；！？、\n]|[.,](?!\d)|(?<!\d)[.,]")
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


def _is_han(ch: str) -> bool:
    return (
        "\u3400" <= ch <= "\u9fff"
        or "\uf900" <= ch <= "\ufaff"
        or "\U00020000" <= ch <= "\U0003134f"
    )


def _has_han(word: str) -> bool:
    # max() runs in C: most words have no character at or above the CJK blocks
    return bool(word) and max(word) >= "\u3400" and any(_is_han(ch) for ch in word)


@dataclass
class _Scan:
    """One normalised sentence with every vocabulary match found in one pass each."""

    norm: str
    per_at: dict[int, int]  # start -> end of a rate word ("per", "/", 每)
    per_to: dict[int, int]  # end -> start
    unit_at: dict[int, tuple[int, str]]  # start -> (end, canonical unit)
    unit_to: dict[int, tuple[int, str]]  # end -> (start, canonical unit)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and (text[pos].isspace() or text[pos] == "-"):
        pos += 1
    return pos


#: Currency and magnitude words read as the money unit next to a number, not as a noun
#: ("8 EUR per seat", "900 руб. в месяц", "500 هزار تومان"); currency signs (Unicode
#: category Sc: € $ ¥ ₹ ₽ ﷼) count too. Matched after normalisation (lower case, no accents).
MONEY_WORDS = tuple(
    [
        "eur",
        "euro",
        "euros",
        "usd",
        "dollar",
        "dollars",
        "dolar",
        "dolares",
        "dolares",
        "gbp",
        "chf",
        "jpy",
        "cny",
        "rmb",
        "inr",
        "rs",
        "rupee",
        "rupees",
        "rub",
        "brl",
        "real",
        "reais",
        "sar",
        "aed",
        "egp",
        "irr",
        "irt",
        "toman",
        "tomans",
        "rial",
        "k",
        "mil",
        "mille",
        "thousand",
        "million",
        "tausend",
        "mio",
        "tsd.",
        "руб",
        "руб.",
        "рубль",
        "рубля",
        "рублей",
        "р.",
        "тыс",
        "тыс.",
        "млн",
        "млн.",
        "долл",
        "долл.",
        "доллар",
        "доллара",
        "долларов",
        "евро",
        "تومان",
        "ریال",
        "ريال",
        "درهم",
        "دینار",
        "دينار",
        "جنيه",
        "دولار",
        "یورو",
        "يورو",
        "هزار",
        "میلیون",
        "ألف",
        "الف",
        "مليون",
        "रुपये",
        "रुपए",
        "रुपया",
        "रु",
        "रु.",
        "हज़ार",
        "हजार",
        "लाख",
        "करोड़",
        "元",
        "块",
        "人民币",
        "美元",
        "欧元",
        "万",
        "千",
        "万元",
        "千元",
    ]
)


@functools.cache
def _money_words() -> frozenset[str]:
    out: set[str] = set()
    for word in MONEY_WORDS:
        out.add(word)
        out.add(normalise(word))
    return frozenset(out)


def _money_at(text: str, pos: int) -> int:
    """End of a currency sign or money word at ``pos`` (with an abbreviation's dot), or
    ``pos``."""
    if pos >= len(text):
        return pos
    ch = text[pos]
    if unicodedata.category(ch) == "Sc":
        return pos + 1
    money = _money_words()
    if _is_han(ch):
        for size in (3, 2, 1):
            if text[pos : pos + size] in money:
                return pos + size
        return pos
    end = pos
    while end < len(text) and text[end].isalpha() and not _is_han(text[end]):
        end += 1
    if end == pos:
        return pos
    if end < len(text) and text[end] == "." and text[pos : end + 1] in money:
        return end + 1
    return end if text[pos:end] in money else pos


def _money_before(text: str, start: int) -> bool:
    """A currency sign or code right before a number: "$8", "R$ 49", "€ 8", "EUR 8"."""
    q = start
    while q > 0 and text[q - 1].isspace():
        q -= 1
    if q == 0:
        return False
    if unicodedata.category(text[q - 1]) == "Sc":
        return True
    b = q
    while b > 0 and text[b - 1].isalpha() and not _is_han(text[b - 1]):
        b -= 1
    return b < q and text[b:q] in _money_words()


def _skip_token(text: str, pos: int) -> int:
    """End of one skippable token at ``pos`` (a currency, a classifier 个, a word), or ``pos``."""
    if pos >= len(text):
        return pos
    ch = text[pos]
    if _is_han(ch) or ch == "%" or unicodedata.category(ch) == "Sc":
        return pos + 1
    end = pos
    while end < len(text) and text[end].isalpha() and not _is_han(text[end]):
        end += 1
    return end


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
        if p in scan.per_at:
            pos = scan.per_at[p]
            after_per = True
            continue
        if p in scan.unit_at:
            pos, unit = scan.unit_at[p]
            units.add(unit)
            if after_per:
                rate.add(unit)
            after_per = False
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
) -> Analysis:
    """Analyse a text (an answer or a quote) into clauses and numbers with units.

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
        all_words = words_of(norm)
        run = runs(norm, all_words)
        polar_m = _predicates(norm, vocab.polarity_m.find(norm, all_words, run), vocab, stop)
        unlimited_m = vocab.unlimited_m.find(norm, all_words, run)
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
                unlimited=tuple(form for start, _, form in unlimited_m if inside(start)),
                units=frozenset(u for start, _, u in unit_m if inside(start)),
            )
            clauses.append(clause)
            c_idx = len(clauses) - 1
            for v in found:
                if v.kind == "number" and inside(v.start):
                    attached, rate, money = _chain_units(scan, v.start, v.end)
                    numbers.append(
                        _Number(v, attached, rate, attached | clause.units, c_idx, s_idx, money)
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
            )
            for n in a.numbers
        )
        keys.update(a.keys)
    return Analysis(
        tuple(sentences), tuple(clauses), tuple(numbers), frozenset(keys), tuple(content)
    )


# ------------------------------------------------------------------------------------
# Checks


def _overlap(a: frozenset[str], b: frozenset[str], common: frozenset[str]) -> int:
    return len((a & b) - common)


@dataclass
class _Index:
    """Lookups over the evidence, built once per set of quotes (the gate reuses them)."""

    evidence: Analysis
    by_pair: dict[int, list[tuple[_Clause, _Polar]]]
    common_by_pair: dict[int, frozenset[str]]
    known_words: frozenset[str]
    unlimited: list[_Clause]
    numbers_by_key: dict[str, list[_Number]]
    numbered_by_unit: dict[str, list[_Clause]]
    numbers_by_unit: dict[str, list[_Number]]
    claims: dict[tuple[frozenset[str], frozenset[str]], _Claim | bool] = field(default_factory=dict)
    unit_groups: dict[frozenset[str], tuple[Any, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, evidence: Analysis) -> _Index:
        by_pair: dict[int, list[tuple[_Clause, _Polar]]] = {}
        known: set[str] = set()
        for clause in evidence.clauses:
            known |= clause.content
            for p in clause.polar:
                known |= p.about
                by_pair.setdefault(p.pair, []).append((clause, p))
        common_by_pair = {}
        for pair, occurrences in by_pair.items():
            common_by_pair[pair] = (
                frozenset.intersection(*(p.about for _, p in occurrences))
                if len(occurrences) > 1
                else frozenset()
            )
        numbers_by_key: dict[str, list[_Number]] = {}
        numbered_by_unit: dict[str, list[_Clause]] = {}
        numbers_by_unit: dict[str, list[_Number]] = {}
        for n in evidence.numbers:
            for key in n.value.keys:
                numbers_by_key.setdefault(key, []).append(n)
            for unit in n.context:
                numbers_by_unit.setdefault(unit, []).append(n)
            clause = evidence.clauses[n.clause]
            if not clause.unlimited:
                for unit in n.context:
                    numbered_by_unit.setdefault(unit, []).append(clause)
        return cls(
            evidence,
            by_pair,
            common_by_pair,
            frozenset(known),
            [c for c in evidence.clauses if c.unlimited],
            numbers_by_key,
            numbered_by_unit,
            numbers_by_unit,
        )

    def same_numbers(self, n: _Number) -> list[_Number]:
        out: dict[int, _Number] = {}
        for key in n.value.keys:
            for e in self.numbers_by_key.get(key, ()):
                out[id(e)] = e
        return list(out.values())


def _polarity_flips(answer: Analysis, ix: _Index) -> list[Violation]:
    """A polarity word whose quoted counterpart has the other polarity.

    The answer's clause is compared with the quoted clauses of the same polarity pair that
    share its most distinctive words. A quoted clause counts only if it covers every word
    of the answer's clause that the quotes know at all: "available in the Pro plan" is not
    judged by "not available in the Basic plan" (the quote may say it elliptically).
    """
    out: list[Violation] = []
    for clause in answer.clauses:
        for p in clause.polar:
            occurrences = ix.by_pair.get(p.pair)
            if not occurrences:
                continue
            known = p.about & ix.known_words
            common = ix.common_by_pair[p.pair]
            scores = [_overlap(p.about, q.about, common) for _, q in occurrences]
            best = max(scores)
            signs = {q.sign for _, q in occurrences}
            if best > 0:
                relevant = [
                    (c, q) for (c, q), s in zip(occurrences, scores, strict=True) if s == best
                ]
            elif len(signs) == 1:
                relevant = list(occurrences)
            else:
                continue
            covering = [q for _, q in relevant if known <= q.about]
            if covering and all(q.sign != p.sign for q in covering):
                out.append(Violation(POLARITY_FLIP, p.form, f"evidence: {covering[0].form}"))
    return out


def _unlimited(answer: Analysis, ix: _Index, computed: set[str]) -> list[Violation]:
    """A number said of something the evidence calls unlimited.

    The answer's clause is compared with the evidence clauses that speak of the same unit:
    those that say "unlimited" and those that give a number. The unlimited one must share
    more distinctive words with the answer ("Enterprise" rather than "Standard plan"), or
    be the only kind the evidence has for that unit.
    """
    out: list[Violation] = []
    if not ix.unlimited:
        return out
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        clause = answer.clauses[n.clause]
        units = n.units or clause.units
        group = ix.unit_groups.get(frozenset(units))
        if group is None:
            limited = [c for c in ix.unlimited if c.units & units]
            numbered = [c for unit in units for c in ix.numbered_by_unit.get(unit, ())]
            common = (
                frozenset.intersection(*(c.content for c in [*limited, *numbered]))
                if limited
                else frozenset()
            )
            group = (limited, numbered, common)
            if len(ix.unit_groups) < 4096:
                ix.unit_groups[frozenset(units)] = group
        limited, numbered, common = group
        if not limited:
            continue
        mine = clause.content

        def score(c: _Clause, mine: frozenset[str] = mine, common: frozenset[str] = common) -> int:
            return _overlap(mine, c.content, common)

        best_limited = max(score(c) for c in limited)
        # only whether some numbered claim scores as high matters (stops at the first)
        if not any(score(c) >= best_limited for c in numbered):
            top = max(limited, key=score)
            out.append(
                Violation(UNLIMITED_AS_NUMBER, n.value.text, f"evidence: {top.text.strip()}")
            )
    return out


def _numbers(
    answer: Analysis, ix: _Index, computed: set[str]
) -> tuple[list[Violation], list[Violation]]:
    missing: list[Violation] = []
    units: list[Violation] = []
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        same = ix.same_numbers(n)
        if not same:
            missing.append(Violation(NUMBER_NOT_IN_QUOTE, n.value.text))
            continue
        # a unit is compared only where the evidence names one for that number: an answer
        # that adds a noun ("12 people" for "a team of 12") is not a changed unit
        known = [e for e in same if e.context]
        if n.units and known and not any(n.units <= e.context for e in known):
            want = ", ".join(sorted(n.units))
            have = " | ".join(", ".join(sorted(e.context)) for e in known)
            units.append(
                Violation(UNIT_MISMATCH, n.value.text, f"answer: {want}; evidence: {have}")
            )
    return missing, units


def mentions(norm: str, name: str) -> list[int]:
    """Where a normalised name occurs in normalised text as whole words (Han: anywhere)."""
    if not name:
        return []
    if regex.match(r"\p{Han}", name[0], timeout=TIMEOUT):
        pattern = regex.escape(name)
    else:
        pattern = r"(?<!\w)" + regex.escape(name) + r"(?!\w)"
    return [m.start() for m in regex.finditer(pattern, norm, timeout=TIMEOUT)]


def _subjects(
    answer: Analysis, evidence: Analysis, subjects: Sequence[str], computed: set[str]
) -> list[Violation]:
    names = [normalise(s) for s in subjects if s and s.strip()]
    if not names:
        return []
    out: list[Violation] = []
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        sent = answer.sentences[n.sentence]
        named = sorted((pos, name) for name in names for pos in mentions(sent, name))
        if not named:
            continue
        before = [name for pos, name in named if pos < n.value.start]
        subject = before[-1] if before else named[0][1]
        ok = any(
            mentions(esent, subject)
            and any(e.value.keys & n.value.keys for e in evidence.numbers if e.sentence == idx)
            for idx, esent in enumerate(evidence.sentences)
        )
        if not ok:
            out.append(Violation(SUBJECT_MISMATCH, n.value.text, f"subject: {subject}"))
    return out


_Claim = tuple[frozenset[str], frozenset[str], frozenset[str]]


def _claims(ix: _Index, ev: Analysis, units: frozenset[str], keys: frozenset[str]) -> _Claim | bool:
    """For a number of ``units`` with readings ``keys``: the words that tell the quoted
    claims apart, those only of claims with other numbers, and those of its own claims
    (``False`` when the quotes have no competing claims). Cached per index."""
    by_id = {id(e): e for u in units for e in ix.numbers_by_unit.get(u, ())}
    claims = by_id.values()
    same = {e.sentence for e in claims if e.value.keys & keys}
    other = {e.sentence for e in claims if not e.value.keys & keys} - same
    if not same or not other:
        return False
    contents = [ev.sentence_content[i] for i in same | other]
    distinctive = frozenset().union(*contents) - frozenset.intersection(*contents)
    ours = frozenset().union(*(ev.sentence_content[i] for i in same))
    theirs = frozenset().union(*(ev.sentence_content[i] for i in other)) - ours
    return distinctive, theirs, ours


def _switched_subject(answer: Analysis, ix: _Index, computed: set[str]) -> list[Violation]:
    """A quoted number moved to another claim of the same unit, found without a subject list.

    The quoted sentences that give a number of the answer's unit are the claims; the words
    that tell them apart ("Standard", "Pro") are those not shared by all of them. An answer
    sentence that names only words of claims with *other* numbers, and none of a claim with
    its own number, has moved the number: "Pro includes 20 seats" when 20 is Standard's.
    """
    out: list[Violation] = []
    ev = ix.evidence
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        units = n.units or answer.clauses[n.clause].units
        if not units:
            continue
        key = (frozenset(units), n.value.keys)
        claim = ix.claims.get(key)
        if claim is None:
            claim = _claims(ix, ev, key[0], n.value.keys)
            if len(ix.claims) < 4096:
                ix.claims[key] = claim
        if not isinstance(claim, tuple):
            continue
        distinctive, theirs, ours = claim
        mine = answer.sentence_content[n.sentence] & distinctive
        if mine & theirs and not mine & ours:
            word = sorted(mine & theirs)[0]
            out.append(Violation(SUBJECT_MISMATCH, n.value.text, f"said of: {word}"))
    return out


# -- formulas ------------------------------------------------------------------------

_FORMULA_TOKEN = regex.compile(r"\s*(?:(\d+(?:[.,]\d+)*)|([-+*/×÷x()]))")
_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "×": operator.mul,
    "x": operator.mul,
    "/": operator.truediv,
    "÷": operator.truediv,
}


def _fraction(token: str) -> Fraction:
    readings = number_readings(token)
    if len(readings) != 1:
        raise FormulaError(f"not a number in a formula: {token!r}")
    return Fraction(sorted(readings[0])[0])


def evaluate(formula: str) -> tuple[Fraction, list[str]]:
    """Evaluate plain arithmetic (never ``eval``); return the result and the input numbers.

    >>> evaluate("3 × 8")
    (Fraction(24, 1), ['3', '8'])
    """
    norm = normalise(formula)
    tokens: list[str] = []
    pos = 0
    while pos < len(norm):
        m = _FORMULA_TOKEN.match(norm, pos, timeout=TIMEOUT)
        if not m or m.end() == pos:
            if norm[pos:].strip() == "":
                break
            raise FormulaError(f"cannot read the formula {formula!r} at {norm[pos : pos + 10]!r}")
        tokens.append(m.group(1) or m.group(2))
        pos = m.end()
    inputs = [t for t in tokens if t[0].isdigit()]
    index = 0

    def peek() -> str | None:
        return tokens[index] if index < len(tokens) else None

    def take() -> str:
        nonlocal index
        if index >= len(tokens):
            raise FormulaError(f"the formula {formula!r} ends too early")
        index += 1
        return tokens[index - 1]

    def atom() -> Fraction:
        tok = take()
        if tok == "(":
            val = expr()
            if take() != ")":
                raise FormulaError(f"the formula {formula!r} has unbalanced brackets")
            return val
        if tok == "-":
            return -atom()
        if tok[0].isdigit():
            return _fraction(tok)
        raise FormulaError(
            f"the formula {formula!r} has an unexpected {tok!r}; "
            "use numbers, + - * / × ÷ and brackets"
        )

    def term() -> Fraction:
        val = atom()
        while peek() in ("*", "×", "x", "/", "÷"):
            op = take()
            rhs = atom()
            if op in "/÷" and rhs == 0:
                raise FormulaError(f"the formula {formula!r} divides by zero")
            val = _OPS[op](val, rhs)
        return val

    def expr() -> Fraction:
        val = term()
        while peek() in ("+", "-"):
            op = take()
            val = _OPS[op](val, term())
        return val

    if not tokens:
        raise FormulaError("the formula is empty")
    result = expr()
    if index != len(tokens):
        raise FormulaError(
            f"the formula {formula!r} has an unexpected {tokens[index]!r}; "
            "use numbers, + - * / × ÷ and brackets"
        )
    return result, inputs


def _computed(
    answer: Analysis, quote_keys: frozenset[str], computed: Mapping[str, str]
) -> tuple[set[str], list[Violation]]:
    keys: set[str] = set()
    out: list[Violation] = []
    present = answer.keys
    for raw_value, formula in computed.items():
        readings = number_readings(normalise(str(raw_value)).replace(" ", ""))
        if len(readings) != 1:
            raise FormulaError(f"a computed value must be one number: {raw_value!r}")
        value_keys = readings[0]
        result, inputs = evaluate(formula)  # a malformed formula is an error even if unused
        if not value_keys & present:
            continue
        keys |= value_keys
        for token in inputs:
            if not (number_readings(token)[0] & quote_keys):
                out.append(Violation(FORMULA_INPUT_NOT_IN_QUOTE, token, f"formula: {formula}"))
        if not any(Fraction(k) == result for k in value_keys):
            out.append(Violation(FORMULA_MISMATCH, str(raw_value), f"{formula} = {result}"))
    return keys, out


# ------------------------------------------------------------------------------------
# Public API


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


_RELEVANCE: dict[int, tuple[Vocab, PhraseMatcher]] = {}


def _relevance_matcher(vocab: Vocab) -> PhraseMatcher:
    """One matcher for polarity forms and unit words together (built once per vocabulary),
    so the gate decides with one scan whether a sentence needs the audit."""
    hit = _RELEVANCE.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1]
    matcher = PhraseMatcher([*vocab.polarity_of, *vocab.units], vocab.unit_m.proclitics)
    if len(_RELEVANCE) > 64:
        _RELEVANCE.clear()
    _RELEVANCE[id(vocab)] = (vocab, matcher)
    return matcher


class Auditor:
    """Evidence analysed once, then many answers or sentences audited against it.

    The sentence gate keeps one per source; ``audit`` builds one per call.
    """

    def __init__(
        self,
        quotes: Sequence[str],
        *,
        packs: PacksLike | None = None,
        locale: str | None = None,
        subjects: Sequence[str] = (),
    ) -> None:
        quotes = require_texts(quotes, "quotes", limit=MAX_QUOTES)
        require_str(locale, "locale", optional=True)
        subjects = require_texts(subjects, "subjects", limit=MAX_SUBJECTS)
        for name in subjects:
            check_size(name, MAX_NAME_CHARS, "a subject name")
        check_size(sum(len(q) for q in quotes), MAX_EVIDENCE_CHARS, "the quotes together")
        self.packs = _packs(packs)
        locales = [locale] if locale else None
        self.vocab = vocab_for(self.packs, locales)
        self.stop = _stopwords(self.packs, locales)
        self.subjects = tuple(subjects)
        self.parts = [analyse(q, self.vocab, self.stop) for q in quotes]
        self._merged: dict[tuple[int, ...] | None, _Index] = {}
        self.quote_keys = (
            frozenset().union(*(p.keys for p in self.parts)) if self.parts else (frozenset())
        )

    def evidence(self, which: Sequence[int] | None = None) -> Analysis:
        """The merged analysis of all quotes, or of the given (0-based) ones (cached)."""
        return self._index(which).evidence

    def _index(self, which: Sequence[int] | None) -> _Index:
        key = None if which is None else tuple(which)
        cached = self._merged.get(key)
        if cached is not None:
            return cached
        parts = self.parts if key is None else [self.parts[i] for i in key]
        merged = _merge(parts) if parts else Analysis((), (), (), frozenset())
        index = _Index.build(merged)
        if len(self._merged) < 256:
            self._merged[key] = index
        return index

    def relevant(self, norm_answer: str, has_numbers: bool) -> bool:
        """Whether an audit without the number check can find anything (one scan the
        sentence gate runs before a full audit): a polarity word, or a number with a unit
        word (units, "unlimited" and switched subjects are all read through units) or a
        subject list."""
        if has_numbers and self.subjects:
            return True
        hits = _relevance_matcher(self.vocab).find(norm_answer)
        if not hits:
            return False
        if has_numbers:
            return True
        return any(form in self.vocab.polarity_of for _, _, form in hits)

    def audit(
        self,
        answer: str,
        *,
        computed: Mapping[str, str] | None = None,
        which: Sequence[int] | None = None,
        numbers: bool = True,
        one_sentence: bool = False,
        prepared: tuple[str, list[Value]] | None = None,
    ) -> list[Violation]:
        """Violations of ``answer`` against the quotes (all, or the given 0-based ones).

        ``numbers=False`` leaves out ``number_not_in_quote`` (the sentence gate has its own
        value check); ``one_sentence`` skips segmentation of an answer known to be one, and
        ``prepared`` (its ``normalise`` and ``values(..., skip_enumerator=True)``) skips
        their second run.
        """
        require_str(answer, "answer")
        check_size(answer, MAX_ANSWER_CHARS, "the answer")
        if computed is not None:
            if not isinstance(computed, Mapping):
                raise TypeError(
                    f"computed must be a mapping {{value: formula}}, not {type(computed).__name__}"
                )
            if len(computed) > MAX_COMPUTED:
                raise InputTooLargeError(
                    f"computed has {len(computed)} entries; the limit is {MAX_COMPUTED}."
                )
            for formula in computed.values():
                check_size(str(formula), MAX_NAME_CHARS, "a formula")
        ans = analyse(
            answer,
            self.vocab,
            self.stop,
            sentences=not one_sentence,
            prepared=prepared if one_sentence else None,
        )
        ix = self._index(which)
        ev = ix.evidence
        computed_keys, out = _computed(ans, ev.keys, computed or {})
        missing, units = _numbers(ans, ix, computed_keys)
        if numbers:
            out.extend(missing)
        out.extend(units)
        out.extend(_polarity_flips(ans, ix))
        out.extend(_unlimited(ans, ix, computed_keys))
        out.extend(_subjects(ans, ev, self.subjects, computed_keys))
        if not self.subjects:
            out.extend(_switched_subject(ans, ix, computed_keys))
        seen: set[tuple[str, str]] = set()
        unique = []
        for v in out:
            if (v.code, v.token) not in seen:
                seen.add((v.code, v.token))
                unique.append(v)
        return unique


def audit(
    answer: str,
    quotes: Sequence[str],
    locale: str | None = None,
    *,
    computed: Mapping[str, str] | None = None,
    subjects: Sequence[str] = (),
    packs: PacksLike | None = None,
) -> list[Violation]:
    """What ``answer`` states that its ``quotes`` do not; an empty list means none found.

    ``computed`` maps a number the program computed (as it appears in the answer, e.g.
    ``"24"``) to its formula (``"3 × 8"``): that number need not be quoted, but every
    input of the formula must be, and the formula must give the number. ``subjects``
    (plan, product or person names) sharpens the subject check: a number said of a
    subject must share a quoted sentence with it; without them, a number moved between
    competing quoted claims of the same unit is still caught. ``locale`` restricts the
    vocabulary to one pack (default: every locale's words).
    """
    require_str(answer, "answer")
    return Auditor(quotes, packs=packs, locale=locale, subjects=subjects).audit(
        answer, computed=computed
    )


def _value_tokens(value: Any) -> list[frozenset[str]] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, Fraction)):
        return [frozenset({str(value)})]
    if isinstance(value, float):
        text = repr(value)
        return number_readings(text[:-2] if text.endswith(".0") else text)
    norm = normalise(str(value)).replace(" ", "") if isinstance(value, str) else ""
    if regex.fullmatch(r"\d+(?:[.,]\d+)*", norm, timeout=TIMEOUT):
        return number_readings(norm)
    return None


def _polarity_of(quote: str, vocab: Vocab) -> str | None:
    signs = {
        sign
        for _, _, form in vocab.polarity_m.find(normalise(quote))
        for _, sign in vocab.polarity_of.get(form, ())
    }
    return signs.pop() if len(signs) == 1 else None


def accept(
    field: str,
    value: Any,
    quote: str,
    evidence: str,
    subject: str | None = None,
    *,
    packs: PacksLike | None = None,
) -> FieldResult:
    """Whether an extracted field may enter an answer (``FieldResult.ok``).

    The quote must be an exact substring of the evidence (not after normalisation: a
    quote is a pointer into the document); the value must occur in the quote as a whole
    token after normalisation (``20`` is not in ``2025`` nor in ``200``; ``۲۰`` is ``20``);
    the subject must occur in the same quote. ``None`` is a legitimate value ("the quote
    gives no number", as for "unlimited"). A ``bool`` value is read as a polarity: the
    quote must carry only positive (``True``) or only negative (``False``) forms.
    """

    require_str(field, "field")
    require_str(quote, "quote")
    require_str(evidence, "evidence")
    require_str(subject, "subject", optional=True)
    if value is None:
        raise TypeError(
            'value must be the extracted value, not None: pass "unlimited" for an '
            "unlimited count and True/False for a polarity; a field without a value is "
            "not accepted"
        )
    check_size(field, MAX_NAME_CHARS, "the field name")
    check_size(evidence, MAX_EVIDENCE_CHARS, "the evidence")

    def result(reason: str | None) -> FieldResult:
        return FieldResult(field, value, reason is None, reason)

    if not quote or not quote.strip():
        return result(EMPTY_QUOTE)
    if quote not in evidence:
        return result(QUOTE_NOT_IN_EVIDENCE)
    norm_quote = normalise(quote)
    if subject is not None and not mentions(norm_quote, normalise(subject)):
        return result(SUBJECT_NOT_IN_QUOTE)
    if isinstance(value, bool):
        vocab = vocab_for(_packs(packs))
        sign = _polarity_of(quote, vocab)
        return result(None if sign == ("+" if value else "-") else VALUE_NOT_IN_QUOTE)
    wanted = _value_tokens(value)
    if wanted is not None:
        present = [v.keys for v in values(norm_quote) if v.kind == "number"]
        ok = any(w & p for w in wanted for p in present)
        return result(None if ok else VALUE_NOT_IN_QUOTE)
    norm_value = normalise(str(value))
    if norm_value == normalise(UNLIMITED):
        vocab = vocab_for(_packs(packs))
        if vocab.unlimited_m.find(norm_quote):
            return result(None)
    return result(None if mentions(norm_quote, norm_value) else VALUE_NOT_IN_QUOTE)


# -- resolve --------------------------------------------------------------------------


def _version_key(version: str | None) -> tuple[int, tuple[int, ...], str]:
    if version is None:
        return (0, (), "")
    nums = tuple(int(x) for x in regex.findall(r"\d+", version, timeout=TIMEOUT))
    return (1, nums, version)


def in_force(documents: Sequence[Evidence], now: date | None = None) -> list[Evidence]:
    """The documents in force on ``now`` (default: today).

    A dated document counts when ``effective <= now <= expiry`` (either bound may be
    absent); among the versions of one ``doc`` that remain, only the highest counts.
    """
    today = now or date.today()
    current = [
        d
        for d in documents
        if (d.effective is None or d.effective <= today) and (d.expiry is None or today <= d.expiry)
    ]
    groups: dict[str, list[Evidence]] = {}
    for d in current:
        groups.setdefault(d.doc, []).append(d)
    out: list[Evidence] = []
    for group in groups.values():
        if any(d.version is not None for d in group):
            top = max(_version_key(d.version) for d in group)
            group = [d for d in group if _version_key(d.version) == top]
        out.extend(group)
    return out


def _value_key(value: Any) -> str:
    tokens = _value_tokens(value)
    if tokens is not None and len(tokens) == 1:
        return "number:" + min(tokens[0])
    if isinstance(value, bool):
        return f"bool:{value}"
    return "text:" + normalise(str(value))


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


def resolve(
    field: str,
    facts: Iterable[Fact | Mapping[str, Any]] | None,
    documents: Iterable[Evidence | Mapping[str, Any]],
    *,
    now: date | None = None,
    subject: str | None = None,
    packs: PacksLike | None = None,
) -> Resolution:
    """Answer ``field`` from the documents in force; never choose between two values.

    Only documents in force count (see ``in_force``), and only facts for ``field`` whose
    quote is an exact substring of an in-force document with the fact's ``doc``. No
    document in force: ``NO_HIT``. Documents but no such fact with a value:
    ``HIT_BUT_UNANSWERABLE``. Two different values: ``CONFLICT``. Otherwise ``OK`` with
    the value. ``facts=None`` runs the rule-based extractor (``extract_facts``) over the
    documents in force. With ``subject`` (a plan, product or person), only facts whose
    quote names it count, as in ``accept``.
    """
    require_str(field, "field")
    require_str(subject, "subject", optional=True)
    check_size(field, MAX_NAME_CHARS, "the field name")
    docs = documents_of(documents)
    if facts is not None and (isinstance(facts, (str, Mapping)) or not hasattr(facts, "__iter__")):
        raise TypeError(f"facts must be a list of facts or None, not {type(facts).__name__}")
    live = in_force(docs, now)
    if not live:
        return Resolution(field, NO_HIT)
    if facts is None:
        from guardlex.gates.extract import extract_facts

        fact_list = extract_facts(field, live, subject=subject, packs=packs)
    else:
        fact_list = [f if isinstance(f, Fact) else Fact.from_mapping(f) for f in facts]
    texts: dict[str, list[str]] = {}
    for d in live:
        texts.setdefault(d.doc, []).append(d.text)
    wanted = normalise(field)
    norm_subject = normalise(subject) if subject else ""
    good = [
        f
        for f in fact_list
        if normalise(f.field) == wanted
        and f.quote.strip()
        and any(f.quote in t for t in texts.get(f.doc, ()))
        and f.value is not None
        and (not norm_subject or mentions(normalise(f.quote), norm_subject))
    ]
    if not good:
        return Resolution(field, HIT_BUT_UNANSWERABLE)
    distinct: dict[str, Any] = {}
    for f in good:
        distinct.setdefault(_value_key(f.value), f.value)
    if len(distinct) > 1:
        return Resolution(field, CONFLICT, None, tuple(distinct.values()), tuple(good))
    value = next(iter(distinct.values()))
    return Resolution(field, OK, value, (value,), tuple(good))
