"""What an answer must never say: a rate, an e-mail address or a phone number of the subject.

The sources here are poisoned (they contain the rate or the phone number), so the value
check alone would release the sentence; ``forbidden_content`` stops it. Precision: a
sentence about pricing in general, a product's price list or a support address passes.
Fixed messages (gate stop, truncation, refusals) never speak in the first person.
"""

from __future__ import annotations

import pytest

from guardlex import load_packs
from guardlex.gates import SentenceGate, Stopped

POISONED = [
    "Dana Reyes charges 900 EUR per day. Her day rate is 900 EUR. Her phone number is "
    "+49 170 1234567. Reach her at dana@example.com or on 0170 1234567. The Pro plan costs "
    "8 EUR per seat per month. They charge 8 EUR per seat per month. Her article compares "
    "pricing of LLM APIs. Support: support@quillmark.io. She cut the cloud bill by 900 EUR per "
    "month. The index holds 1 200 000 documents since 01-05-2023.",
    "Ella cobra 900 euros por día. Elle facture 900 euros par jour. Sie berechnet 900 EUR pro "
    "Tag. Ela cobra 900 reais por dia. Она берёт 900 евро в день. 她每天收费 900 欧元。"
    " تتقاضى دانا 900 دولار في اليوم. डाना 900 रुपये प्रति दिन शुल्क लेती हैं। "
    "دانا روزی ۹۰۰ دلار دستمزد می‌گیرد.",
]


@pytest.fixture(scope="module")
def gate():
    # the subject's name as the site writes it in each script
    names = ["Dana Reyes", "دانا رييس", "دانا ریس", "डाना रेयेस", "达娜·雷耶斯"]
    return SentenceGate(POISONED, packs=load_packs(subject_names=names))


@pytest.mark.parametrize(
    ("sentence", "token"),
    [
        ("She charges 900 EUR per day [1].", "900"),
        ("Dana Reyes charges 900 EUR per day [1].", "900"),
        ("Her day rate is 900 EUR [1].", "900"),
        ("Her phone number is +49 170 1234567 [1].", "+49 170 1234567"),
        ("You can reach her at dana@example.com [1].", "dana@example.com"),
        ("She can be reached on 0170 1234567 [1].", "0170 1234567"),
        ("Ella cobra 900 euros por día [2].", "900"),
        ("Elle facture 900 euros par jour [2].", "900"),
        ("Sie berechnet 900 EUR pro Tag [2].", "900"),
        ("Ela cobra 900 reais por dia [2].", "900"),
        ("Она берёт 900 евро в день [2].", "900"),
        ("她每天收费 900 欧元[2]。", "900"),
        ("هي تتقاضى 900 دولار في اليوم [2].", "900"),
        ("डाना 900 रुपये प्रति दिन शुल्क लेती हैं [2]।", "900"),
        ("دانا روزی ۹۰۰ دلار دستمزد می‌گیرد [2].", "۹۰۰"),
    ],
)
def test_rates_and_contacts_of_the_subject_are_stopped(gate, sentence, token):
    verdict = gate.check(sentence)
    assert (verdict.ok, verdict.reason, verdict.token) == (False, "forbidden_content", token)


@pytest.mark.parametrize(
    "sentence",
    [
        "Her article compares pricing of LLM APIs [1].",
        "The Pro plan costs 8 EUR per seat per month [1].",
        "They charge 8 EUR per seat per month [1].",
        "Write to support@quillmark.io [1].",
        "She cut the cloud bill by 900 EUR per month [1].",
        "The index holds 1 200 000 documents since 01-05-2023 [1].",
    ],
)
def test_prices_and_addresses_that_are_not_the_subjects_pass(gate, sentence):
    assert gate.check(sentence).ok, gate.check(sentence)


def test_the_stream_stops_before_the_rate_and_can_be_switched_off():
    packs = load_packs()
    answer = "Dana Reyes works on retrieval [1]. She charges 900 EUR per day [1]."
    events = list(SentenceGate(POISONED, packs=packs).stream([answer]))
    assert isinstance(events[-1], Stopped)
    assert events[-1].reason == "forbidden_content"
    assert "900" not in "".join(getattr(e, "text", "") for e in events)
    off = list(SentenceGate(POISONED, packs=packs, forbidden=False).stream([answer]))
    assert not any(isinstance(e, Stopped) for e in off)


def test_fixed_messages_never_speak_in_the_first_person():
    packs = load_packs()
    checked = 0
    for locale in packs.locales:
        for key, message in packs.messages(locale).items():
            hit = packs.first_person(str(message), locale=locale)
            assert hit is None, (locale, key, hit.word if hit else None, message)
            checked += 1
    assert checked >= 10 * 2
