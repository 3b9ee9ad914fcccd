"""Faithfulness cases in every locale, as data (``tests/gates/data/faithfulness_<code>.yaml``).

Each case names the function it checks and what it must give:

* ``check: audit`` — ``quotes``, ``answer`` (``computed``, ``subjects`` optional);
  ``expect``: codes that must be among the violations, ``[]`` for no violation at all;
* ``check: accept`` — ``field``, ``value`` (``null`` allowed), ``quote``, ``evidence``,
  ``subject``; ``expect``: ``ok`` or the reason code;
* ``check: resolve`` — ``field``, ``documents``, ``facts`` (``null``: the rule-based
  extractor), ``now``, ``subject``; ``expect``: ``{status, value}`` (``value`` compared as
  a number when both are numbers; ``values`` for a CONFLICT, as a set).

The cases run against the shipped packs, with the case's locale as the audit locale.
"""

from __future__ import annotations

from datetime import date
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex import load_packs
from guardlex.gates import accept, audit, resolve

DATA = Path(__file__).parent / "data"
LOCALES = ["ar", "de", "en", "es", "fa", "fr", "hi", "pt", "ru", "zh"]


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(DATA.glob("faithfulness_*.yaml")):
        doc = yaml.safe_load(path.read_text("utf-8"))
        for case in doc["cases"]:
            out.append((doc["locale"], case))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def packs():
    return load_packs()


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a == b
    try:
        return Fraction(str(a)) == Fraction(str(b))
    except (ValueError, ZeroDivisionError):
        return str(a).strip().lower() == str(b).strip().lower()


def run_case(locale: str, case: dict[str, Any], packs: Any) -> tuple[bool, Any]:
    """Run one case; return (passed, what came out)."""
    check = case["check"]
    if check == "audit":
        found = audit(
            case["answer"],
            case["quotes"],
            case.get("audit_locale", locale),
            computed=case.get("computed"),
            subjects=case.get("subjects", ()),
            packs=packs,
        )
        codes = {v.code for v in found}
        want = set(case["expect"])
        ok = not codes if not want else want <= codes
        return ok, [(v.code, v.token) for v in found]
    if check == "accept":
        result = accept(
            case["field"],
            case["value"],
            case["quote"],
            case["evidence"],
            case.get("subject"),
            packs=packs,
        )
        want = case["expect"]
        return (result.ok if want == "ok" else result.reason == want), result
    if check == "resolve":
        now = case.get("now")
        result = resolve(
            case["field"],
            case.get("facts"),
            case["documents"],
            now=date.fromisoformat(str(now)) if now else None,
            subject=case.get("subject"),
            packs=packs,
        )
        want = case["expect"]
        ok = result.status == want["status"]
        if ok and "value" in want:
            ok = _same(result.value, want["value"])
        if ok and "values" in want:
            ok = len(result.values) == len(want["values"]) and all(
                any(_same(v, w) for v in result.values) for w in want["values"]
            )
        return ok, result
    raise ValueError(f"unknown check {check!r}")


def test_every_locale_has_cases_of_every_kind():
    by_locale: dict[str, list[dict[str, Any]]] = {}
    for locale, case in CASES:
        by_locale.setdefault(locale, []).append(case)
    assert sorted(by_locale) == LOCALES
    for locale, cases in by_locale.items():
        assert len(cases) >= 8, locale
        assert {c["check"] for c in cases} == {"audit", "accept", "resolve"}, locale
        ids = [c["id"] for c in cases]
        assert len(ids) == len(set(ids)), locale
        kinds = {t for c in cases for t in c.get("tags", ())}
        assert {"units", "polarity", "unlimited", "no-number"} <= kinds, (locale, kinds)


@pytest.mark.parametrize(("locale", "case"), CASES, ids=[c["id"] for _, c in CASES])
def test_case(locale, case, packs):
    ok, got = run_case(locale, case, packs)
    assert ok, f"{case['id']}: expected {case['expect']!r}, got {got!r}"


UNITS = {"seat", "user", "person", "hour", "day", "week", "month", "year", "minute"}
UNITS |= {"request", "token", "gb", "project", "session"}


@pytest.mark.parametrize("locale", LOCALES)
def test_every_lexicon_has_the_faithfulness_vocabulary(locale, packs):
    lex = packs.lexicon(locale)
    assert set(lex["units"]) == UNITS, set(lex["units"]) ^ UNITS
    assert len(lex["per"]) >= 3
    assert len(lex["negations"]) >= 7
    assert all(pair["positive"] and pair["negative"] for pair in lex["negations"])
    assert len(lex["unlimited"]) >= 5
    assert lex.get("not_applicable")
    assert lex.get("charge_words")
    # numbers without digits: number words, or a numeral system (Chinese)
    assert lex.get("number_words") or lex.get("numeral_digits")
