"""Spanish-specific behaviour of the es pack (the generic harness runs every rule's examples).

Covers what only Spanish input does: accents and the inverted question mark are optional,
Rioplatense voseo, the article "el" that the pronoun "él" becomes without its accent, and
first-person verb forms that are also nouns ("trabajo") or third-person subjunctives.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml

import guardlex
from guardlex.rules import Packs

PACK_DIR = Path(guardlex.__file__).parent / "locales" / "es"
PACKS: Packs = guardlex.load_packs(["es"], subject_names=("Dana Reyes",))


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _refusal_examples() -> list[tuple[str, str]]:
    refusal = yaml.safe_load((PACK_DIR / "refusal.yaml").read_text(encoding="utf-8"))
    return [
        (ex, category)
        for rule in refusal["rules"]
        for category in (rule["category"],)
        for ex in rule["examples"]["match"]
    ]


def _route(text: str, previous: str | None = None) -> tuple[str, str | None]:
    r = PACKS.route(text, previous)
    return r.kind, r.category


@pytest.mark.parametrize(("text", "category"), _refusal_examples(), ids=lambda v: str(v)[:30])
def test_accents_are_optional(text: str, category: str) -> None:
    plain = _strip_accents(text)
    assert _route(text) == _route(plain) == _route(plain.upper()) == ("refuse", category)


@pytest.mark.parametrize(
    "text",
    [
        "¿Cuánto cobra Dana?",
        "¿Dónde vive?",
        "¿Está casada?",
        "¿Qué modelo usas?",
        "¿Crees que aceptaría?",
    ],
)
def test_inverted_question_mark_is_optional(text: str) -> None:
    assert _route(text) == _route(text.replace("¿", "")) != ("retrieve", None)


@pytest.mark.parametrize(
    "text",
    ["¿Cuánto cobra?", "cuanto cobra", "CUANTO COBRA", "¿cuánto cobrás?", "Cuanto me cobrarias?"],
)
def test_price_question_in_any_spelling(text: str) -> None:
    assert _route(text) == ("refuse", "engagement")


@pytest.mark.parametrize(
    "text",
    ["¿Cuándo podés empezar?", "¿Tenés disponibilidad en marzo?", "vos creés que aceptaría?"],
)
def test_voseo(text: str) -> None:
    assert _route(text)[0] == "refuse"


def test_el_article_is_not_the_subject_pronoun() -> None:
    # "él" loses its accent in normalisation; {subject} must not read the article "el".
    assert _route("¿Qué hará el modelo si no encuentra evidencia?") == ("retrieve", None)
    assert _route("¿Está él disponible para un proyecto?") == ("refuse", "engagement")


def test_pro_drop_comparison_needs_the_inverted_mark() -> None:
    assert _route("¿Es mejor que Andrej Karpathy?") == ("refuse", "speculation")
    assert _route("¿Por qué su método es mejor que BM25?") == ("retrieve", None)


def test_elliptical_price_question_ends_at_the_question_mark() -> None:
    assert _route("¿y cuánto cuesta?", previous="¿Qué servicios ofrece?") == (
        "refuse",
        "engagement",
    )
    assert _route("¿Cuánto cuesta la API de OpenAI según su comparativa?") == ("retrieve", None)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Yo trabajo en Madrid.", "Yo"),
        ("Tengo diez años de experiencia.", "Tengo"),
        ("Escribí ese artículo en 2023.", "Escribí"),
        ("Su trabajo se centra en RAG.", None),  # "trabajo" is a noun here: left out
        ("Explica cómo funciona la búsqueda.", None),  # "como" is never first person
        ("Recomienda que el equipo trabaje con datos reales.", None),  # trabajé == trabaje
        # "I know": the accent, read as written, tells sé from se
        ("Sé que ella publicó en 2022.", "Sé"),
        ("Se publicó en 2022.", None),  # the reflexive se
    ],
)
def test_first_person_verb_forms(text: str, hit: str | None) -> None:
    found = PACKS.first_person(text, locale="es")
    assert (found.word if found else None) == hit


@pytest.mark.parametrize(
    "text",
    [
        "¿En qué se está centrando Dana ahora mismo?",
        "en que te enfocas actualmente",
        "¿En qué anda metida estos días?",
    ],
)
def test_current_focus_is_overview_now(text: str) -> None:
    """A focus verb plus a time word asks about her present work, not one article."""
    route = PACKS.route(text)
    assert (route.kind, route.topic) == ("overview", "now")


@pytest.mark.parametrize(
    "text",
    [
        "¿En qué se centra su artículo sobre evaluación?",
        "¿Qué presupuesto de tokens recomienda en su artículo?",
        "¿Qué escribe sobre la historia del RAG?",
    ],
)
def test_focus_and_budget_words_about_her_work_are_retrieved(text: str) -> None:
    """Questions about her published work share focus/budget/writing words but are answered."""
    assert PACKS.route(text).kind == "retrieve"
