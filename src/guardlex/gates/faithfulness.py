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

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from fractions import Fraction
from typing import Any

import regex

from guardlex.gates._text import (
    TIMEOUT,
    Value,
    check_size,
    normalise,
    number_readings,
    values,
)
from guardlex.gates._vocab import Vocab, default_packs, vocab_for
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

#: The canonical value an extracted "unlimited" fact carries.
UNLIMITED = "unlimited"

_CLAUSE_BREAK = regex.compile(r"[;!?。，；！？、\n]|[.,](?!\d)|(?<!\d)[.,]")
_WORD = regex.compile(r"\w+")
_HAN_RUN = regex.compile(r"\p{Han}+")
_SKIPPABLE = regex.compile(r"\p{Han}|[^\W\d\p{Han}]+|\p{Sc}|%")
_SPACE = regex.compile(r"[\s\-]*")


# ------------------------------------------------------------------------------------
# Analysis of a text into clauses, numbers with their units, polarity and unlimited words


@dataclass(frozen=True)
class _Polar:
    pair: int
    sign: str  # "+" or "-"
    form: str


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


@dataclass(frozen=True)
class Analysis:
    """One text, analysed once: normalised sentences, clauses and numbers."""

    sentences: tuple[str, ...]  # normalised
    clauses: tuple[_Clause, ...]
    numbers: tuple[_Number, ...]
    keys: frozenset[str]  # number readings present anywhere


def _content(text: str, vocab: Vocab, stop: frozenset[str]) -> frozenset[str]:
    out: set[str] = set()
    for word in _WORD.findall(text, timeout=TIMEOUT):
        if word.isdigit():
            continue
        for run in _HAN_RUN.findall(word, timeout=TIMEOUT):
            grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            out.update(g for g in grams if g not in vocab.units)
        rest = _HAN_RUN.sub(" ", word, timeout=TIMEOUT)
        for piece in rest.split():
            if len(piece) >= 2 and not piece.isdigit() and piece not in stop:
                out.add(piece)
    return frozenset(out - stop - set(vocab.per) - set(vocab.units))


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _match_at(pattern: regex.Pattern[str] | None, text: str, pos: int) -> Any:
    if pattern is None:
        return None
    return pattern.match(text, pos, timeout=TIMEOUT)


def _chain_units(
    norm: str, start: int, end: int, vocab: Vocab
) -> tuple[frozenset[str], frozenset[str]]:
    """Units attached to the number at ``start:end`` ("20 seats", "8 EUR per seat per month",
    "8 元/席位/月", a rate right before it: "每席位每月 8 元"), and which of them are rates."""
    units: set[str] = set()
    rate: set[str] = set()
    pos = end
    skipped = False
    after_per = False
    n = len(norm)
    while pos < n:
        p = _SPACE.match(norm, pos, timeout=TIMEOUT).end()
        m = _match_at(vocab.per_re, norm, p)
        if m and m.end() > p:
            pos = m.end()
            after_per = True
            continue
        m = _match_at(vocab.unit_re, norm, p)
        if m and m.end() > p:
            unit = vocab.unit_of(m.group())
            if unit:
                units.add(unit)
                if after_per:
                    rate.add(unit)
            after_per = False
            pos = m.end()
            continue
        if not units and not skipped:
            m = _SKIPPABLE.match(norm, p, timeout=TIMEOUT)
            if m:
                skipped = True
                pos = m.end()
                continue
        break
    if vocab.rate_tail_re is not None:
        head = norm[max(0, start - 60) : start]
        while head:
            m = vocab.rate_tail_re.search(head, timeout=TIMEOUT)
            if not m:
                break
            unit = vocab.unit_of(m.group("unit"))
            if unit:
                units.add(unit)
                rate.add(unit)
            head = head[: m.start()]
    return frozenset(units), frozenset(rate)


def _clauses(norm: str) -> list[tuple[int, int]]:
    """Clause spans of normalised text; dots and commas inside numbers, URLs and addresses
    do not break a clause."""
    masked = _mask(norm, ((v.start, v.end) for v in values(norm) if v.kind != "number"))
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


def analyse(
    text: str, vocab: Vocab, stop: frozenset[str] = frozenset(), *, sentences: bool = True
) -> Analysis:
    """Analyse a text (an answer or a quote) into clauses and numbers with units."""
    raw_sentences = split_sentences(text, vocab.is_abbreviation) if sentences else [text]
    norm_sentences: list[str] = []
    clauses: list[_Clause] = []
    numbers: list[_Number] = []
    keys: set[str] = set()
    for s_idx, raw in enumerate(raw_sentences):
        norm = normalise(raw)
        norm_sentences.append(norm)
        nums = [v for v in values(norm, skip_enumerator=True) if v.kind == "number"]
        for a, b in _clauses(norm):
            ctext = norm[a:b]
            polar: list[_Polar] = []
            spans: list[tuple[int, int]] = []
            if vocab.polarity_re is not None:
                for m in vocab.polarity_re.finditer(ctext, timeout=TIMEOUT):
                    for pair, sign in vocab.polarity_of.get(m.group(), ()):
                        polar.append(_Polar(pair, sign, m.group()))
                    spans.append(m.span())
            unlimited: list[str] = []
            if vocab.unlimited_re is not None:
                for m in vocab.unlimited_re.finditer(ctext, timeout=TIMEOUT):
                    unlimited.append(m.group())
                    spans.append(m.span())
            units: set[str] = set()
            if vocab.unit_re is not None:
                for m in vocab.unit_re.finditer(ctext, timeout=TIMEOUT):
                    unit = vocab.unit_of(m.group())
                    if unit:
                        units.add(unit)
            clause = _Clause(
                text=ctext,
                content=_content(_mask(ctext, spans), vocab, stop),
                polar=tuple(polar),
                unlimited=tuple(unlimited),
                units=frozenset(units),
            )
            clauses.append(clause)
            c_idx = len(clauses) - 1
            for v in nums:
                if a <= v.start < b:
                    attached, rate = _chain_units(norm, v.start, v.end, vocab)
                    numbers.append(
                        _Number(v, attached, rate, attached | clause.units, c_idx, s_idx)
                    )
                    keys.update(v.keys)
    return Analysis(tuple(norm_sentences), tuple(clauses), tuple(numbers), frozenset(keys))


def _merge(analyses: Sequence[Analysis]) -> Analysis:
    if len(analyses) == 1:
        return analyses[0]
    sentences: list[str] = []
    clauses: list[_Clause] = []
    numbers: list[_Number] = []
    keys: set[str] = set()
    for a in analyses:
        s_off, c_off = len(sentences), len(clauses)
        sentences.extend(a.sentences)
        clauses.extend(a.clauses)
        numbers.extend(
            _Number(n.value, n.units, n.rate, n.context, n.clause + c_off, n.sentence + s_off)
            for n in a.numbers
        )
        keys.update(a.keys)
    return Analysis(tuple(sentences), tuple(clauses), tuple(numbers), frozenset(keys))


# ------------------------------------------------------------------------------------
# Checks


def _overlap(a: frozenset[str], b: frozenset[str], common: frozenset[str]) -> int:
    return len((a & b) - common)


def _polarity_flips(answer: Analysis, evidence: Analysis) -> list[Violation]:
    out: list[Violation] = []
    by_pair: dict[int, list[tuple[_Clause, _Polar]]] = {}
    for clause in evidence.clauses:
        for p in clause.polar:
            by_pair.setdefault(p.pair, []).append((clause, p))
    for clause in answer.clauses:
        for p in clause.polar:
            occurrences = by_pair.get(p.pair)
            if not occurrences:
                continue
            common: frozenset[str] = frozenset()
            if len({id(c) for c, _ in occurrences}) > 1:
                common = frozenset.intersection(*(c.content for c, _ in occurrences))
            scores = [_overlap(clause.content, c.content, common) for c, _ in occurrences]
            best = max(scores)
            signs = {q.sign for _, q in occurrences}
            if best > 0:
                relevant = [q for (_, q), s in zip(occurrences, scores, strict=False) if s == best]
            elif len(signs) == 1:
                relevant = [q for _, q in occurrences]
            else:
                continue
            if all(q.sign != p.sign for q in relevant):
                out.append(Violation(POLARITY_FLIP, p.form, f"evidence: {relevant[0].form}"))
    return out


def _unlimited(answer: Analysis, evidence: Analysis, computed: set[str]) -> list[Violation]:
    """A number said of something the evidence calls unlimited.

    The answer's clause is compared with the evidence clauses that speak of the same unit:
    those that say "unlimited" and those that give a number. The unlimited one must share
    more distinctive words with the answer ("Enterprise" rather than "Standard plan"), or
    be the only kind the evidence has for that unit.
    """
    out: list[Violation] = []
    unl = [c for c in evidence.clauses if c.unlimited]
    if not unl:
        return out
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        clause = answer.clauses[n.clause]
        units = n.units or clause.units
        limited = [c for c in unl if c.units & units]
        if not limited:
            continue
        numbered = [
            evidence.clauses[e.clause]
            for e in evidence.numbers
            if e.context & units and not evidence.clauses[e.clause].unlimited
        ]
        candidates = [*limited, *numbered]
        common = frozenset.intersection(*(c.content for c in candidates))
        mine = clause.content

        def score(c: _Clause, mine: frozenset[str] = mine, common: frozenset[str] = common) -> int:
            return _overlap(mine, c.content, common)

        best_limited = max(score(c) for c in limited)
        best_numbered = max((score(c) for c in numbered), default=-1)
        if best_limited > best_numbered:
            top = max(limited, key=score)
            out.append(
                Violation(UNLIMITED_AS_NUMBER, n.value.text, f"evidence: {top.text.strip()}")
            )
    return out


def _numbers(
    answer: Analysis, evidence: Analysis, computed: set[str]
) -> tuple[list[Violation], list[Violation]]:
    missing: list[Violation] = []
    units: list[Violation] = []
    for n in answer.numbers:
        if n.value.keys & computed:
            continue
        same = [e for e in evidence.numbers if e.value.keys & n.value.keys]
        if not same:
            missing.append(Violation(NUMBER_NOT_IN_QUOTE, n.value.text))
            continue
        if n.units and not any(n.units <= e.context for e in same):
            want = ", ".join(sorted(n.units))
            have = " | ".join(", ".join(sorted(e.context)) or "-" for e in same)
            units.append(
                Violation(UNIT_MISMATCH, n.value.text, f"answer: {want}; evidence: {have}")
            )
    return missing, units


def _mentions(norm: str, name: str) -> list[int]:
    if not name:
        return []
    if regex.match(r"\p{Han}", name[0]):
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
        mentions = sorted((pos, name) for name in names for pos in _mentions(sent, name))
        if not mentions:
            continue
        before = [name for pos, name in mentions if pos < n.value.start]
        subject = before[-1] if before else mentions[0][1]
        ok = any(
            _mentions(esent, subject)
            and any(e.value.keys & n.value.keys for e in evidence.numbers if e.sentence == idx)
            for idx, esent in enumerate(evidence.sentences)
        )
        if not ok:
            out.append(Violation(SUBJECT_MISMATCH, n.value.text, f"subject: {subject}"))
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
                raise FormulaError(f"unbalanced brackets in {formula!r}")
            return val
        if tok == "-":
            return -atom()
        if tok[0].isdigit():
            return _fraction(tok)
        raise FormulaError(f"unexpected {tok!r} in {formula!r}")

    def term() -> Fraction:
        val = atom()
        while peek() in ("*", "×", "x", "/", "÷"):
            op = take()
            rhs = atom()
            if op in "/÷" and rhs == 0:
                raise FormulaError(f"division by zero in {formula!r}")
            val = _OPS[op](val, rhs)
        return val

    def expr() -> Fraction:
        val = term()
        while peek() in ("+", "-"):
            op = take()
            val = _OPS[op](val, term())
        return val

    if not tokens:
        raise FormulaError("an empty formula")
    result = expr()
    if index != len(tokens):
        raise FormulaError(f"unexpected {tokens[index]!r} in {formula!r}")
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
        if not value_keys & present:
            continue
        keys |= value_keys
        result, inputs = evaluate(formula)
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


def _stopwords(packs: PacksLike | None, locales: Sequence[str] | None) -> frozenset[str]:
    getter = getattr(packs, "stopwords", None)
    if packs is None or getter is None:
        return frozenset()
    out: set[str] = set()
    for loc in locales if locales is not None else packs.locales:
        try:
            out.update(normalise(w) for w in getter(loc))
        except Exception:  # a pack without stopwords simply contributes none
            continue
    return frozenset(out)


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
        total = sum(len(q) for q in quotes)
        if total > MAX_EVIDENCE_CHARS:
            check_size("x" * (MAX_EVIDENCE_CHARS + 1), MAX_EVIDENCE_CHARS, "the evidence")
        self.packs = _packs(packs)
        locales = [locale] if locale else None
        self.vocab = vocab_for(self.packs, locales)
        self.stop = _stopwords(self.packs, locales)
        self.subjects = tuple(subjects)
        self.parts = [analyse(q, self.vocab, self.stop) for q in quotes]
        self.quote_keys = (
            frozenset().union(*(p.keys for p in self.parts)) if self.parts else (frozenset())
        )

    def evidence(self, which: Sequence[int] | None = None) -> Analysis:
        """The merged analysis of all quotes, or of the given (0-based) ones."""
        parts = self.parts if which is None else [self.parts[i] for i in which]
        if not parts:
            return Analysis((), (), (), frozenset())
        return _merge(parts)

    def audit(
        self,
        answer: str,
        *,
        computed: Mapping[str, str] | None = None,
        which: Sequence[int] | None = None,
        numbers: bool = True,
    ) -> list[Violation]:
        """Violations of ``answer`` against the quotes (all, or the given ones)."""
        check_size(answer, MAX_ANSWER_CHARS, "the answer")
        ans = analyse(answer, self.vocab, self.stop)
        ev = self.evidence(which)
        computed_keys, out = _computed(ans, ev.keys, computed or {})
        missing, units = _numbers(ans, ev, computed_keys)
        if numbers:
            out.extend(missing)
        out.extend(units)
        out.extend(_polarity_flips(ans, ev))
        out.extend(_unlimited(ans, ev, computed_keys))
        out.extend(_subjects(ans, ev, self.subjects, computed_keys))
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
    (plan, product or person names) enables the subject check: a number said of a subject
    must share a quoted sentence with it. ``locale`` restricts the vocabulary to one pack
    (default: every locale's words).
    """
    if isinstance(quotes, str):
        quotes = [quotes]
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
    if vocab.polarity_re is None:
        return None
    signs = {
        sign
        for m in vocab.polarity_re.finditer(normalise(quote), timeout=TIMEOUT)
        for _, sign in vocab.polarity_of.get(m.group(), ())
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

    def result(reason: str | None) -> FieldResult:
        return FieldResult(field, value, reason is None, reason)

    if not quote or not quote.strip():
        return result(EMPTY_QUOTE)
    if quote not in evidence:
        return result(QUOTE_NOT_IN_EVIDENCE)
    norm_quote = normalise(quote)
    if subject is not None and not _mentions(norm_quote, normalise(subject)):
        return result(SUBJECT_NOT_IN_QUOTE)
    if value is None:
        return result(None)
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
        if vocab.unlimited_re is not None and vocab.unlimited_re.search(
            norm_quote, timeout=TIMEOUT
        ):
            return result(None)
    return result(None if _mentions(norm_quote, norm_value) else VALUE_NOT_IN_QUOTE)


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


def resolve(
    field: str,
    facts: Iterable[Fact | Mapping[str, Any]] | None,
    documents: Iterable[Evidence | Mapping[str, Any]],
    *,
    now: date | None = None,
    packs: PacksLike | None = None,
) -> Resolution:
    """Answer ``field`` from the documents in force; never choose between two values.

    Only documents in force count (see ``in_force``), and only facts for ``field`` whose
    quote is an exact substring of an in-force document with the fact's ``doc``. No
    document in force: ``NO_HIT``. Documents but no such fact with a value:
    ``HIT_BUT_UNANSWERABLE``. Two different values: ``CONFLICT``. Otherwise ``OK`` with
    the value. ``facts=None`` runs the rule-based extractor (``extract_facts``) over the
    documents in force.
    """
    docs = [d if isinstance(d, Evidence) else Evidence.from_mapping(d) for d in documents]
    check_size("x" * sum(len(d.text) for d in docs), MAX_EVIDENCE_CHARS, "the evidence")
    live = in_force(docs, now)
    if not live:
        return Resolution(field, NO_HIT)
    if facts is None:
        from guardlex.gates.extract import extract_facts

        fact_list = extract_facts(field, live, packs=packs)
    else:
        fact_list = [f if isinstance(f, Fact) else Fact.from_mapping(f) for f in facts]
    texts: dict[str, list[str]] = {}
    for d in live:
        texts.setdefault(d.doc, []).append(d.text)
    wanted = normalise(field)
    good = [
        f
        for f in fact_list
        if normalise(f.field) == wanted
        and f.quote.strip()
        and any(f.quote in t for t in texts.get(f.doc, ()))
        and f.value is not None
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
