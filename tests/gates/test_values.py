"""Value tokens: whole numbers, URLs and addresses compared after normalisation."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

import guardlex.gates._text as text_module
from guardlex.gates._text import number_readings, supported, value_keys, values
from guardlex.normalise import normalise


def _supported(answer: str, source: str) -> bool:
    keys = value_keys(normalise(source))
    return all(supported(v, keys) for v in values(normalise(answer)))


@pytest.mark.parametrize(
    ("answer", "source", "ok"),
    [
        ("20", "It appeared in 2025.", False),  # 20 is not inside 2025
        ("20", "It has 200 seats.", False),
        ("2025", "It appeared in 2025.", True),
        ("۲۰", "It has 20 seats.", True),  # Persian digits
        ("٢٠", "It has 20 seats.", True),  # Arabic-Indic digits
        ("20", "۲۰ صندلی", True),
        ("1,500", "It costs 1500 euros.", True),
        ("1500", "It costs 1,500 euros.", True),
        ("1.500", "Es kostet 1500 Euro.", True),  # German grouping
        ("3.5", "قیمت ۳٫۵ دلار است", True),  # Arabic decimal separator
        ("3,5", "It is 3.5 hours.", True),  # decimal comma
        ("3.50", "It is 3.5 hours.", True),
        ("3.5", "It is 35 hours.", False),
        ("0.84", "from 0.71 to 0.84", True),
        ("0.8", "from 0.71 to 0.84", False),
        ("https://example.com/docs", "see example.com/docs", True),
        ("example.com/docs/v2", "see example.com/docs", False),
        ("team@example.org", "mail TEAM@example.org.", True),
        ("ops@example.org", "mail team@example.org.", False),
        ("२०", "It has 20 seats.", True),  # Devanagari digits
        ("２０", "It has 20 seats.", True),  # full-width digits
        ("1 500", "стоит 1500 рублей", True),  # space-grouped thousands
        ("1\u00a0500", "стоит 1 500 рублей", True),
        ("1 500", "стоит 1 600 рублей", False),
        ("1 600", "coûte 1 500 €", False),
        ("10 200", "10 runs of 200 steps", True),  # two numbers, both in the source
        ("500", "стоит 1 500 рублей", False),  # a part of 1 500 is not 500
    ],
)
def test_whole_token_support(answer, source, ok):
    assert _supported(answer, source) is ok


def test_numbers_inside_urls_are_part_of_the_url():
    found = values(normalise("see https://x.org/v2/page3 and 7 more"))
    assert [(v.kind, v.text) for v in found] == [("url", "https://x.org/v2/page3"), ("number", "7")]


def test_enumerator_is_not_a_value():
    assert [v.text for v in values("1. standard: 20 seats", skip_enumerator=True)] == ["20"]
    assert [v.text for v in values("1. standard: 20 seats")] == ["1", "20"]


def test_doctests():
    assert doctest.testmod(text_module).failed == 0


@given(st.integers(min_value=0, max_value=10**9))
def test_grouped_and_plain_forms_agree(n):
    grouped = f"{n:,}"
    assert number_readings(grouped)[0] & number_readings(str(n))[0]


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_different_integers_never_match(a, b):
    if a != b:
        assert not (number_readings(str(a))[0] & number_readings(str(b))[0])
