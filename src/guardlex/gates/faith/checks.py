"""The checks of ``audit``: numbers and their units, polarity flips, "unlimited" given as a
number, and numbers said of another subject."""

from __future__ import annotations

from collections.abc import Sequence

from guardlex.gates._text import (
    normalise,
)
from guardlex.gates.faith.analysis import Analysis, _Clause
from guardlex.gates.faith.common import mentions
from guardlex.gates.faith.index import _claims, _Index, _overlap
from guardlex.gates.types import (
    NUMBER_NOT_IN_QUOTE,
    POLARITY_FLIP,
    SUBJECT_MISMATCH,
    UNIT_MISMATCH,
    UNLIMITED_AS_NUMBER,
    Violation,
)


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
            continue
        # another currency: 8 EUR is not 8 USD (only where both name a known currency)
        priced = [e for e in same if e.currency]
        if n.currency and priced and not any(e.currency == n.currency for e in priced):
            have = " | ".join(sorted({str(e.currency) for e in priced}))
            units.append(
                Violation(UNIT_MISMATCH, n.value.text, f"answer: {n.currency}; evidence: {have}")
            )
            continue
        # a period named in the number's clause, where the quotes name another period for
        # that number ("12 EUR pro Nutzer und Jahr" for "... und Monat", "每小时允许 1000 次")
        period = n.context & PERIODS
        timed = [e for e in known if e.context & PERIODS]
        if period and timed and not any(period <= e.context for e in timed):
            want = ", ".join(sorted(period))
            have = " | ".join(", ".join(sorted(e.context & PERIODS)) for e in timed)
            units.append(
                Violation(UNIT_MISMATCH, n.value.text, f"answer: {want}; evidence: {have}")
            )
    return missing, units


#: Canonical units of time (the lexicons' unit names): two of them for one number are a
#: changed rate, whichever words carry them.
PERIODS = frozenset({"minute", "hour", "day", "week", "month", "year"})


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
