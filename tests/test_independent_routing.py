"""The held-out routing set written by QA independently of the packs.

``tests/data/independent/<code>.yaml`` holds routing cases per locale (refusals of every
category, overview questions, hard negatives, follow-ups and evasions) written without
reading the packs, so they measure the packs the way a user would, not the way their
authors imagined. ``first_person.yaml`` holds answer sentences with traps for the
first-person lexicons. All locales are loaded, with the owner's names configured as a
deployment would, so collisions between locales count.

Test ids: ``independent/<code>/<n>`` and ``independent/first_person/<code>/<n>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex import load_packs
from guardlex.rules import Packs

DATA_DIR = Path(__file__).parent / "data" / "independent"
FIRST_PERSON_FILE = DATA_DIR / "first_person.yaml"
KNOWN_FAILURES_FILE = DATA_DIR / "known_failures.yaml"
SUBJECT_NAMES = (
    "Dana Reyes",
    "دانا ریس",
    "دانا رييس",
    "Дана Рейес",
    "दाना रेयेस",
    "达娜·雷耶斯",
)


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), f"{path.name}: expected a mapping"
    return doc


def _routing_params() -> list[Any]:
    params: list[Any] = []
    known = {
        (k["locale"], k["text"], k.get("previous")): k["reason"]
        for k in _load(KNOWN_FAILURES_FILE)["known_failures"]
    }
    for path in sorted(DATA_DIR.glob("*.yaml")):
        if path in (FIRST_PERSON_FILE, KNOWN_FAILURES_FILE):
            continue
        doc = _load(path)
        code = doc.get("locale", path.stem)
        for i, case in enumerate(doc.get("cases") or []):
            # a known failure stays in the set and must keep failing until it is fixed
            reason = known.pop((code, case["text"], case.get("previous")), None)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(case, id=f"independent/{code}/{i}", marks=marks))
    assert not known, f"known_failures.yaml lists cases that do not exist: {list(known)}"
    return params


def _first_person_params() -> list[Any]:
    params: list[Any] = []
    counters: dict[str, int] = {}
    for case in _load(FIRST_PERSON_FILE).get("cases") or []:
        code = case["locale"]
        n = counters.get(code, 0)
        counters[code] = n + 1
        params.append(pytest.param(case, id=f"independent/first_person/{code}/{n}"))
    return params


@pytest.fixture(scope="module")
def packs() -> Packs:
    """Every shipped locale, with the owner's names in each script configured."""
    return load_packs(subject_names=SUBJECT_NAMES)


@pytest.mark.parametrize("case", _routing_params())
def test_routing(packs: Packs, case: dict[str, Any]) -> None:
    """The question routes to the expected kind (and category, and topic if given)."""
    got = packs.route(case["text"], previous=case.get("previous"))
    detail = (
        f"{case['text']!r} (previous={case.get('previous')!r}) -> {got.kind} "
        f"{got.category or got.topic or ''} [{got.locale}/{got.rule_id} span={got.span}]"
    )
    assert got.kind == case["expect"], detail
    if case["expect"] == "refuse" and case.get("category"):
        assert got.category == case["category"], detail
    if case["expect"] == "overview" and case.get("topic"):
        assert got.topic == case["topic"], detail


@pytest.mark.parametrize("case", _first_person_params())
def test_first_person(packs: Packs, case: dict[str, Any]) -> None:
    """The sentence is (or is not) recognised as first person in its own locale."""
    hit = packs.first_person(case["text"], locale=case["locale"])
    assert (hit is not None) == case["expect"], f"{case['text']!r} -> {hit}"


def test_every_locale_file_is_sizeable() -> None:
    """Each locale file covers refusals of all five categories, overview and negatives."""
    for path in sorted(DATA_DIR.glob("*.yaml")):
        if path in (FIRST_PERSON_FILE, KNOWN_FAILURES_FILE):
            continue
        cases = _load(path)["cases"]
        cats = {c.get("category") for c in cases if c["expect"] == "refuse"}
        assert {"engagement", "personal_data", "speculation", "meta", "task"} <= cats, path
        assert sum(c["expect"] == "overview" for c in cases) >= 5, path
        assert sum(c["expect"] == "retrieve" for c in cases) >= 8, path
        assert sum("previous" in c for c in cases) >= 3, path
