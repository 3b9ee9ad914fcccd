"""Each step of SPEC §3 on real text, and the properties of single steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex.normalise import explain, normalise, normalise_with_offsets
from guardlex.normalise import steps as S

_DATA = Path(__file__).parent / "data" / "step_cases.yaml"
_CASES: list[dict[str, Any]] = yaml.safe_load(_DATA.read_text("utf-8"))["cases"]
_NAMES = {name for name, _ in S.STEPS}


@pytest.mark.parametrize("case", _CASES, ids=[f"{c['step']}-{i:02d}" for i, c in enumerate(_CASES)])
def test_step_on_real_text(case: dict[str, Any]) -> None:
    assert case["step"] in _NAMES
    assert normalise(case["input"]) == case["expected"]
    assert case["step"] in {step.name for step in explain(case["input"])}
    assert normalise_with_offsets(case["input"]).text == case["expected"]


def test_every_step_has_a_real_text_case() -> None:
    assert {case["step"] for case in _CASES} == _NAMES


def test_steps_run_in_spec_order() -> None:
    names = [name for name, _ in S.STEPS]
    ten = [name for name in names if name in _TEN]
    assert ten == list(_TEN)
    # the defences sit where their docstrings say
    assert names.index("invisible") == 0
    assert names.index("arabic_variants") == names.index("arabic_letters") + 1
    assert names.index("yo") < names.index("cyrillic_stress") < names.index("lookalikes")
    assert names.index("lookalikes") + 1 == names.index("latin_diacritics")


_TEN = (
    "nfkc",
    "casefold",
    "arabic_letters",
    "digits",
    "arabic_diacritics",
    "zwnj",
    "format_chars",
    "yo",
    "latin_diacritics",
    "whitespace",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("می\u200cخواهم", "می خواهم"),  # between Persian letters: a space
        ("می\u200c\u200cخواهم", "می خواهم"),  # a run counts once
        ("pr\u200cice", "price"),  # inside a Latin word: removed
        ("می\u200c", "می"),  # at the end: removed
        ("\u200cمی", "می"),  # at the start: removed
        ("ب\u200c1", "ب1"),  # a digit is not a letter
        ("ب\u200ca", "بa"),  # Latin neighbour: removed
        ("بَ\u200cپ", "ب پ"),  # neighbours are seen across the harakat step 5 removed
        ("ب\u200c\u200fپ", "ب پ"),  # invisible characters are gone before step 6
        ("ب\u200c\u0600پ", "بپ"),  # a format character that is visible is a neighbour
    ],
)
def test_zwnj_neighbours(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_alef_madda_and_hamza_carriers_are_kept() -> None:
    assert normalise("آب مؤسسه سئوال") == "آب مؤسسه سئوال"


def test_nfkc_composes_before_folding() -> None:
    # alef + hamza above composes to أ under NFKC, which step 3 folds to ا.
    assert normalise("ا\u0654حمد") == "احمد"
    # e + combining acute composes to é, which step 9 folds to e.
    assert normalise("Cafe\u0301") == "cafe"


def test_marks_on_other_scripts_are_kept() -> None:
    assert normalise("नमस्ते क़ीमत") == "नमस्ते क़ीमत"
    assert normalise("Йод и й") == "йод и й"
    assert normalise("x\u0301 ŵ") == "x w"  # Latin letters lose any mark


def test_greek_and_cyrillic_words_are_never_folded() -> None:
    assert normalise("Привет, как дела? Καλημέρα") == "привет, как дела? καλημέρα"
    assert normalise("Ресторан ΚΑΦΕ рядом, CAFE") == "ресторан καφε рядом, cafe"
    assert normalise("Сосна, море, сор") == "сосна, море, сор"  # look-alike letters only


def test_bad_input_is_handled() -> None:
    assert normalise("a\ud800b") == "a\ud800b"  # lone surrogate passes through
    assert normalise("a\x00b\x07") == "a\x00b\x07"  # controls are not format characters
    assert normalise("a\x1fb") == "a b"  # information separators are whitespace
    big = "Цена‌ услуги? قیمت\u200cها؟ " * 40_000
    out = normalise(big)
    assert out.startswith("цена услуги? قیمت ها؟ ") and len(out) < len(big)
    with pytest.raises(TypeError, match="bytes"):
        normalise(b"price")  # type: ignore[arg-type]
