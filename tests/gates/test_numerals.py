"""Numbers without digits: Chinese numerals and number words, as the gates read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guardlex import load_packs
from guardlex.gates import SentenceGate, accept
from guardlex.gates._text import normalise, values
from guardlex.gates._vocab import vocab_for
from guardlex.gates.numerals import han_values, parse_han, word_values


@pytest.fixture(scope="module")
def packs():
    return load_packs()


@pytest.fixture(scope="module")
def vocab(packs):
    return vocab_for(packs)


@pytest.mark.parametrize(
    ("run", "value"),
    [
        ("一千九百五十", 1950),
        ("两万", 20000),
        ("二十", 20),
        ("十五", 15),
        ("一百零五", 105),
        ("二〇二五", 2025),
        ("一亿两千万", 120_000_000),
        ("万一", None),  # "in case"
        ("千万", None),  # "by all means"
        ("一一", None),  # "one by one"
        ("一百一千", None),
    ],
)
def test_chinese_numerals(run, value, vocab):
    got = parse_han(run, vocab)
    assert (None if got is None else int(got)) == value


def test_decimal_point_and_digits_with_a_multiplier(vocab):
    assert [sorted(v.keys) for v in han_values("三点五元", vocab)] == [["3.5"]]
    assert [sorted(v.keys) for v in han_values("月活 2万 用户, 3.5万元", vocab)] == [
        ["20000"],
        ["35000"],
    ]
    # 一点 is "a little", 统一 has one character only
    assert han_values("统一的一点", vocab) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("twenty-five seats", "25"),
        ("two hundred users", "200"),
        ("five thousand requests", "5000"),
        ("vingt-cinq sièges", "25"),
        ("zwanzig plätze", "20"),
    ],
)
def test_number_words(text, value, vocab):
    assert [sorted(v.keys) for v in word_values(normalise(text), vocab)] == [[value]]


@given(st.integers(min_value=1, max_value=99_999_999))
def test_grouped_digits_read_back_as_one_number(n):
    text = f"{n:,}".replace(",", "'")
    assert [v.keys for v in values(text)] == [frozenset({str(n)})]


def test_apostrophe_grouping_only_as_a_whole_token():
    assert [v.text for v in values("5'10 tall")] == ["5", "10"]
    assert [v.text for v in values("a_1 b")] == ["1"]


def test_the_gate_compares_numerals_and_number_words(packs):
    gate = SentenceGate(["标准版包含 20 个席位。", "The Team plan includes 20 seats."], packs=packs)
    assert gate.check("标准版包含二十个席位[1]。").ok
    verdict = gate.check("标准版包含三十个席位[1]。")
    assert (verdict.ok, verdict.reason) == (False, "unsupported_value")
    assert gate.check("The Team plan includes twenty seats [2].").ok
    verdict = gate.check("The Team plan includes twenty-five seats [2].")
    assert (verdict.ok, verdict.reason) == (False, "unsupported_value")
    assert verdict.token == "twenty-five"
    # a number word without a unit is not a value: "the two plans" needs no source
    assert gate.check("The article compares the two plans [2].").ok


def test_accept_reads_numerals_in_the_quote(packs):
    quote = "企业版提供一千九百五十个席位"
    assert accept("seats", 1950, quote, quote + "。", packs=packs).ok
    assert accept("seats", "一千九百五十", quote, quote + "。", packs=packs).ok
    assert accept("seats", 20, "twenty seats", "The plan has twenty seats.", packs=packs).ok
