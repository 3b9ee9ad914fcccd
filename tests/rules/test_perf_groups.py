"""The automaton built per group of characters (``Matcher._raw_hits``): the same hits, in
the same order, as one automaton of every string, and safe to build from several threads;
plain words and phrases looked up word by word (``_plain_hits``) instead give the same
occurrences as the automaton that holds them."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex import load_packs
from guardlex.normalise import normalise
from guardlex.rules import matcher as matcher_module
from guardlex.rules.loader import discover, load_locale
from guardlex.rules.matcher import sanitise, string_group

CODES = ["en", "fr", "zh", "fa", "ru", "hi", "ar", "de"]
NAMES = ["Dana Reyes", "دانا ریس", "达娜", "Дана Рейес", "دانا رييس"]
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


def _matcher(plain: bool) -> Any:
    """A matcher with every group built: with plain strings looked up (as shipped), or
    (``plain=False``) with every string in the automatons."""
    m = load_packs(CODES, subject_names=NAMES).matcher()
    if plain:
        m.build_all()
        return m
    matcher_module.LOOK_UP_PLAIN = False
    try:
        m.build_all()
    finally:
        matcher_module.LOOK_UP_PLAIN = True
    assert not m._plain
    return m


def _reference() -> tuple[Any, Any]:
    """A matcher with every group built and every string in its automatons, and one
    automaton over all its strings."""
    if "ref" not in _MEMO:
        ahocorasick_rs = pytest.importorskip("ahocorasick_rs")
        m = _matcher(plain=False)
        _MEMO["ref"] = (m, ahocorasick_rs.AhoCorasick(m._strings))
    return _MEMO["ref"]


def _shipped() -> Any:
    if "plain" not in _MEMO:
        pytest.importorskip("ahocorasick_rs")
        _MEMO["plain"] = _matcher(plain=True)
    return _MEMO["plain"]


def _found(m: Any, text: str) -> tuple[Any, ...]:
    """What ``occurrences`` finds, with strings instead of their numbers."""
    occ = m.occurrences(text)
    return (occ.words, occ.stems, occ.procl, occ.pron, occ.names, occ.anchors)


def test_grouped_hits_equal_one_automaton_on_pack_examples() -> None:
    m, one = _reference()
    for q in _questions():
        text = sanitise(normalise(q))
        assert list(m._raw_hits(text)) == one.find_matches_as_indexes(text, overlapping=True)


#: words after a proclitic that starts a word, phrases across it, Han beside Latin
GLUED = [
    "ورقم هاتفها",
    "وبكم سعرها",
    "فسعرها كم",
    "كم راتبها وعمرها",
    "والراتب كم",
    "她的rate多少",
    "how much是多少",
    "l'adresse de Dana",
    "qu'elle facture combien",
]


def test_plain_look_ups_find_what_the_automaton_finds_on_pack_examples() -> None:
    ref, _one = _reference()
    m = _shipped()
    in_automatons = sum(len(numbers) for _, numbers in m._groups.values())
    assert len(m._plain) > 2 * in_automatons  # most strings are looked up
    # the same strings, but the plain ones numbered only once found
    assert set(m._strings) <= set(ref._strings)
    assert set(m._plain) | {s for s in m._strings if s not in m._plain} == set(ref._strings)
    assert any(_found(m, sanitise(normalise(q)))[2] for q in GLUED)  # proclitics are read
    for q in GLUED + _questions():
        text = sanitise(normalise(q))
        assert _found(m, text) == _found(ref, text), q


PIECES = st.sampled_from(
    [
        *("how much", " ", "قیمت", "价格", "多少", "стоимость", "कितना", "’s", "dana", "达娜"),
        *("x", "و", "ال", "ب", "رقم", "هاتف", " رقم هاتفها", "l'", "qu'", "how much does"),
        "她的rate",
    ]
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=10).map("".join))
def test_grouped_hits_equal_one_automaton_on_mixed_text(raw: str) -> None:
    m, one = _reference()
    text = sanitise(normalise(raw))
    assert list(m._raw_hits(text)) == one.find_matches_as_indexes(text, overlapping=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=10).map("".join))
def test_plain_look_ups_find_what_the_automaton_finds_on_mixed_text(raw: str) -> None:
    ref, _one = _reference()
    text = sanitise(normalise(raw))
    assert _found(_shipped(), text) == _found(ref, text)


@given(st.text(min_size=1, max_size=12))
def test_a_string_goes_to_the_group_of_one_of_its_characters(s: str) -> None:
    """What makes building groups lazily exact: a text that holds the string holds that
    character, so the string's group is built and scanned for the text."""
    from guardlex.rules.matcher import _char_class

    assert string_group(s) in {_char_class(ch) for ch in s}


def test_groups_built_from_many_threads_give_the_same_hits() -> None:
    """Texts of several scripts scanned at once by six threads on a matcher whose groups
    are not built yet: each group is numbered once, and every hit is the reference's."""
    ref = _shipped()
    texts = [sanitise(normalise(q)) for q in _questions()[:120]]
    want = [list(ref._raw_hits(t)) for t in texts]
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
    assert {t: _found(m, t) for t in texts} == {t: _found(ref, t) for t in texts}
