"""The faithfulness gate: accept, audit, resolve and the rule-based extractor."""

from __future__ import annotations

import doctest
from datetime import date
from fractions import Fraction
from importlib import resources

import pytest
import yaml

import guardlex.gates.faithfulness as faithfulness_module
from guardlex.gates import (
    CONFLICT,
    HIT_BUT_UNANSWERABLE,
    NO_HIT,
    OK,
    Evidence,
    EvidenceError,
    Fact,
    FormulaError,
    accept,
    audit,
    evaluate,
    extract_facts,
    in_force,
    resolve,
)

POLICY_EN = (
    "Standard plan includes 20 seats; extra seats cost 8 per seat per month, excluding tax. "
    "Enterprise: unlimited seats. Daily proration is not supported."
)
POLICY_ZH = (
    "标准版包含 20 个席位，超出部分 8 元/席位/月，价格不含税。企业版不限席位。不支持按天折算。"
)

# ---------------------------------------------------------------------------- accept


@pytest.mark.parametrize(
    ("value", "quote", "subject", "reason"),
    [
        ("20", "Standard plan includes 20 seats", "Standard", None),
        (20, "Standard plan includes 20 seats", None, None),
        ("۲۰", "Standard plan includes 20 seats", None, None),
        ("20", "Standard plan includes 200 seats", None, "value_not_in_quote"),
        ("20", "The plan launched in 2025", None, "value_not_in_quote"),
        ("20", "Standard plan includes 20 seats", "Enterprise", "subject_not_in_quote"),
        ("20", "Standard plan includes 20 seats!", None, "quote_not_in_evidence"),
        ("20", "", None, "empty_quote"),
        ("unlimited", "Enterprise: unlimited seats", "Enterprise", None),
        ("unlimited", "Enterprise: unlimited seats", None, None),
        (False, "extra seats cost 8 per seat per month, excluding tax", None, None),
        (True, "extra seats cost 8 per seat per month, excluding tax", None, "value_not_in_quote"),
        ("8", "extra seats cost 8 per seat per month", "seat", None),
    ],
)
def test_accept(packs, value, quote, subject, reason):
    evidence = POLICY_EN + " Old page: Standard plan includes 200 seats. The plan launched in 2025."
    result = accept("f", value, quote, evidence, subject, packs=packs)
    assert result.reason == reason
    assert result.ok is (reason is None)


def test_accept_zh_subject_must_share_the_quote(packs):
    # 20 and 企业版 both occur in the evidence, but never in one quote (seed §8.5)
    assert not accept("seats", "20", "标准版包含 20 个席位", POLICY_ZH, "企业版", packs=packs).ok
    assert accept("seats", "20", "标准版包含 20 个席位", POLICY_ZH, "标准版", packs=packs).ok
    assert accept("seats", "unlimited", "企业版不限席位", POLICY_ZH, "企业版", packs=packs).ok


# ----------------------------------------------------------------------------- audit

AUDIT_CASES = [
    # (locale, answer, quotes, expected codes)
    ("en", "Extra seats cost 8 per seat per month, excluding tax.", [POLICY_EN], []),
    ("en", "The Standard plan includes 20 seats.", [POLICY_EN], []),
    ("en", "Extra seats cost 10 per seat per month.", [POLICY_EN], ["number_not_in_quote"]),
    ("en", "Extra seats cost 8 per person per day.", [POLICY_EN], ["unit_mismatch"]),
    ("en", "Prices include tax.", [POLICY_EN], ["polarity_flip"]),
    ("en", "Daily proration is supported.", [POLICY_EN], ["polarity_flip"]),
    (
        "en",
        "Enterprise includes 100 seats.",
        [POLICY_EN],
        ["number_not_in_quote", "unlimited_as_number"],
    ),
    ("en", "Enterprise includes 20 seats.", [POLICY_EN], ["unlimited_as_number"]),
    ("en", "The team has 12 people.", ["It was built by a team of 12 engineers."], []),
    (
        "en",
        "The Standard plan does not include 20 seats.",
        ["The Standard plan includes 20 seats."],
        ["polarity_flip"],
    ),
    ("zh", "标准版包含 20 个席位，超出部分 8 元/席位/月，价格不含税。", [POLICY_ZH], []),
    ("zh", "超出部分 10 元/席位/月。", [POLICY_ZH], ["number_not_in_quote"]),
    ("zh", "超出部分 8 元/人/天。", [POLICY_ZH], ["unit_mismatch"]),
    ("zh", "价格含税。", [POLICY_ZH], ["polarity_flip"]),
    ("zh", "支持按天折算。", [POLICY_ZH], ["polarity_flip"]),
    ("zh", "企业版有 100 个席位。", [POLICY_ZH], ["number_not_in_quote", "unlimited_as_number"]),
    (
        "es",
        "Cada puesto adicional cuesta 8 euros al mes.",
        ["Cada puesto adicional cuesta 8 euros al mes, impuestos no incluidos."],
        [],
    ),
    (
        "es",
        "Cada puesto adicional cuesta 8 euros por persona al día.",
        ["Cada puesto adicional cuesta 8 euros al mes."],
        ["unit_mismatch"],
    ),
    (
        "es",
        "Los impuestos están incluidos.",
        ["Cada puesto cuesta 8 euros al mes, impuestos no incluidos."],
        ["polarity_flip"],
    ),
    (
        "es",
        "El plan Empresa tiene 50 puestos.",
        ["El plan Empresa tiene puestos ilimitados."],
        ["number_not_in_quote", "unlimited_as_number"],
    ),
    (
        "ru",
        "НДС включен.",
        ["Дополнительное место стоит 1 500 рублей в месяц, НДС не включен."],
        ["polarity_flip"],
    ),
    (
        "ru",
        "Тариф «Корпоративный» включает 50 мест.",
        ["В тарифе «Корпоративный» мест без ограничений."],
        ["number_not_in_quote", "unlimited_as_number"],
    ),
    (
        "de",
        "Die Einrichtung ist enthalten.",
        ["Die Einrichtung ist nicht enthalten."],
        ["polarity_flip"],
    ),
    (
        "de",
        "Der Tarif kostet 12 Euro pro Nutzer im Tag.",
        ["Der Tarif kostet 12 Euro pro Nutzer im Monat."],
        ["unit_mismatch"],
    ),
    ("fa", "مالیات شامل می‌شود.", ["مالیات شامل نمی‌شود."], ["polarity_flip"]),
    ("fa", "مالیات شامل میشود.", ["مالیات شامل نمیشود."], ["polarity_flip"]),  # joined
    ("fa", "مالیات شامل نمیشود.", ["مالیات شامل نمی‌شود."], []),
    (
        "fa",
        "طرح سازمانی ۵۰ صندلی دارد.",
        ["طرح سازمانی نامحدود صندلی دارد."],
        ["number_not_in_quote", "unlimited_as_number"],
    ),
    ("ar", "الدعم الهاتفي مشمول.", ["الدعم الهاتفي غير مشمول."], ["polarity_flip"]),
    ("ar", "الدعم الهاتفي مشمول.", ["الباقة أساسية والدعم الهاتفي غير مشمول."], ["polarity_flip"]),
    ("ar", "الدعم الهاتفي مشمول.", ["السعر ثابت، والدعم الهاتفي وغير مشمول."], ["polarity_flip"]),
    ("ar", "تشمل الباقة ٦ مستخدمين.", ["تشمل الباقة 6 مستخدمين."], []),
    ("ar", "تشمل الباقة 8 مستخدمين.", ["تشمل الباقة 6 مستخدمين."], ["number_not_in_quote"]),
]


@pytest.mark.parametrize(
    ("locale", "answer", "quotes", "codes"),
    AUDIT_CASES,
    ids=[f"{c[0]}-{'-'.join(c[3]) or 'ok'}-{i}" for i, c in enumerate(AUDIT_CASES)],
)
def test_audit(packs, locale, answer, quotes, codes):
    found = [v.code for v in audit(answer, quotes, packs=packs)]
    assert sorted(found) == sorted(codes), audit(answer, quotes, packs=packs)


def test_audit_with_locale_uses_that_packs_words(packs):
    # the Chinese polarity pair is not in the English lexicon
    assert audit("价格含税。", [POLICY_ZH], locale="zh", packs=packs)
    assert not audit("价格含税。", [POLICY_ZH], locale="en", packs=packs)


def test_computed_numbers_carry_their_formula(packs):
    answer = "Three extra seats cost 24 per month."
    quotes = ["extra seats cost 8 per seat per month", "the team needs 3 extra seats"]
    assert [v.code for v in audit(answer, quotes, packs=packs)] == ["number_not_in_quote"]
    assert audit(answer, quotes, computed={"24": "3 × 8"}, packs=packs) == []
    wrong = audit(answer, quotes, computed={"24": "3 × 9"}, packs=packs)
    assert sorted(v.code for v in wrong) == ["formula_input_not_in_quote", "formula_mismatch"]
    assert [v.token for v in wrong if v.code == "formula_input_not_in_quote"] == ["9"]


def test_subject_mismatch_in_audit(packs):
    quotes = ["The Standard plan includes 20 seats. The Pro plan includes 50 seats."]
    subjects = ["Standard plan", "Pro plan"]
    assert audit("The Pro plan includes 50 seats.", quotes, subjects=subjects, packs=packs) == []
    found = audit("The Pro plan includes 20 seats.", quotes, subjects=subjects, packs=packs)
    assert [(v.code, v.token) for v in found] == [("subject_mismatch", "20")]


def test_subject_switch_found_without_subjects(packs):
    quotes = ["The Standard plan includes 20 seats.", "The Pro plan includes 50 seats."]
    found = audit("The Pro plan includes 20 seats.", quotes, packs=packs)
    assert [(v.code, v.token) for v in found] == [("subject_mismatch", "20")]
    assert audit("The Standard plan includes 20 seats.", quotes, packs=packs) == []
    assert audit("The plan includes 20 seats.", quotes, packs=packs) == []  # names no claim


def test_evaluate_is_plain_arithmetic():
    assert evaluate("(3 + 1) * 8 / 2")[0] == Fraction(16)
    assert evaluate("۳ × ۸") == (Fraction(24), ["3", "8"])
    for bad in ("__import__('os')", "3 +", "2 ** 8", "1 / 0", ""):
        with pytest.raises(FormulaError):
            evaluate(bad)


def test_doctests():
    assert doctest.testmod(faithfulness_module).failed == 0


# --------------------------------------------------------------------------- resolve

DOCS = [
    {"doc": "policy", "version": "v1", "text": "Standard plan includes 30 seats."},
    {"doc": "policy", "version": "v3", "text": POLICY_EN},
]


def test_resolve_keeps_only_the_version_in_force(packs):
    facts = [
        {
            "field": "seats",
            "value": "30",
            "quote": "Standard plan includes 30 seats.",
            "doc": "policy",
        },
        {
            "field": "seats",
            "value": "20",
            "quote": "Standard plan includes 20 seats",
            "doc": "policy",
        },
    ]
    result = resolve("seats", facts, DOCS, packs=packs)
    assert (result.status, result.value) == (OK, "20")


def test_resolve_conflict_never_guesses(packs):
    docs = [{"doc": "team", "version": 3, "text": "Team includes 5 seats. Team includes 10 seats."}]
    facts = [
        Fact("seats", "5", "Team includes 5 seats.", "team"),
        Fact("seats", "10", "Team includes 10 seats.", "team"),
    ]
    result = resolve("seats", facts, docs, packs=packs)
    assert result.status == CONFLICT
    assert result.value is None
    assert set(result.values) == {"5", "10"}


def test_resolve_same_value_twice_is_ok(packs):
    docs = [{"doc": "a", "text": "Team includes 5 seats."}, {"doc": "b", "text": "Team: 5 seats."}]
    facts = [
        Fact("seats", "5", "Team includes 5 seats.", "a"),
        Fact("seats", 5, "Team: 5 seats.", "b"),
    ]
    assert resolve("seats", facts, docs, packs=packs).status == OK


def test_resolve_ignores_quotes_not_in_their_document(packs):
    facts = [Fact("seats", "25", "Standard plan includes 25 seats.", "policy")]
    assert resolve("seats", facts, DOCS, packs=packs).status == HIT_BUT_UNANSWERABLE


def test_resolve_no_hit_and_unanswerable(packs):
    assert resolve("seats", [], [], packs=packs).status == NO_HIT
    assert resolve("seats", [], DOCS, packs=packs).status == HIT_BUT_UNANSWERABLE
    expired = [{"doc": "p", "expiry": "2020-01-01", "text": "Team includes 5 seats."}]
    assert resolve("seats", None, expired, now=date(2024, 1, 1), packs=packs).status == NO_HIT


def test_in_force_by_dates():
    docs = [
        Evidence.from_mapping(
            {"doc": "t", "effective": "2023-01-01", "expiry": "2024-12-31", "text": "old"}
        ),
        Evidence.from_mapping({"doc": "t", "effective": "2025-01-01", "text": "new"}),
    ]
    assert [d.text for d in in_force(docs, date(2024, 12, 31))] == ["old"]  # expiry inclusive
    assert [d.text for d in in_force(docs, date(2025, 1, 1))] == ["new"]
    assert in_force(docs, date(2022, 6, 1)) == []


def test_versions_compare_as_numbers():
    docs = [Evidence("d", "a", version="v9"), Evidence("d", "b", version="v10")]
    assert [d.text for d in in_force(docs)] == ["b"]


def test_bad_evidence_is_a_specific_error(packs):
    with pytest.raises(EvidenceError):
        resolve("seats", [], [{"text": "no doc id"}], packs=packs)
    with pytest.raises(EvidenceError):
        resolve("seats", [], [{"doc": "d", "effective": "next week", "text": "x"}], packs=packs)
    with pytest.raises(EvidenceError):
        resolve("seats", [{"value": "5"}], DOCS, packs=packs)


# ------------------------------------------------------------------------- extractor


@pytest.mark.parametrize(
    ("field", "subject", "text", "values"),
    [
        ("seats_included", "Standard", POLICY_EN, ["20"]),
        ("seats_included", "Enterprise", POLICY_EN, ["unlimited"]),
        ("price_per_seat", None, POLICY_EN, ["8"]),
        ("tax_included", None, POLICY_EN, [False]),
        ("proration_supported", None, POLICY_EN, [False]),
        ("席位", "标准版", POLICY_ZH, ["20"]),
        ("席位", "企业版", POLICY_ZH, ["unlimited"]),
        ("每席位价格", None, POLICY_ZH, ["8"]),
        ("含税", None, POLICY_ZH, [False]),
    ],
)
def test_extractor_on_the_policy(packs, field, subject, text, values):
    facts = extract_facts(field, [{"doc": "policy", "text": text}], subject=subject, packs=packs)
    assert [f.value for f in facts] == values
    assert all(f.quote in text for f in facts)


def test_extractor_feeds_resolve_without_a_model(packs):
    result = resolve("seats_included", None, [*DOCS], packs=packs)
    # 20 for Standard, "unlimited" for Enterprise: two values in force, never a guess
    assert result.status == CONFLICT
    assert set(result.values) == {"20", "unlimited"}
    standard = resolve("seats_included", None, DOCS, subject="Standard", packs=packs)
    assert (standard.status, standard.value) == (OK, "20")
    enterprise = resolve("seats_included", None, DOCS, subject="Enterprise", packs=packs)
    assert (enterprise.status, enterprise.value) == (OK, "unlimited")


def _golden_cases():
    text = (
        resources.files("guardlex").joinpath("corpus/golden/faithfulness.yaml").read_text("utf-8")
    )
    return yaml.safe_load(text)["cases"]


@pytest.mark.parametrize("case", _golden_cases(), ids=lambda c: c.get("id", "case"))
def test_golden_faithfulness(packs, case):
    result = resolve(case["field"], case.get("facts"), case["evidence"], packs=packs)
    assert result.status == case["expect_status"]
    if "expect_value" in case:
        assert str(result.value) == str(case["expect_value"])
    for bad in case.get("must_not") or []:
        assert all(bad not in str(v) for v in result.values)
