"""``mentions`` finds a name as whole words by substring search, exactly as the regular
expression ``(?<!\\w)name(?!\\w)`` would (the pattern it replaced, whose compile time grew
with the name's length: a 4,500-character value took over a minute in ``accept``)."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.gates.faith.common import mentions


def _by_pattern(norm: str, name: str) -> list[int]:
    if not name:
        return []
    if regex.match(r"\p{Han}", name[0]):
        pattern = regex.escape(name)
    else:
        pattern = r"(?<!\w)" + regex.escape(name) + r"(?!\w)"
    return [m.start() for m in regex.finditer(pattern, norm)]


_ALPHABET = st.sampled_from([*"ab a_1-é达娜\u0301.", " ", "aa", "ab"])
_TEXT = st.lists(_ALPHABET, max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(norm=_TEXT, name=_TEXT)
def test_same_positions_as_the_whole_word_pattern(norm: str, name: str) -> None:
    assert mentions(norm, name) == _by_pattern(norm, name)


def test_whole_words_only_and_han_anywhere() -> None:
    assert mentions("dana and danal, dana_x, dana", "dana") == [0, 24]
    assert mentions("aaaa", "aa") == []  # no whole word: every occurrence touches a letter
    assert mentions("aa aa", "aa") == [0, 3]
    assert mentions("问达娜的", "达娜") == [1]


def test_a_long_value_is_found_beside_a_long_run_of_digits() -> None:
    value = "v" + "7" * 4500
    text = "9" * 5000 + " " + value + " end"
    assert mentions(text, value) == [5001]
