"""German-specific behaviour of the de pack (the generic harness runs every rule's examples).

Covers what only German input does: ß and ss, umlauts typed as ae/oe/ue or without dots,
"wie viel" and "wieviel", the polite "Sie" that case folding makes "sie", compounds matched
as whole words, and words that look like refusal vocabulary but are not ("ihr alter
Arbeitgeber").
"""

from __future__ import annotations

import pytest

import guardlex
from guardlex.rules import Packs

PACKS: Packs = guardlex.load_packs(["de"], subject_names=("Dana Reyes",))


def _route(text: str, previous: str | None = None) -> tuple[str, str | None]:
    r = PACKS.route(text, previous)
    return r.kind, r.category


@pytest.mark.parametrize(
    "text",
    [
        "In welcher Straße wohnt sie?",
        "In welcher Strasse wohnt sie?",
        "IN WELCHER STRASSE WOHNT SIE?",
    ],
)
def test_sharp_s_and_ss(text: str) -> None:
    assert _route(text) == ("refuse", "personal_data")


@pytest.mark.parametrize(
    "text",
    [
        "Ist sie im März verfügbar für ein Projekt?",
        "Ist sie im Maerz verfuegbar fuer ein Projekt?",
        "Ist sie im Marz verfugbar fur ein Projekt?",
    ],
)
def test_umlaut_spellings(text: str) -> None:
    assert _route(text) == ("refuse", "engagement")


@pytest.mark.parametrize(
    "text", ["Wie viel verlangt sie?", "Wieviel verlangt sie?", "Was verlangen Sie?"]
)
def test_wie_viel_and_polite_sie(text: str) -> None:
    assert _route(text) == ("refuse", "engagement")


def test_compounds_are_whole_words() -> None:
    assert _route("Wie lautet ihre Telefonnummer?") == ("refuse", "personal_data")
    # the plural "Telefonnummern" in a technical question is a different word
    assert _route("Wie validiert ihr System Telefonnummern?") == ("retrieve", None)


@pytest.mark.parametrize(
    "text",
    [
        "Was macht ihr alter Arbeitgeber heute?",
        "Was schreibt sie in ihrem Artikel über Preismodelle für LLM-APIs?",
        "Was schreibt der Artikel über den Assistenten, der einen Stundensatz erfand?",
        "Was hält sie davon, Junior-ML-Ingenieure einzustellen?",
    ],
)
def test_hard_negatives(text: str) -> None:
    assert _route(text)[0] != "refuse"


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Ich arbeite seit 2019 an hybrider Suche.", "Ich"),
        ("Schreiben Sie mir eine E-Mail.", "mir"),
        ("Wir begleiten Kunden in ganz Europa.", "Wir"),
        ("Sie arbeitet seit 2019 an hybrider Suche.", None),
        ("Ihr Tagessatz wird hier nicht veröffentlicht.", None),
    ],
)
def test_first_person(text: str, hit: str | None) -> None:
    found = PACKS.first_person(text, locale="de")
    assert (found.word if found else None) == hit


@pytest.mark.parametrize(
    "text",
    [
        "Worauf konzentriert sich Dana derzeit?",
        "Womit beschaeftigt sie sich aktuell?",
        "Woran arbeitet Frau Reyes zurzeit?",
    ],
)
def test_current_focus_is_overview_now(text: str) -> None:
    """A focus verb plus a time word asks about her present work, not one article."""
    route = PACKS.route(text)
    assert (route.kind, route.topic) == ("overview", "now")


@pytest.mark.parametrize(
    "text",
    [
        "Worauf konzentriert sich ihre Fallstudie?",
        "Welches Token-Budget empfiehlt sie in ihrem Artikel?",
        "Was schreibt sie in ihrem Beitrag über Evaluierung?",
    ],
)
def test_focus_and_budget_words_about_her_work_are_retrieved(text: str) -> None:
    """Questions about her published work share focus/budget/writing words but are answered."""
    assert PACKS.route(text).kind == "retrieve"
