"""``resolve``: one field answered from the documents in force, CONFLICT instead of a
choice when they disagree."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

import regex

from guardlex.gates._text import (
    TIMEOUT,
    check_size,
    normalise,
    require_str,
    values,
)
from guardlex.gates._vocab import Vocab, vocab_for
from guardlex.gates.extract import extract_facts
from guardlex.gates.faith.accept import accept, value_tokens
from guardlex.gates.faith.common import (
    MAX_NAME_CHARS,
    UNLIMITED,
    _packs,
    documents_of,
)
from guardlex.gates.numerals import with_numerals
from guardlex.gates.types import (
    CONFLICT,
    HIT_BUT_UNANSWERABLE,
    NO_HIT,
    OK,
    Evidence,
    Fact,
    PacksLike,
    Resolution,
)

# -- resolve --------------------------------------------------------------------------


def _version_key(version: str | None) -> tuple[int, tuple[tuple[int, str], ...], str]:
    if version is None:
        return (0, (), "")
    # Each digit run compared as a number without int(): (length, digits) orders
    # non-negative integers of any length (5,000 digits would exceed int()'s limit).
    runs = regex.findall(r"\d+", version, timeout=TIMEOUT)
    nums = tuple((len(d), d) for d in (r.lstrip("0") or "0" for r in runs))
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


def _value_keys(value: Any, vocab: Vocab) -> frozenset[str]:
    """The comparable readings of a value; two values agree when they share one
    (``"1.500"`` may be 1500 or 1.5; ``"20 seats"`` is 20; ``None``, ``"unlimited"`` and
    ``"not applicable"`` all say the slot has no number)."""
    if isinstance(value, bool):
        return frozenset({f"bool:{value}"})
    if value is None:
        return frozenset({"none"})
    norm = normalise(str(value)).strip()
    if norm == UNLIMITED or (isinstance(value, str) and _only_no_number(norm, vocab)):
        return frozenset({"none"})
    tokens = value_tokens(value, vocab)
    if tokens is None and isinstance(value, str):
        found = [
            v for v in with_numerals(norm, values(norm), vocab, min_han=1) if v.kind == "number"
        ]
        if len(found) == 1:
            tokens = [found[0].keys]
    if tokens is not None and len(tokens) == 1:
        return frozenset("number:" + k for k in tokens[0])
    return frozenset({"text:" + norm})


def _only_no_number(norm: str, vocab: Vocab) -> bool:
    hits = vocab.unlimited_m.find(norm) + vocab.not_applicable_m.find(norm)
    return len(hits) == 1 and hits[0][0] == 0 and hits[0][1] == len(norm)


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

    Only documents in force count (see ``in_force``), and only facts for ``field`` that
    ``accept`` admits against an in-force document with the fact's ``doc``: the quote an
    exact substring at token boundaries, the value in the quote, the subject (when given)
    named by it. A ``None`` value whose quote says the slot has no number ("unlimited",
    "not applicable") is such a fact. No document in force: ``NO_HIT``. Documents but no
    such fact: ``HIT_BUT_UNANSWERABLE``. Two different values: ``CONFLICT``. Otherwise
    ``OK`` with the value (``None`` for a slot without a number). ``facts=None`` runs the
    rule-based extractor (``extract_facts``) over the documents in force.
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
        fact_list = extract_facts(field, live, subject=subject, packs=packs)
    else:
        fact_list = [f if isinstance(f, Fact) else Fact.from_mapping(f) for f in facts]
    texts: dict[str, list[str]] = {}
    for d in live:
        texts.setdefault(d.doc, []).append(d.text)
    wanted = normalise(field)
    the_packs = _packs(packs)
    good = [
        f
        for f in fact_list
        if normalise(f.field) == wanted
        and any(
            accept(f.field, f.value, f.quote, t, subject, packs=the_packs).ok
            for t in texts.get(f.doc, ())
        )
    ]
    if not good:
        return Resolution(field, HIT_BUT_UNANSWERABLE)
    vocab = vocab_for(the_packs)
    groups: list[tuple[set[str], list[tuple[frozenset[str], Any]]]] = []
    for f in good:
        keys = _value_keys(f.value, vocab)
        for seen, members in groups:
            if seen & keys:
                seen &= keys  # "1.500" then "1500": they agree on 1500
                members.append((keys, f.value))
                break
        else:
            groups.append((set(keys), [(keys, f.value)]))
    # each group's value: one that says exactly what the group agreed on (1500, not 1.500)
    chosen = [next((v for k, v in m if k == seen), m[0][1]) for seen, m in groups]
    if len(chosen) > 1:
        return Resolution(field, CONFLICT, None, tuple(chosen), tuple(good))
    value = chosen[0]
    return Resolution(field, OK, value, (value,), tuple(good))
