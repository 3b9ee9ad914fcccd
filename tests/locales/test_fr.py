"""French-specific behaviour of the fr pack (the generic harness runs every rule's examples).

Covers what only French input does: elision with the ASCII and the typographic
apostrophe (l'adresse, qu’elle, j’ai), inverted questions written with or without hyphens
(a-t-elle, a t elle), the space French puts before "?", and "il" standing for things.
"""

from __future__ import annotations

import pytest

import guardlex
from guardlex.rules import Packs

PACKS: Packs = guardlex.load_packs(["fr"], subject_names=("Dana Reyes",))


def _route(text: str, previous: str | None = None) -> tuple[str, str | None]:
    r = PACKS.route(text, previous)
    return r.kind, r.category


@pytest.mark.parametrize("apostrophe", ["'", "’"])
@pytest.mark.parametrize(
    ("template", "category"),
    [
        ("Quelle est l{a}adresse postale de Dana ?", "personal_data"),
        ("Combien est-ce qu{a}elle prend ?", "engagement"),
        ("Penses-tu qu{a}elle accepterait ?", "speculation"),
        ("Nous avons une offre d{a}emploi pour elle", "engagement"),
        ("Qui t{a}a programmé ?", "meta"),
    ],
)
def test_elision_with_either_apostrophe(template: str, category: str, apostrophe: str) -> None:
    assert _route(template.format(a=apostrophe)) == ("refuse", category)


@pytest.mark.parametrize(
    "text",
    ["Quel âge a-t-elle ?", "quel age a t elle", "QUEL ÂGE A-T-ELLE?", "Quel âge elle a ?"],
)
def test_inversion_with_or_without_hyphens(text: str) -> None:
    assert _route(text) == ("refuse", "personal_data")


@pytest.mark.parametrize("text", ["Et ça coûte combien ?", "et ca coute combien?"])
def test_space_before_question_mark_is_optional(text: str) -> None:
    assert _route(text, previous="Quels services propose Dana ?") == ("refuse", "engagement")


@pytest.mark.parametrize(
    "text",
    [
        "Le modèle est-il disponible en open source ?",
        "La démo est-elle disponible en ligne ?",
        "Pourquoi sa méthode est-elle meilleure que BM25 ?",
        "Comment a-t-elle géré la limitation de débit ?",
    ],
)
def test_pronouns_for_things_are_not_the_subject(text: str) -> None:
    assert _route(text)[0] != "refuse"


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("J'ai conçu le système.", "J'"),
        ("J’ai écrit cet article.", "J’"),
        ("Ce projet m’a appris la rigueur.", "m’"),
        ("Mon tarif est de 700 euros.", "Mon"),
        ("Elle a conçu le système.", None),
        ("Vous trouverez ses articles sur la page Publications.", None),
    ],
)
def test_first_person_elided_forms(text: str, hit: str | None) -> None:
    found = PACKS.first_person(text, locale="fr")
    assert (found.word if found else None) == hit


@pytest.mark.parametrize(
    "text",
    [
        "Sur quoi Dana se concentre-t-elle actuellement ?",
        "sur quoi elle travaille en ce moment",
        "Elle bosse sur quoi en ce moment ?",
    ],
)
def test_current_focus_is_overview_now(text: str) -> None:
    """A focus verb plus a time word asks about her present work, not one article."""
    route = PACKS.route(text)
    assert (route.kind, route.topic) == ("overview", "now")


@pytest.mark.parametrize(
    "text",
    [
        "Sur quoi se concentre son étude de cas ?",
        "Quel budget de tokens recommande-t-elle dans son article ?",
        "Pourquoi sa méthode est-elle meilleure que BM25 ?",
    ],
)
def test_focus_and_budget_words_about_her_work_are_retrieved(text: str) -> None:
    """Questions about her published work share focus/budget/writing words but are answered."""
    assert PACKS.route(text).kind == "retrieve"
