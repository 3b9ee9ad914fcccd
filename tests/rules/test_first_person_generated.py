"""The generated first-person lists: committed files equal the generators' output, and
the behaviour issue 10 asks for (pro-drop forms, clitics, context rules) holds.

The generators' libraries (verbecc, pymorphy3, wordfreq, simplemma) are in the ``tools``
extra, which the ``test`` extra installs, so the regeneration checks run with the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from guardlex import load_packs

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("code", ["ru", "es", "pt"])
def test_committed_lists_equal_generator_output(
    code: str, tool: Callable[[str], ModuleType]
) -> None:
    mod = tool("gen_first_person")
    path = ROOT / "src" / "guardlex" / "locales" / code / "first_person.generated.yaml"
    assert path.read_text(encoding="utf-8") == mod.generate(code), (
        f"run: python tools/gen_first_person.py {code}"
    )


def test_committed_arabic_list_equals_generator_output(
    tool: Callable[[str], ModuleType],
) -> None:
    mod = tool("gen_ar_first_person")
    assert mod.OUT.read_text(encoding="utf-8") == mod.generate(), (
        "run: python tools/gen_ar_first_person.py"
    )


def test_committed_persian_list_equals_generator_output(
    tool: Callable[[str], ModuleType],
) -> None:
    # hazm is in the `test` extra, so this runs wherever the test suite does
    mod = tool("gen_fa_first_person")
    committed = ROOT / "src" / "guardlex" / "locales" / "fa" / "first_person.yaml"
    assert committed.read_text(encoding="utf-8") == mod.generate(), (
        "run: python tools/gen_fa_first_person.py"
    )


def test_persian_generator_prefix_spelling(tool: Callable[[str], ModuleType]) -> None:
    mod = tool("gen_fa_first_person")
    assert mod.fix_prefix("نآمدم", "آمد") == "نیامدم"
    assert mod.fix_prefix("بانداختم", "انداخت") == "بینداختم"
    assert mod.fix_prefix("نکردم", "کرد") == "نکردم"
    assert mod.fix_prefix("باشم", "باش") == "باشم"  # the stem's own ب is not a prefix


@pytest.fixture(scope="module")
def packs():  # type: ignore[no-untyped-def]
    return load_packs(sorted(CASES))


CASES = {
    "de": (
        ["Arbeite seit Jahren remote.", "Bin gerade in Berlin.", "Habe das System entworfen."],
        ["Er sagte, er arbeite seit Jahren remote.", "Er habe das System entworfen, sagte sie."],
    ),
    "es": (
        [
            "Trabajé tres años en Quillmark.",
            "Trabajo en Madrid desde 2019.",
            "Creo que la evaluación es sólida.",
            "Dámelo cuando puedas.",
            "Cuéntenos cómo lo hizo.",
            "Llevaremos a cabo la revisión.",
            "No sé dónde está.",
        ],
        [
            "Ella trabajó tres años en Quillmark.",
            "Es necesario que trabaje más.",
            "El trabajo de Dana es excelente.",
            "Su estudio compara dos métodos.",
            "Funciona como un buscador.",
            "Ella creó el sistema.",
            "Pidió varios préstamos al banco.",
        ],
    ),
    "pt": (
        [
            "Moro em Lisboa e atendo clientes.",
            "Trabalhei três anos na Quillmark.",
            "Ajude-nos a decidir.",
        ],
        ["O trabalho dela foca na avaliação.", "De acordo com o relatório, nos últimos anos caiu."],
    ),
    "ru": (
        ["Смотрю на результаты каждый день.", "Устраиваем тренировки по пятницам."],
        ["Она смотрит на результаты.", "Мойка машин работает до восьми."],
    ),
    "ar": (
        [
            "عملنا ثلاث سنوات في المشروع.",
            "هذه مدونتي.",
            "فريقنا صغير.",
            "وأنا أعمل هنا.",
            "رأيت النتائج.",
        ],
        ["هذا كتاب عربي.", "تعمل في الجامعة هنا.", "أطلق الفريق المشروع.", "التي نشرت المقال."],
    ),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_first_person_forms(packs, code: str) -> None:  # type: ignore[no-untyped-def]
    hits, misses = CASES[code]
    for text in hits:
        assert packs.first_person(text, locale=code) is not None, text
    for text in misses:
        hit = packs.first_person(text, locale=code)
        assert hit is None, (text, hit)
