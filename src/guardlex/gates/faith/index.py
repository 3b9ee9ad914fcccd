"""The evidence index: lookups over the analysed quotes, built once per set of quotes
(the sentence gate reuses them across sentences)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardlex.gates._vocab import (
    PhraseMatcher,
    Vocab,
)
from guardlex.gates.faith.analysis import Analysis, _Clause, _Number, _Polar


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
