"""The faithfulness gate on arbitrary ``str``: a result or a documented error, nothing else.

Documented (docs/gates.md, "Limits and errors"): ``InputTooLargeError``, ``EvidenceError``,
``FormulaError``, ``GateSettingError``, ``UnknownLocaleError`` (all ``GuardlexError``).
A ``RecursionError`` on a deep formula or a ``ValueError`` from ``int()`` on a 5,000-digit
number or version is a bug this file keeps out.
"""

from __future__ import annotations

import contextlib
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guardlex.errors import GuardlexError
from guardlex.gates import FormulaError, accept, audit, evaluate, resolve

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text with the characters that matter to the gate: digits (ASCII, Persian, Devanagari),
# separators, operators, brackets, unit and polarity words, and anything else.
_PIECES = st.sampled_from(
    [
        "9" * 5000,
        "1." + "5" * 4400,
        "(" * 300,
        ")" * 300,
        "-" * 400,
        "×",
        "÷",
        "/",
        "%",
        "۲۰",
        "२०",
        " per month",
        " not included",
        " unlimited",
        " USD",
        "$",
        "€",
        "1,000",
        "v" + "7" * 4500,
        "\ud800",
        "\u200b",
        " ",
        ".",
        "\n",
    ]
)
_TEXT = st.lists(st.one_of(st.text(max_size=30), _PIECES), max_size=6).map("".join)


def _documented(fn) -> None:  # type: ignore[no-untyped-def]
    with contextlib.suppress(GuardlexError):
        fn()


@FUZZ
@given(answer=_TEXT, quote=_TEXT, value=_TEXT, formula=_TEXT)
def test_audit_any_text(answer: str, quote: str, value: str, formula: str) -> None:
    _documented(lambda: audit(answer, [quote]))
    _documented(lambda: audit(answer, [quote], computed={value: formula}))
    _documented(lambda: audit(answer, [quote], subjects=[value]))


@FUZZ
@given(value=_TEXT, quote=_TEXT, evidence=_TEXT, subject=st.none() | _TEXT)
def test_accept_any_text(value: str, quote: str, evidence: str, subject: str | None) -> None:
    _documented(lambda: accept("price", value, quote, evidence, subject))


@FUZZ
@given(value=_TEXT, quote=_TEXT, text=_TEXT, version=st.none() | _TEXT, v2=st.none() | _TEXT)
def test_resolve_any_text(
    value: str, quote: str, text: str, version: str | None, v2: str | None
) -> None:
    fact = {"field": "price", "value": value, "quote": quote, "doc": "a"}
    docs = [
        {"doc": "a", "text": text, "version": version},
        {"doc": "a", "text": text, "version": v2},
    ]
    _documented(lambda: resolve("price", [fact], docs, now=date(2026, 1, 1)))
    _documented(lambda: resolve("price", None, docs, now=date(2026, 1, 1)))


@pytest.mark.parametrize(
    "formula", ["(" * 150 + "3" + ")" * 150, "-" * 500 + "3", "(-" * 200 + "3" + ")" * 200]
)
def test_deep_formula_is_a_formula_error(formula: str) -> None:
    with pytest.raises(FormulaError, match="deep"):
        evaluate(formula)
    with pytest.raises(FormulaError):
        audit("It costs 3.", ["it costs 3"], computed={"3": formula})


def test_nesting_within_the_limit_still_evaluates() -> None:
    assert evaluate("(" * 50 + "3 × 8" + ")" * 50)[0] == 24
    assert evaluate("- - 3")[0] == 3


def test_five_thousand_digits_are_documented_errors_or_results() -> None:
    from guardlex.errors import InputTooLargeError

    big = "9" * 5000
    with pytest.raises(InputTooLargeError):
        audit(f"It costs {big}.", ["3 and 8"], computed={big: "3 × 8"})
    docs = [
        {"doc": "a", "text": "it costs 5", "version": big},
        {"doc": "a", "text": "it costs 6", "version": "1" + "0" * 4999 + "1"},
    ]
    fact = {"field": "price", "value": 6, "quote": "costs 6", "doc": "a"}
    # the longer number is the newer version: 10...01 (5,001 digits) beats 99...9 (5,000)
    r = resolve("price", [fact], docs, now=date(2026, 1, 1))
    assert r.status == "OK" and r.value == 6
