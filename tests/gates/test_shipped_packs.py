"""The gates with the shipped packs: the golden gate set and a few cases per language.

The other gate tests pin behaviour with small fixture packs; these check that the gates
and the real lexicons, first-person lists and messages work together.
"""

from __future__ import annotations

from importlib import resources

import pytest
import regex
import yaml

from guardlex import load_packs
from guardlex.gates import Released, SentenceGate, Stopped, Truncated, audit
from guardlex.normalise import normalise


@pytest.fixture(scope="module")
def shipped():
    return load_packs()


def _golden(name: str) -> list[dict]:
    text = resources.files("guardlex").joinpath(f"corpus/golden/{name}").read_text("utf-8")
    return yaml.safe_load(text)["cases"]


@pytest.mark.parametrize("case", _golden("gate.yaml"), ids=lambda c: c["id"])
def test_golden_gate_cases(shipped, case):
    gate = SentenceGate(case["sources"], packs=shipped, locale=case["locale"])
    for chunks in ([case["answer"]], list(case["answer"])):
        events = list(gate.stream(chunks))
        last = events[-1] if events else None
        outcome = {Stopped: "stop", Truncated: "truncated"}.get(type(last), "released")
        assert outcome == case["expect"], events
        if case.get("reason"):
            assert isinstance(last, Stopped) and last.reason == case["reason"]
        shown = normalise(
            "".join(e.text for e in events if isinstance(e, Released))
            + "".join(getattr(e, "message", "") for e in events)
        )
        for text in case.get("must_include") or []:
            assert normalise(text) in shown
        for text in case.get("must_not") or []:
            assert normalise(text) not in shown


@pytest.mark.parametrize(
    ("locale", "sentence"),
    [
        ("en", "I can tell you that the plan has 20 seats [1]."),
        ("zh", "我认为标准版有 20 个席位[1]。"),
        ("ru", "Я думаю, что в тарифе 20 мест [1]."),
        ("fa", "من فکر می‌کنم طرح پایه ۲۰ صندلی دارد [1]."),
        ("es", "Yo diría que el plan tiene 20 puestos [1]."),
    ],
)
def test_first_person_with_shipped_lists(shipped, locale, sentence):
    gate = SentenceGate(["20 seats / 20 个席位 / 20 мест / ۲۰ صندلی / 20 puestos"], packs=shipped)
    assert gate.check(sentence).reason == "first_person"
    assert SentenceGate(["x 20"], packs=shipped, locale=locale).check(sentence).reason == (
        "first_person"
    )


def test_self_correction_is_not_first_person_in_chinese(shipped):
    gate = SentenceGate(["自我修正让回答更稳定。"], packs=shipped, locale="zh")
    assert gate.check("她介绍了自我修正的方法[1]。").ok


@pytest.mark.parametrize(
    ("answer", "quote", "code"),
    [
        ("Phone support is included.", "Phone support is not included.", "polarity_flip"),
        ("Streaming is supported.", "Streaming is not supported.", "polarity_flip"),
        (
            "Extra seats cost 8 per person per day.",
            "Extra seats cost 8 per seat per month.",
            "unit_mismatch",
        ),
        ("Enterprise has 100 seats.", "Enterprise: unlimited seats.", "unlimited_as_number"),
        ("价格含税。", "价格不含税。", "polarity_flip"),
        ("企业版有 100 个席位。", "企业版不限席位。", "unlimited_as_number"),
    ],
)
def test_audit_with_shipped_lexicons(shipped, answer, quote, code):
    assert code in {v.code for v in audit(answer, [quote], packs=shipped)}
    assert audit(quote, [quote], packs=shipped) == []


SUPPORTED = [
    (
        "en",
        "Phone support is available on weekdays from 9 to 17. On weekends, only e-mail support "
        "is offered. The free plan has 3 projects; the paid plan has unlimited projects.",
        [
            "Phone support is available on weekdays from 9 to 17 [1].",
            "On weekends, only e-mail support is offered [1].",
            "The free plan has 3 projects [1].",
            "The paid plan has unlimited projects [1].",
        ],
    ),
    (
        "es",
        "El plan Básico incluye 5 usuarios y 10 GB de almacenamiento. La API no está "
        "disponible en el plan Básico, pero sí en el plan Pro.",
        [
            "El plan Básico incluye 5 usuarios [1].",
            "Incluye 10 GB de almacenamiento [1].",
            "La API está disponible en el plan Pro [1].",  # the quote says it elliptically
            "En el plan Básico la API no está disponible [1].",
        ],
    ),
    (
        "de",
        "Der Tarif Team kostet 12 Euro pro Nutzer im Monat. Telefonsupport ist nicht "
        "enthalten, E-Mail-Support ist enthalten.",
        [
            "Der Tarif Team kostet 12 Euro pro Nutzer im Monat [1].",
            "E-Mail-Support ist enthalten [1].",
            "Telefonsupport ist nicht enthalten [1].",
        ],
    ),
    (
        "ru",
        "Тариф «Бизнес» стоит 1 200 рублей за место в месяц. Доступно 5000 запросов к API в день.",
        [
            "Тариф «Бизнес» стоит 1200 рублей за место в месяц [1].",
            "Доступно 5 000 запросов к API в день [1].",
        ],
    ),
    (
        "fr",
        "L'offre Cabinet coûte 12 euros par siège et par mois. L'export PDF est inclus.",
        ["L'offre Cabinet coûte 12 € par siège et par mois [1].", "L'export PDF est inclus [1]."],
    ),
    (
        "pt",
        "O plano Escritório inclui 3 usuários e custa 49 reais por mês.",
        ["O plano Escritório inclui 3 usuários [1].", "Ele custa 49 reais por mês [1]."],
    ),
    (
        "zh",
        "专业版每个团队提供 100 GB 存储空间，支持单点登录，不支持按天折算。",
        [
            "专业版每个团队提供 100 GB 存储空间[1]。",
            "专业版支持单点登录[1]。",
            "专业版不支持按天折算[1]。",
        ],
    ),
    (
        "fa",
        "در طرح پایه هر کاربر ۱۰ گیگابایت فضا دارد و پشتیبانی تلفنی ارائه نمی‌شود.",
        ["در طرح پایه هر کاربر ۱۰ گیگابایت فضا دارد [1].", "پشتیبانی تلفنی ارائه نمی‌شود [1]."],
    ),
    (
        "ar",
        "تشمل الباقة الأساسية 6 مستخدمين بسعر 30 دولارا شهريا، والدعم الهاتفي غير متاح.",
        [
            "تشمل الباقة الأساسية 6 مستخدمين [1].",
            "السعر 30 دولارا شهريا [1].",
            "الدعم الهاتفي غير متاح [1].",
        ],
    ),
    (
        "hi",
        "प्रो प्लान में हर छात्र को 20 GB स्टोरेज और रोज़ाना बैकअप मिलता है।",
        ["प्रो प्लान में हर छात्र को 20 GB स्टोरेज मिलता है [1]।", "इसमें रोज़ाना बैकअप भी मिलता है [1]।"],
    ),
]


@pytest.mark.parametrize(("locale", "source", "answers"), SUPPORTED, ids=[s[0] for s in SUPPORTED])
def test_supported_paraphrases_are_released(shipped, locale, source, answers):
    gate = SentenceGate([source], packs=shipped, locale=locale)
    events = list(gate.stream([" ".join(answers)]))
    assert all(isinstance(e, Released) for e in events), events
    assert len(events) == len(answers)


def _site_chunks() -> list[tuple[str, str]]:
    out = []
    for code in ("ar", "de", "en", "es", "fa", "fr", "hi", "pt", "ru", "zh"):
        path = resources.files("guardlex").joinpath(f"corpus/site/{code}.yaml")
        data = yaml.safe_load(path.read_text("utf-8"))
        for doc in data.get("documents") or []:
            out.extend((code, chunk["text"]) for chunk in doc.get("chunks") or [])
    return out


def test_site_sentences_quoted_verbatim_are_released_and_changed_numbers_stopped(shipped):
    """Every sentence of the sample site, cited as [1] against its own chunk, passes; the same
    sentence with one number changed (to a value the chunk does not have) is stopped."""
    from guardlex.gates import split_sentences
    from guardlex.gates._vocab import vocab_for

    is_abbr = vocab_for(shipped).is_abbreviation
    number = regex.compile(r"(?<![\d.,])\d+(?![\d.,])")
    checked = changed = 0
    for locale, chunk in _site_chunks():
        gate = SentenceGate([chunk], packs=shipped, locale=locale)
        chunk_norm = normalise(chunk)
        for sentence in split_sentences(chunk, is_abbr):
            verdict = gate.check(sentence + " [1]")
            assert verdict.ok, (locale, sentence, verdict)
            checked += 1
            m = number.search(sentence)
            if m:
                new = str(int(m.group()) + 7)
                if regex.search(rf"(?<!\d){new}(?!\d)", chunk_norm):
                    continue
                mutated = sentence[: m.start()] + new + sentence[m.end() :] + " [1]"
                assert gate.check(mutated).reason == "unsupported_value", mutated
                changed += 1
    assert checked > 500 and changed > 100  # the site corpus is really there
