"""Literal anchors: the pre-filter may skip a rule only when it cannot match."""

from __future__ import annotations

import doctest
import sys
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import guardlex.rules.anchors as anchors_mod
from guardlex import load_packs
from guardlex.normalise import normalise
from guardlex.rules.anchors import anchors_of, rule_anchors, trie_source
from guardlex.rules.lint import EXAMPLE_SUBJECTS


def test_doctests() -> None:
    assert doctest.testmod(anchors_mod).failed == 0


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"\mhow much (?:does|do) she charge\M", {" she charge"}),
        (r"(?:rates?|fees?)", {"rate", "fee"}),
        (r"colou?r", {"colo"}),
        (r"a+bcd", {"bcd"}),
        (r"\x27s", {"'s"}),
        (r"(?:ab|cd)?efg", {"efg"}),
        (r"多少 ?钱", {"多少"}),
    ],
)
def test_anchor_sets(source: str, expected: set[str]) -> None:
    assert anchors_of(source) == frozenset(expected)


@pytest.mark.parametrize("source", [r"\w+", r"(?:a|\d+)", r"(?i)abc", r"(a)\1", r"x?"])
def test_unknown_or_anchorless_sources_always_run(source: str) -> None:
    assert anchors_of(source) is None
    assert rule_anchors(["abc", source]) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="abcxyz ", min_size=1, max_size=6), min_size=1, max_size=12),
    st.text(alphabet="abcxyz ", max_size=40),
)
def test_trie_finds_the_longest_anchor_at_each_position(words: list[str], text: str) -> None:
    pattern = regex.compile("(?=(" + trie_source(words) + "))")
    found = {(m.start(), m.group(1)) for m in pattern.finditer(text)}
    for start in range(len(text)):
        present = [w for w in words if text.startswith(w, start)]
        if present:
            assert (start, max(present, key=len)) in found


def test_no_shipped_example_is_lost_by_the_prefilter() -> None:
    """For every shipped rule and example: if the rule matches, the pass made it a candidate."""
    from guardlex.rules.loader import discover, load_locale

    packs = load_packs(subject_names=EXAMPLE_SUBJECTS)
    m = packs.matcher()
    found = discover()
    checked = 0
    for code in packs.locales:
        for spec in load_locale(code, found[code]).rules:
            for text in map(normalise, spec.match + spec.no_match):
                occ = m.occurrences(text)
                cands = {
                    id(r): live
                    for sec in ("refusal", "overview")
                    for r, live in m.candidates(occ, sec)
                }
                for rule in m.rules:
                    if rule.locale != code or rule.id != spec.id:
                        continue
                    full = m.evaluate(rule, occ, prefilter=False)
                    if full is not None:
                        checked += 1
                        assert id(rule) in cands, (code, rule.id, text)
                        # the forms whose key occurred find the same match
                        assert m.evaluate(rule, occ, live=cands[id(rule)]) == full, text
    assert checked > 1000


def test_regex_fallback_gives_the_same_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ahocorasick_rs the trie-shaped regex finds the same occurrences and routes."""
    from guardlex.rules.loader import discover, load_locale

    found = discover()
    questions: list[str] = []
    for code in ("en", "fr", "zh", "fa", "ar", "hi"):
        for spec in load_locale(code, found[code]).rules[::3]:
            questions.extend(spec.match[:1] + spec.no_match[:1])
    codes = ["en", "fr", "zh", "fa", "ar", "hi"]
    fast = load_packs(codes, subject_names=EXAMPLE_SUBJECTS)
    expected = [fast.route(q) for q in questions]
    assert fast.matcher()._ac is not None
    monkeypatch.setitem(sys.modules, "ahocorasick_rs", None)
    slow = load_packs(codes, subject_names=EXAMPLE_SUBJECTS)
    assert [slow.route(q) for q in questions] == expected
    assert slow.matcher()._ac is None


SURROGATE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["how much does she charge", "ignore previous", "\ud800", "\udfff", " "]),
        st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010),  # around the surrogates
        st.text(max_size=8),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(SURROGATE_TEXT)
def test_lone_surrogates_route_the_same_with_and_without_the_automaton(text: str) -> None:
    """A lone surrogate made the Aho-Corasick pass raise UnicodeEncodeError; any str routes,
    and the fast and the pure-Python pass agree."""
    fast = _fast_and_slow()[0].route(text)
    slow = _fast_and_slow()[1].route(text)
    assert fast == slow


_PAIR: list[Any] = []


def _fast_and_slow() -> list[Any]:
    if not _PAIR:
        fast = load_packs(["en"], subject_names=EXAMPLE_SUBJECTS)
        fast.matcher()._build()
        slow = load_packs(["en"], subject_names=EXAMPLE_SUBJECTS)
        matcher = slow.matcher()
        saved = sys.modules.get("ahocorasick_rs")
        sys.modules["ahocorasick_rs"] = None  # type: ignore[assignment]
        try:
            matcher._build()
        finally:
            if saved is not None:
                sys.modules["ahocorasick_rs"] = saved
            else:
                del sys.modules["ahocorasick_rs"]
        assert fast.matcher()._ac is not None and matcher._ac is None
        _PAIR.extend([fast, slow])
    return _PAIR
