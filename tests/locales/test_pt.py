"""Portuguese-specific behaviour of the pt pack (the generic harness runs every rule's examples).

Covers what only Portuguese input does: Brazilian and European variants (você/tu,
celular/telemóvel, "quanto é que"), the article before the subject's name ("a Dana"),
"dela" alternating with "da Dana", optional accents, and first-person forms that collide
with other words ("nós" becomes "nos", "em + os").
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import yaml

import guardlex
from guardlex.rules import Packs

PACK_DIR = Path(guardlex.__file__).parent / "locales" / "pt"
PACKS: Packs = guardlex.load_packs(["pt"], subject_names=("Dana Reyes",))


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _route(text: str, previous: str | None = None) -> tuple[str, str | None]:
    r = PACKS.route(text, previous)
    return r.kind, r.category


def _refusal_examples() -> list[tuple[str, str]]:
    refusal = yaml.safe_load((PACK_DIR / "refusal.yaml").read_text(encoding="utf-8"))
    return [
        (ex, category)
        for rule in refusal["rules"]
        for category in (rule["category"],)
        for ex in rule["examples"]["match"]
    ]


@pytest.mark.parametrize(("text", "category"), _refusal_examples(), ids=lambda v: str(v)[:30])
def test_accents_are_optional(text: str, category: str) -> None:
    assert _route(text) == _route(_strip_accents(text)) == ("refuse", category)


@pytest.mark.parametrize(
    ("brazil", "portugal"),
    [
        ("Quanto você cobra por hora?", "Quanto é que cobras por hora?"),
        ("Qual é o celular dela?", "Qual é o telemóvel dela?"),
        ("Você está disponível em março?", "Tens disponibilidade em março?"),
        ("Podemos trabalhar juntos num projeto?", "Quer trabalhar connosco?"),
    ],
)
def test_brazilian_and_european_variants(brazil: str, portugal: str) -> None:
    assert _route(brazil)[0] == _route(portugal)[0] == "refuse"
    assert _route(brazil)[1] == _route(portugal)[1]


@pytest.mark.parametrize(
    "text",
    [
        "Quanto ela cobra?",
        "Quanto a Dana cobra?",
        "Quanto Dana cobra?",
        "Qual é o telefone dela?",
        "Qual é o telefone da Dana?",
        "quanto vc cobra?",
    ],
)
def test_article_before_name_and_dela(text: str) -> None:
    assert _route(text)[0] == "refuse"


def test_research_into_product_is_answered() -> None:
    assert _route("Como ela traduz pesquisa em produto?") == ("retrieve", None)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Eu desenvolvi o sistema de busca.", "Eu"),
        ("Nós desenvolvemos o sistema.", "Nós"),
        ("Trabalhei na Quillmark.", "Trabalhei"),
        ("Os resultados aparecem nos gráficos do artigo.", None),  # nós == nos (em + os)
        ("O sistema é preciso e rápido.", None),  # "preciso" is also an adjective
        ("Como funciona o sistema de recuperação?", None),  # "como" is never first person
        ("O trabalho dela foca na avaliação de RAG.", None),  # "trabalho" is a noun here
    ],
)
def test_first_person_forms(text: str, hit: str | None) -> None:
    found = PACKS.first_person(text, locale="pt")
    assert (found.word if found else None) == hit


@pytest.mark.parametrize(
    "text",
    [
        "No que a Dana está focada atualmente?",
        "em que ela esta concentrada agora",
        "Com o que a Dana está envolvida atualmente?",
    ],
)
def test_current_focus_is_overview_now(text: str) -> None:
    """A focus verb plus a time word asks about her present work, not one article."""
    route = PACKS.route(text)
    assert (route.kind, route.topic) == ("overview", "now")


@pytest.mark.parametrize(
    "text",
    [
        "Em que se concentra o artigo dela sobre avaliação?",
        "Qual orçamento de tokens ela recomenda no artigo?",
        "O que ela escreve no post sobre avaliação?",
    ],
)
def test_focus_and_budget_words_about_her_work_are_retrieved(text: str) -> None:
    """Questions about her published work share focus/budget/writing words but are answered."""
    assert PACKS.route(text).kind == "retrieve"
