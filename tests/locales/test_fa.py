"""Persian-specific behaviour of the fa pack (the generic harness runs every rule's examples).

Covers what only Persian input does: Arabic letter forms typed on Persian keyboards,
ZWNJ joined / split / absent, harakat, Persian digits, the generated first-person verb
list (and its traps: مردم "people", دهم "tenth"), and that the committed list is what
``tools/gen_fa_first_person.py`` produces.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

import guardlex

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("Dana Reyes", "دانا ریس")
ZWNJ = "\u200c"


@pytest.fixture(scope="module")
def packs():  # type: ignore[no-untyped-def]
    return guardlex.load_packs(subject_names=NAMES)


def _gen_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_fa_first_person", ROOT / "tools" / "gen_fa_first_person.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    "text",
    [
        "چقدر می" + ZWNJ + "گیره؟",  # standard ZWNJ
        "چقدر میگیره؟",  # joined, no ZWNJ
        "چقدر می گیره؟",  # split with a space
        "چقدر مي" + ZWNJ + "گيره؟",  # Arabic ي from an Arabic keyboard
        "چقدر میــگیره؟",  # tatweel
        "چقدر می\u200bگیره؟",  # zero-width space inside the word
        "\u200fچقدر میگیره؟\u200f",  # bidi marks around the question
    ],
)
def test_engagement_survives_spelling_variants(packs, text: str) -> None:  # type: ignore[no-untyped-def]
    r = packs.route(text)
    assert r.kind == "refuse"
    assert r.category == "engagement"
    assert r.locale == "fa"


@pytest.mark.parametrize(
    "text",
    [
        "كارت پايان خدمت داره؟",  # Arabic ك and ي
        "کارت پایان" + ZWNJ + "خدمت داره؟",
        "سَربازی رفته؟",  # a haraka
    ],
)
def test_military_service_variants(packs, text: str) -> None:  # type: ignore[no-untyped-def]
    r = packs.route(text)
    assert (r.kind, r.category) == ("refuse", "personal_data")


def test_span_points_into_original_text(packs) -> None:  # type: ignore[no-untyped-def]
    text = "سلام، دستمزد" + ZWNJ + "تون چقدره؟"
    r = packs.route(text)
    assert r.kind == "refuse"
    start, end = r.span
    assert 0 <= start < end <= len(text)
    assert "دستمزد" in text[start:end]


def test_persian_digits_in_question_are_normalised(packs) -> None:  # type: ignore[no-untyped-def]
    # «ساعتی ۵۰ دلار می‌گیره؟» with Persian digits and «جواب سوال ۳» (task).
    assert packs.route("جواب سوال ۳ امتحان رو بده").category == "task"


def test_subject_name_reads_as_pronoun(packs) -> None:  # type: ignore[no-untyped-def]
    by_name = packs.route("دانا ریس الان در دسترس هست؟")
    by_pronoun = packs.route("ایشون الان در دسترس هست؟")
    assert by_name.kind == by_pronoun.kind == "refuse"
    assert by_name.category == by_pronoun.category == "engagement"


@pytest.mark.parametrize(
    "text",
    [
        "مقاله" + ZWNJ + "اش درباره قیمت" + ZWNJ + "گذاری APIها چه می" + ZWNJ + "گوید؟",
        "چند سال سابقه کار دارد؟",
        "در پروژه سامانه رزرو بلیط چه نقشی داشت؟",
        "در مقاله" + ZWNJ + "اش درباره تزریق پرامپت چه نوشته؟",
    ],
)
def test_hard_negatives_are_not_refused(packs, text: str) -> None:  # type: ignore[no-untyped-def]
    assert packs.route(text).kind != "refuse"


@pytest.mark.parametrize(
    "text",
    [
        "من در این پروژه کار می" + ZWNJ + "کنم.",
        "در این پروژه کار میکنم.",
        "در این پروژه کار می کنم.",
        "این مقاله را نوشته" + ZWNJ + "ام.",
        "ما این ابزار را ساختیم.",
        "میخوام بدونم",
    ],
)
def test_first_person_found(packs, text: str) -> None:  # type: ignore[no-untyped-def]
    hit = packs.first_person(text, locale="fa")
    assert hit is not None
    assert hit.locale == "fa"


@pytest.mark.parametrize(
    "text",
    [
        "مردم از این ابزار استقبال کردند.",  # مردم "people", not "I died"
        "فصل دهم کتاب درباره ارزیابی است.",  # دهم "tenth", not "I give"
        "او در این پروژه کار می" + ZWNJ + "کند.",
        "تفاوت ما بین دو روش ناچیز است.",  # exception: ما بین
    ],
)
def test_first_person_traps(packs, text: str) -> None:  # type: ignore[no-untyped-def]
    assert packs.first_person(text, locale="fa") is None


def test_generated_list_keeps_both_spellings_and_drops_nonverbs() -> None:
    import yaml

    data = yaml.safe_load(
        (ROOT / "src/guardlex/locales/fa/first_person.yaml").read_text(encoding="utf-8")
    )
    forms = set(data["verb_forms"])
    assert {"میکنم", "می کنم", "کردم", "نیامدم", "بیایم", "باشم", "میام"} <= forms
    assert not {"بیشم"} & forms
    assert not {"مردم", "دهم", "چشم", "رسم"} & forms


def test_committed_list_equals_generator_output() -> None:
    # hazm is in the `test` extra, so this runs wherever the test suite does.
    mod = _gen_module()
    committed = (ROOT / "src/guardlex/locales/fa/first_person.yaml").read_text(encoding="utf-8")
    assert committed == mod.generate(), "run: python tools/gen_fa_first_person.py"


def test_fix_prefix_spelling_rule() -> None:
    mod = _gen_module()
    assert mod.fix_prefix("نآمدم", "آمد") == "نیامدم"
    assert mod.fix_prefix("بانداختم", "انداخت") == "بینداختم"
    assert mod.fix_prefix("نکردم", "کرد") == "نکردم"
    assert mod.fix_prefix("باشم", "باش") == "باشم"  # the stem's own ب is not a prefix
