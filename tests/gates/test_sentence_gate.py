"""The streaming sentence gate: every reason code in several languages, streams, chunking."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.errors import InputTooLargeError, UnknownLocaleError
from guardlex.gates import GateSettingError, Released, SentenceGate, Stopped, Truncated, Verdict

SOURCES = {
    "en": [
        "The Standard plan includes 20 seats; extra seats cost 8 per seat per month, excluding "
        "tax. Enterprise: unlimited seats. Daily proration is not supported. Write to "
        "sales@example.com or see https://example.com/pricing. The plan launched in 2025.",
        "Recall rose from 0.71 to 0.84 on a test set of 1,200 questions.",
        "The preprint appeared in 2025.",
    ],
    "zh": [
        "标准版包含 20 个席位，超出部分 8 元/席位/月，价格不含税。企业版不限席位。不支持按天折算。"
    ],
    "fa": [
        "طرح پایه ۲۰ صندلی دارد و هر صندلی اضافه ماهانه ۸ دلار است. مالیات شامل نمی‌شود. "
        "طرح سازمانی نامحدود صندلی دارد."
    ],
    "ru": [
        "Тариф «Стандарт» включает 20 мест; дополнительное место стоит 1 500 рублей в месяц. "
        "НДС не включен. В тарифе «Корпоративный» мест без ограничений."
    ],
    "es": [
        "El plan Estándar incluye 20 puestos; cada puesto adicional cuesta 8 euros al mes, "
        "impuestos no incluidos. El plan Empresa tiene puestos ilimitados."
    ],
    "de": [
        "Der Tarif Basis enthält 20 GB Speicher und kostet 1.500 Euro im Jahr. Die Einrichtung "
        "ist nicht enthalten."
    ],
    "ar": ["تشمل الباقة الأساسية 6 مستخدمين بسعر 30 دولارا شهريا. الدعم الهاتفي غير مشمول."],
}

# (locale, sentence, expected reason or None)
CASES = [
    # --- supported sentences: must pass
    ("en", "The Standard plan includes 20 seats [1].", None),
    ("en", "Extra seats cost 8 per seat per month, excluding tax [1].", None),
    ("en", "Recall rose from 0.71 to 0.84 [2].", None),
    ("en", "The test set had 1200 questions [2].", None),
    ("en", "Questions go to sales@example.com [1].", None),
    ("en", "Pricing is at https://example.com/pricing [1].", None),
    ("en", "Seats cost 8 per seat and recall reached 0.84 [1][2].", None),
    ("en", "Seats cost 8 per seat and recall reached 0.84 [1, 2].", None),
    ("en", "Seats cost 8 per seat and recall reached 0.84.[^1][^2]", None),
    ("en", "Seats cost 8 per seat［1］.", None),
    ("en", "In short:", None),
    ("en", "Here are the details.", None),
    ("zh", "标准版包含 20 个席位[1]。", None),
    ("zh", "超出部分每席位每月 8 元，价格不含税[1]。", None),
    ("zh", "总之：", None),
    ("zh", "她的自我修正方法很有效[1]。", None),
    ("fa", "طرح پایه ۲۰ صندلی دارد [1].", None),
    ("fa", "طرح پایه 20 صندلی دارد [1].", None),
    ("ru", "Тариф «Стандарт» включает 20 мест [1].", None),
    ("es", "El plan Estándar incluye 20 puestos [1].", None),
    ("de", "Der Tarif Basis kostet 1500 Euro im Jahr [1].", None),
    ("ar", "تشمل الباقة الأساسية ٦ مستخدمين [1].", None),
    # --- marker_out_of_range
    ("en", "The plan includes 20 seats [4].", "marker_out_of_range"),
    ("en", "The plan includes 20 seats [0].", "marker_out_of_range"),
    ("en", "Seats cost 8 per seat [1][4].", "marker_out_of_range"),
    ("en", "Seats cost 8 per seat [^9].", "marker_out_of_range"),
    ("zh", "标准版包含 20 个席位[2]。", "marker_out_of_range"),
    ("fa", "طرح پایه ۲۰ صندلی دارد [۲].", "marker_out_of_range"),
    ("ru", "Тариф включает 20 мест [5].", "marker_out_of_range"),
    ("es", "El plan incluye 20 puestos [2].", "marker_out_of_range"),
    ("de", "Der Tarif enthält 20 GB Speicher [2].", "marker_out_of_range"),
    ("ar", "تشمل الباقة 6 مستخدمين [2].", "marker_out_of_range"),
    # --- marker_missing
    ("en", "The Standard plan is the right choice for most small teams.", "marker_missing"),
    ("en", "It has 20 seats.", "marker_missing"),  # short, but it states a value
    ("zh", "标准版适合大多数小型团队使用。", "marker_missing"),
    ("fa", "طرح پایه برای بیشتر تیم‌های کوچک انتخاب مناسبی است.", "marker_missing"),
    ("ru", "Тариф «Стандарт» подходит большинству небольших команд.", "marker_missing"),
    ("es", "El plan Estándar es la mejor opción para equipos pequeños.", "marker_missing"),
    (
        "de",
        "Der Tarif Basis ist für die meisten kleinen Teams die richtige Wahl.",
        "marker_missing",
    ),
    ("ar", "الباقة الأساسية هي الخيار الأنسب لمعظم الفرق الصغيرة.", "marker_missing"),
    # --- unsupported_value, including the traps
    ("en", "The plan includes 200 seats [1].", "unsupported_value"),
    ("en", "It covers 20 languages [3].", "unsupported_value"),  # 2025 is not 20
    ("en", "The test set had 200 questions [2].", "unsupported_value"),  # 1,200 is not 200
    ("en", "Recall rose to 0.8 [2].", "unsupported_value"),
    ("en", "Recall rose from 0.71 to 0.84 [1].", "unsupported_value"),  # wrong source cited
    ("en", "Write to support@example.com [1].", "unsupported_value"),
    ("en", "See https://example.com/enterprise [1].", "unsupported_value"),
    ("zh", "超出部分 10 元/席位/月[1]。", "unsupported_value"),
    ("fa", "طرح پایه ۲۵ صندلی دارد [1].", "unsupported_value"),
    ("ru", "Дополнительное место стоит 1 600 рублей [1].", "unsupported_value"),
    ("es", "Cada puesto adicional cuesta 9 euros al mes [1].", "unsupported_value"),
    ("de", "Der Tarif Basis kostet 1.600 Euro im Jahr [1].", "unsupported_value"),
    ("ar", "تشمل الباقة الأساسية ٨ مستخدمين [1].", "unsupported_value"),
    # --- first_person
    ("en", "I recommend the Standard plan with 20 seats [1].", "first_person"),
    ("en", "Our Standard plan includes 20 seats [1].", "first_person"),
    ("zh", "我认为标准版包含 20 个席位[1]。", "first_person"),
    ("fa", "من طرح پایه را پیشنهاد می‌کنم [1].", "first_person"),
    ("ru", "Я рекомендую тариф «Стандарт» [1].", "first_person"),
    ("es", "Yo recomiendo el plan Estándar [1].", "first_person"),
    ("de", "Ich empfehle den Tarif Basis [1].", "first_person"),
    ("ar", "أنا أنصح بالباقة الأساسية [1].", "first_person"),
    # --- faithful mode: unit, polarity and unlimited flips against the cited source
    ("en", "Extra seats cost 8 per person per day [1].", "unit_mismatch"),
    ("en", "Prices include tax [1].", "polarity_flip"),
    ("en", "Daily proration is supported [1].", "polarity_flip"),
    ("en", "Enterprise includes 20 seats [1].", "unlimited_as_number"),
    ("zh", "超出部分 8 元/人/天[1]。", "unit_mismatch"),
    ("zh", "价格含税[1]。", "polarity_flip"),
    ("zh", "支持按天折算[1]。", "polarity_flip"),
    ("zh", "企业版包含 20 个席位[1]。", "unlimited_as_number"),
    ("fa", "مالیات شامل می‌شود [1].", "polarity_flip"),
    ("fa", "طرح سازمانی ۲۰ صندلی دارد [1].", "unlimited_as_number"),
    ("ru", "НДС включен [1].", "polarity_flip"),
    ("es", "Los impuestos vienen incluidos [1].", "polarity_flip"),
    ("es", "El plan Empresa tiene 20 puestos [1].", "unlimited_as_number"),
    ("de", "Die Einrichtung ist enthalten [1].", "polarity_flip"),
    ("ar", "الدعم الهاتفي مشمول [1].", "polarity_flip"),
]


@pytest.fixture(scope="module")
def gates(packs):
    return {loc: SentenceGate(src, packs=packs) for loc, src in SOURCES.items()}


@pytest.mark.parametrize(
    ("locale", "sentence", "reason"),
    CASES,
    ids=[f"{c[0]}-{c[2] or 'ok'}-{i}" for i, c in enumerate(CASES)],
)
def test_check(gates, locale, sentence, reason):
    verdict = gates[locale].check(sentence)
    assert verdict.reason == reason, verdict
    assert verdict.ok is (reason is None)


def test_verdict_names_the_offending_token(gates):
    assert gates["en"].check("The plan includes 200 seats [1].").token == "200"
    assert gates["fa"].check("طرح پایه ۲۵ صندلی دارد [1].").token == "۲۵"
    assert gates["en"].check("See [7].").token == "[7]"
    assert gates["zh"].check("我认为可以[1]。").token == "我"


def test_verdict_is_frozen(gates):
    verdict = gates["en"].check("The Standard plan includes 20 seats [1].")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.ok = False  # type: ignore[misc]
    assert verdict == Verdict(True)


def test_min_words_is_a_setting(packs):
    connective = "In short, the check works."  # five words, no value: passes by default
    substantive = "The plan suits most small teams."  # six words
    gate = SentenceGate(SOURCES["en"], packs=packs)
    assert gate.check(connective).ok
    assert gate.check(substantive).reason == "marker_missing"
    assert SentenceGate(SOURCES["en"], packs=packs, min_words=8).check(substantive).ok
    assert SentenceGate(SOURCES["en"], packs=packs, min_words=3).check(connective).reason == (
        "marker_missing"
    )


def test_four_string_checks_only_without_faithful(packs):
    gate = SentenceGate(SOURCES["en"], packs=packs, faithful=False)
    assert gate.check("Prices include tax [1].").ok
    assert gate.check("Prices include 30 taxes [1].").reason == "unsupported_value"


def test_subject_switch_with_subjects(packs):
    sources = ["The Standard plan includes 20 seats. The Pro plan includes 50 seats."]
    gate = SentenceGate(sources, packs=packs, subjects=["Standard plan", "Pro plan"])
    assert gate.check("The Standard plan includes 20 seats [1].").ok
    assert gate.check("The Pro plan includes 50 seats [1].").ok
    assert gate.check("The Pro plan includes 20 seats [1].").reason == "subject_mismatch"


@pytest.mark.parametrize(
    ("source", "moved", "kept"),
    [
        (
            "The Standard plan includes 20 seats. The Pro plan includes 50 seats.",
            "The Pro plan includes 20 seats [1].",
            ["The Standard plan includes 20 seats [1].", "Pro has 50 seats and Standard 20 [1]."],
        ),
        (
            "标准版包含 20 个席位。专业版包含 50 个席位。",
            "专业版包含 20 个席位[1]。",
            ["标准版包含 20 个席位[1]。", "专业版有 50 个席位[1]。"],
        ),
        (
            "El plan Básico incluye 5 usuarios. El plan Pro incluye 25 usuarios.",
            "El plan Pro incluye 5 usuarios [1].",
            ["El plan Básico incluye 5 usuarios [1].", "Incluye 25 usuarios en el plan Pro [1]."],
        ),
    ],
)
def test_subject_switch_without_a_subject_list(packs, source, moved, kept):
    gate = SentenceGate([source], packs=packs)
    verdict = gate.check(moved)
    assert (verdict.reason, verdict.ok) == ("subject_mismatch", False)
    for sentence in kept:
        assert gate.check(sentence).ok, sentence


# ------------------------------------------------------------------------- streaming


def _released_text(events) -> str:
    return "".join(e.text for e in events if isinstance(e, Released))


def test_markers_are_stripped_and_spacing_kept(gates):
    answer = "The Standard plan includes 20 seats [1]. Recall rose to 0.84.[2]\nIn short: done."
    events = list(gates["en"].stream([answer]))
    assert all(isinstance(e, Released) for e in events)
    assert _released_text(events) == (
        "The Standard plan includes 20 seats. Recall rose to 0.84.\nIn short: done."
    )
    assert [e.markers for e in events] == [(1,), (2,), ()]


def test_stop_keeps_earlier_sentences_and_withholds_the_rest(packs):
    cancelled: list[int] = []
    gate = SentenceGate(SOURCES["en"], packs=packs, on_cancel=lambda: cancelled.append(1))
    answer = (
        "The Standard plan includes 20 seats [1]. It now includes 25 seats [1]. "
        "Enterprise: unlimited seats [1]."
    )
    events = list(gate.stream([answer]))
    assert [type(e) for e in events] == [Released, Stopped]
    stop = events[-1]
    assert isinstance(stop, Stopped)
    assert (stop.reason, stop.token) == ("unsupported_value", "25")
    assert stop.message == packs.messages("en")["gate_stop"]
    assert "25" not in _released_text(events)
    assert "unlimited" not in _released_text(events)
    assert cancelled == [1]


def test_stop_message_in_the_readers_language(packs):
    events = list(SentenceGate(SOURCES["zh"], packs=packs).stream(["标准版包含 30 个席位[1]。"]))
    assert events[-1].message == packs.messages("zh")["gate_stop"]
    events = list(
        SentenceGate(SOURCES["zh"], packs=packs, locale="ru").stream(["标准版包含 30 个席位[1]。"])
    )
    assert events[-1].message == packs.messages("ru")["gate_stop"]


def test_truncated_stream_gets_its_own_notice(packs):
    cancelled: list[int] = []
    gate = SentenceGate(SOURCES["es"], packs=packs, on_cancel=lambda: cancelled.append(1))
    events = list(gate.stream(["El plan Estándar incluye 20 puestos [1]. ", "Cada puesto adic"]))
    assert [type(e) for e in events] == [Released, Truncated]
    assert events[-1].message == packs.messages("es")["truncated"]
    assert events[-1].message != packs.messages("es")["gate_stop"]
    assert "adic" not in _released_text(events)
    assert cancelled == []  # generation had already ended


def test_a_failing_cancel_hook_does_not_hide_the_stop(packs, caplog):
    def hook() -> None:
        raise RuntimeError("provider already closed")

    gate = SentenceGate(SOURCES["en"], packs=packs, on_cancel=hook)
    events = list(gate.stream(["The plan includes 200 seats [1]."]))
    assert isinstance(events[-1], Stopped)
    assert "on_cancel" in caplog.text


def test_sentence_too_long_is_stopped(packs):
    gate = SentenceGate(SOURCES["en"], packs=packs, max_sentence_chars=200)
    events = list(gate.stream(["word " * 100]))
    assert isinstance(events[-1], Stopped)
    assert events[-1].reason == "sentence_too_long"


class ConfidentGenerator:
    """A scripted model: good sentences, then one confident mistake, then more text.

    It records how many tokens were consumed and whether it was closed, to prove the gate
    cancels generation instead of reading on.
    """

    def __init__(self, sentences: list[str]) -> None:
        self.tokens = [t for s in sentences for t in (s + " ").split(" ") if t] or [""]
        self.consumed = 0
        self.closed = False

    def __iter__(self) -> Iterator[str]:
        try:
            for i, token in enumerate(self.tokens):
                self.consumed += 1
                yield token if i == 0 else " " + token
        finally:
            self.closed = True


GOOD = {
    "en": [
        "The Standard plan includes 20 seats [1].",
        "Extra seats cost 8 per seat per month [1].",
    ],
    "zh": ["标准版包含 20 个席位[1]。", "超出部分 8 元/席位/月[1]。"],
    "es": [
        "El plan Estándar incluye 20 puestos [1].",
        "Cada puesto adicional cuesta 8 euros al mes [1].",
    ],
    "ru": ["Тариф «Стандарт» включает 20 мест [1].", "НДС не включен [1]."],
    "fa": ["طرح پایه ۲۰ صندلی دارد [1].", "مالیات شامل نمی‌شود [1]."],
}
MISTAKES = [
    ("en", "invents a number", "Extra seats cost 10 per seat per month [1].", "unsupported_value"),
    ("en", "flips a negation", "All prices include tax [1].", "polarity_flip"),
    ("en", "switches the subject", "Enterprise also includes 20 seats [1].", "unlimited_as_number"),
    (
        "en",
        "cites a missing source",
        "The details are on the pricing page [4].",
        "marker_out_of_range",
    ),
    ("en", "speaks in the first person", "I would pick the Standard plan [1].", "first_person"),
    ("en", "changes the unit", "Extra seats cost 8 per person per day [1].", "unit_mismatch"),
    ("zh", "invents a number", "超出部分 10 元/席位/月[1]。", "unsupported_value"),
    ("zh", "flips a negation", "价格含税[1]。", "polarity_flip"),
    ("zh", "switches the subject", "企业版包含 20 个席位[1]。", "unlimited_as_number"),
    ("zh", "cites a missing source", "详情见价格页面[2]。", "marker_out_of_range"),
    ("zh", "speaks in the first person", "我建议选择标准版[1]。", "first_person"),
    ("es", "invents a number", "El plan Estándar incluye 25 puestos [1].", "unsupported_value"),
    ("es", "flips a negation", "Los impuestos vienen incluidos [1].", "polarity_flip"),
    ("es", "switches the subject", "El plan Empresa tiene 20 puestos [1].", "unlimited_as_number"),
    ("es", "speaks in the first person", "Yo elegiría el plan Estándar [1].", "first_person"),
    ("ru", "invents a number", "Тариф «Стандарт» включает 30 мест [1].", "unsupported_value"),
    ("ru", "flips a negation", "НДС включен в цену [1].", "polarity_flip"),
    ("ru", "speaks in the first person", "Я бы выбрал тариф «Стандарт» [1].", "first_person"),
    ("fa", "invents a number", "طرح پایه ۳۰ صندلی دارد [1].", "unsupported_value"),
    ("fa", "switches the subject", "طرح سازمانی ۲۰ صندلی دارد [1].", "unlimited_as_number"),
    ("fa", "speaks in the first person", "من طرح پایه را انتخاب می‌کنم [1].", "first_person"),
]


@pytest.mark.parametrize(
    ("locale", "what", "mistake", "reason"), MISTAKES, ids=[f"{m[0]}-{m[1]}" for m in MISTAKES]
)
def test_confident_generator_is_stopped_before_the_reader_sees_it(
    packs, locale, what, mistake, reason
):
    cancelled: list[int] = []
    model = ConfidentGenerator([*GOOD[locale], mistake, *GOOD[locale]])
    gate = SentenceGate(SOURCES[locale], packs=packs, on_cancel=lambda: cancelled.append(1))
    events = list(gate.stream(model))
    released = [e for e in events if isinstance(e, Released)]
    assert len(released) == len(GOOD[locale])  # the good sentences before it are shown
    assert isinstance(events[-1], Stopped)
    assert events[-1].reason == reason
    shown = _released_text(events)
    assert gate.check(mistake).reason == reason
    assert mistake.split("[")[0].strip() not in shown  # never seen by the reader
    assert cancelled == [1]
    assert model.closed and model.consumed < len(model.tokens)  # generation was cancelled


def test_async_stream_matches_sync(packs):
    answer = "".join(s + " " for s in [*GOOD["en"], MISTAKES[0][2], *GOOD["en"]])

    async def tokens():
        for ch in answer:
            await asyncio.sleep(0)
            yield ch

    async def collect():
        cancelled: list[int] = []
        gate = SentenceGate(SOURCES["en"], packs=packs, on_cancel=lambda: cancelled.append(1))
        events = [e async for e in gate.astream(tokens())]
        return events, cancelled

    events, cancelled = asyncio.run(collect())
    assert events == list(SentenceGate(SOURCES["en"], packs=packs).stream([answer]))
    assert isinstance(events[-1], Stopped) and cancelled == [1]


def test_push_api_feed_and_finish(packs):
    run = SentenceGate(SOURCES["en"], packs=packs).open()
    assert run.feed("The Standard plan includes 20 seats [1]") == []
    assert run.feed(".") == []  # a marker could still follow
    assert run.feed(" Recall") == [Released("The Standard plan includes 20 seats.", (1,))]
    assert run.finish()[-1].withheld == "Recall"
    assert run.feed("more") == []


def test_errors_are_specific(packs):
    with pytest.raises(UnknownLocaleError):
        SentenceGate(SOURCES["en"], packs=packs, locale="xx")
    with pytest.raises(InputTooLargeError):
        SentenceGate(["x" * 1_000_001], packs=packs)
    with pytest.raises(InputTooLargeError):
        SentenceGate(SOURCES["en"], packs=packs).check("word " * 2000)
    with pytest.raises(TypeError):
        SentenceGate(SOURCES["en"], packs=packs).open().feed(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(GateSettingError):
        SentenceGate(SOURCES["en"], packs=packs, min_words=0)


# ------------------------------------------------------------------- chunking invariance

POOL = [
    *GOOD["en"],
    *GOOD["zh"],
    "Recall rose from 0.71 to 0.84.[2]",
    "Dr. Smith wrote to sales@example.com [1].",
    "In short:",
    "It has 20 seats.",
    "The plan includes 200 seats [1].",
    "I think so [1].",
    "See https://example.com/pricing [1]!",
    "Prices include tax [1].",
    "See [4].",
    "Unfinished sentence with 20",
    "Seats cost 8 per seat [1][2]?",
    "\n",
]


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.sampled_from(POOL), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=10),
)
def test_chunking_invariance(packs, parts, cuts):
    gate = SentenceGate(SOURCES["en"], packs=packs)
    answer = " ".join(parts)
    whole = list(gate.stream([answer]))
    assert list(gate.stream(list(answer))) == whole
    points = sorted({c % (len(answer) + 1) for c in cuts})
    chunks = [answer[a:b] for a, b in zip([0, *points], [*points, len(answer)], strict=True)]
    assert list(gate.stream(chunks)) == whole
    # the verdicts are those of check() on each sentence
    assert sum(isinstance(e, (Stopped, Truncated)) for e in whole) <= 1
