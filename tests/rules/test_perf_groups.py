"""The automaton built per group of characters (``Matcher._raw_hits``): the same hits, in
the same order, as one automaton of every string, and safe to build from several threads."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex import load_packs
from guardlex.normalise import normalise
from guardlex.rules.loader import discover, load_locale
from guardlex.rules.matcher import sanitise, string_group

CODES = ["en", "fr", "zh", "fa", "ru", "hi"]
NAMES = ["Dana Reyes", "دانا ریس", "达娜", "Дана Рейес"]
_MEMO: dict[str, Any] = {}


def _questions() -> list[str]:
    if "q" not in _MEMO:
        found = discover()
        out: list[str] = []
        for code in CODES:
            for spec in load_locale(code, found[code]).rules[::4]:
                out.extend(spec.match[:1] + spec.no_match[:1])
        _MEMO["q"] = out
    return list(_MEMO["q"])


def _reference() -> tuple[Any, Any]:
    """A matcher with every group built, and one automaton over all its strings."""
    if "ref" not in _MEMO:
        ahocorasick_rs = pytest.importorskip("ahocorasick_rs")
        m = load_packs(CODES, subject_names=NAMES).matcher()
        m.build_all()
        _MEMO["ref"] = (m, ahocorasick_rs.AhoCorasick(m._strings))
    return _MEMO["ref"]


def test_grouped_hits_equal_one_automaton_on_pack_examples() -> None:
    m, one = _reference()
    for q in _questions():
        text = sanitise(normalise(q))
        assert list(m._raw_hits(text)) == one.find_matches_as_indexes(text, overlapping=True)


PIECES = st.sampled_from(
    ["how much", " ", "قیمت", "价格", "多少", "стоимость", "कितना", "’s", "dana", "达娜", "x"]
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=10).map("".join))
def test_grouped_hits_equal_one_automaton_on_mixed_text(raw: str) -> None:
    m, one = _reference()
    text = sanitise(normalise(raw))
    assert list(m._raw_hits(text)) == one.find_matches_as_indexes(text, overlapping=True)


@given(st.text(min_size=1, max_size=12))
def test_a_string_goes_to_the_group_of_one_of_its_characters(s: str) -> None:
    """What makes building groups lazily exact: a text that holds the string holds that
    character, so the string's group is built and scanned for the text."""
    from guardlex.rules.matcher import _char_class

    assert string_group(s) in {_char_class(ch) for ch in s}


def test_groups_built_from_many_threads_give_the_same_hits() -> None:
    """Texts of several scripts scanned at once by six threads on a matcher whose groups
    are not built yet: each group is numbered once, and every hit is the reference's."""
    ref, one = _reference()
    texts = [sanitise(normalise(q)) for q in _questions()[:120]]
    want = [one.find_matches_as_indexes(t, overlapping=True) for t in texts]
    m = load_packs(CODES, subject_names=NAMES).matcher()  # no group built yet
    got: dict[int, Any] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def work(k: int) -> None:
        try:
            start.wait()
            for i in range(k, len(texts), 6):
                got[i] = [(m._strings[j], s, e) for j, s, e in m._raw_hits(texts[i])]
        except BaseException as exc:  # reported below
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors
    assert len(m._strings) == len(set(m._strings))  # no group numbered twice
    for i, hits in enumerate(want):
        assert got[i] == [(ref._strings[j], s, e) for j, s, e in hits]
