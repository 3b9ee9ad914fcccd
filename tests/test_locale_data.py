"""The one generic harness for locale data, parametrized over every locale and rule.

Test ids:
- ``<code>/<section>/<rule-id>``: the rule's own examples (``match`` must route to the
  rule's category with only this locale loaded; ``no_match`` must not be caught by the rule);
- ``<code>/first_person``: the first-person examples;
- ``<code>/coverage``: every file present, enough rules per category and examples per rule;
- ``<code>/lint``: the linter finds no error;
- ``routing/<code>/<n>``: ``tests/data/routing/<code>.yaml`` with **all** locales loaded,
  so collisions between locales show up.

Locales are discovered by scanning, never listed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex import load_packs
from guardlex.rules import OVERVIEW_TOPICS, REFUSAL_CATEGORIES, Packs
from guardlex.rules._schema import FILE_KINDS
from guardlex.rules.lint import EXAMPLE_SUBJECTS, lint_locale
from guardlex.rules.loader import SHIPPED_DIR, RuleSpec, discover, load_locale

ROUTING_DIR = Path(__file__).parent / "data" / "routing"
MIN_RULES_PER_CATEGORY = 3  # frames generalise: a few rules per category, each over concepts
MIN_OVERVIEW_RULES = 10

FOUND = {code: folders for code, folders in discover(entry_points=False).items()}
SHIPPED = sorted(code for code, folders in FOUND.items() if folders[0].parent == SHIPPED_DIR)


def _rule_params() -> list[Any]:
    params: list[Any] = []
    for code in SHIPPED:
        try:
            data = load_locale(code, FOUND[code])
        except Exception as exc:  # a broken pack is one visible failure, not a crash
            params.append(pytest.param(code, None, str(exc), id=f"{code}/load"))
            continue
        for rule in data.rules:
            params.append(pytest.param(code, rule, None, id=f"{code}/{rule.section}/{rule.id}"))
    return params


def _routing_params() -> list[Any]:
    params: list[Any] = []
    for path in sorted(ROUTING_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        code = path.stem
        for i, case in enumerate(doc.get("cases") or []):
            params.append(pytest.param(code, case, id=f"routing/{code}/{i}"))
    return params


_PACKS: dict[str, Packs] = {}


def packs_for(code: str | None) -> Packs:
    """Packs with one locale (``code``) or all shipped locales (None), cached per session."""
    key = code or "*"
    if key not in _PACKS:
        _PACKS[key] = load_packs([code] if code else SHIPPED, subject_names=EXAMPLE_SUBJECTS)
    return _PACKS[key]


@pytest.mark.parametrize(("code", "rule", "error"), _rule_params())
def test_rule_examples(code: str, rule: RuleSpec | None, error: str | None) -> None:
    assert rule is not None, f"pack {code} does not load: {error}"
    packs = packs_for(code)
    want = "refuse" if rule.section == "refusal" else "overview"
    for example in rule.match:
        route = packs.route(example)
        assert route.kind == want, f"{example!r} routed to {route}"
        if want == "refuse":
            assert route.category == rule.category, f"{example!r} routed to {route}"
        assert route.span is not None
        assert 0 <= route.span[0] < route.span[1] <= len(example)
    for example in rule.no_match:
        hit = packs.match_rule(code, rule.id, example)
        assert hit is None, f"no_match {example!r} caught by {rule.id}: {hit}"


@pytest.mark.parametrize("code", SHIPPED, ids=[f"{c}/first_person" for c in SHIPPED])
def test_first_person_examples(code: str) -> None:
    packs = packs_for(code)
    data = load_locale(code, FOUND[code])
    examples = data.first_person.get("examples") or {}
    assert examples.get("match"), "first_person.yaml needs examples.match"
    assert examples.get("no_match"), "first_person.yaml needs examples.no_match"
    for text in examples["match"]:
        hit = packs.first_person(text, locale=code)
        assert hit is not None, text
        assert text[hit.span[0] : hit.span[1]] == hit.word
    for text in examples["no_match"]:
        assert packs.first_person(text, locale=code) is None, text


@pytest.mark.parametrize("code", SHIPPED, ids=[f"{c}/coverage" for c in SHIPPED])
def test_coverage(code: str) -> None:
    folder = FOUND[code][0]
    missing = [k for k in FILE_KINDS if not (folder / f"{k}.yaml").is_file()]
    assert not missing, f"{code} lacks {missing}"
    data = load_locale(code, FOUND[code])
    for category in REFUSAL_CATEGORIES:
        n = sum(1 for r in data.rules if r.category == category)
        assert n >= MIN_RULES_PER_CATEGORY, f"{code}/{category} has {n} rules"
    overview = [r for r in data.rules if r.section == "overview"]
    assert len(overview) >= MIN_OVERVIEW_RULES
    topics = {r.topic for r in overview}
    assert topics >= set(OVERVIEW_TOPICS), f"missing topics {set(OVERVIEW_TOPICS) - topics}"
    for rule in data.rules:
        assert len(rule.match) >= 2 and len(rule.no_match) >= 1, rule.id
    lexicon = data.lexicon
    assert sorted(lexicon.get("ordinals", {}), key=int) == [str(i) for i in range(1, 11)]
    assert lexicon.get("pronouns"), "lexicon.yaml needs subject pronouns"


@pytest.mark.parametrize("code", SHIPPED, ids=[f"{c}/lint" for c in SHIPPED])
def test_lint_clean(code: str) -> None:
    findings = lint_locale(code, FOUND[code], FOUND[code])
    errors = [str(f) for f in findings if f.level == "ERROR"]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(("code", "case"), _routing_params())
def test_routing_case(code: str, case: dict[str, Any]) -> None:
    assert case["expect"] in ("refuse", "overview", "retrieve"), case
    assert case.get("category") in (None, *REFUSAL_CATEGORIES), case
    assert case.get("topic") in (None, *OVERVIEW_TOPICS), case
    packs = packs_for(None)
    route = packs.route(case["text"], case.get("previous"))
    detail = f"{case['text']!r} (previous {case.get('previous')!r}) -> {route}"
    assert route.kind == case["expect"], detail
    if case.get("category"):
        assert route.category == case["category"], detail
    if case.get("topic"):
        assert route.topic == case["topic"], detail
    if route.span is not None:
        assert 0 <= route.span[0] < route.span[1] <= len(case["text"])


@pytest.mark.parametrize("code", SHIPPED, ids=[f"{c}/locale" for c in SHIPPED])
def test_locale_facts(code: str) -> None:
    from guardlex.normalise import normalise
    from guardlex.rules.locale_info import fallback_chain, root_locale, shipped_locale_infos

    infos = shipped_locale_infos()
    info = infos[code]
    assert info.path.endswith(f"{code}/locale.yaml"), "every locale has a locale.yaml"
    assert info.name and info.scripts
    chain = fallback_chain(code, infos)
    assert chain[-1] == root_locale(infos), f"{code} does not fall back to the root locale"
    assert all(c in infos for c in chain), f"{code} falls back to an unknown locale"
    for name in info.example_subjects:
        assert info.writes(name) > 0, f"example subject {name!r} is not in {info.scripts}"
    for word in (*info.titles, *info.titles_after, *info.money_words, *info.price_words):
        assert normalise(word).strip(" ."), f"{word!r} is empty after normalisation"
