"""Russian-specific behaviour of the ru pack (the generic harness runs every rule's examples).

Covers what only Russian input does: ё and е spelled either way, the case forms of the
subject pronoun (её/ее, ней, ему, него), Latin homoglyphs typed inside Cyrillic words,
zero-width characters inside words, whole-word matching against longer inflected
forms, and first-person verb endings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import guardlex
from guardlex.rules import Packs

NAMES = ("Dana Reyes", "Дана Рейес")
PACK_DIR = Path(guardlex.__file__).parent / "locales" / "ru"
# Cyrillic letters with a Latin twin that looks the same
HOMOGLYPHS = {"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y"}


@pytest.fixture(scope="module")
def packs() -> Packs:
    return guardlex.load_packs(["ru"], subject_names=NAMES)


_PACKS = guardlex.load_packs(["ru"], subject_names=NAMES)


def _refusal_examples() -> list[tuple[str, str]]:
    refusal = yaml.safe_load((PACK_DIR / "refusal.yaml").read_text(encoding="utf-8"))
    return [
        (ex, category)
        for rule in refusal["rules"]
        for category in (rule["category"],)
        for ex in rule["examples"]["match"]
    ]


EXAMPLES = _refusal_examples()


def _route(text: str) -> tuple[str, str | None]:
    r = _PACKS.route(text)
    return r.kind, r.category


@pytest.mark.parametrize(("text", "category"), EXAMPLES, ids=lambda v: str(v)[:24])
def test_yo_and_ye_are_interchangeable(text: str, category: str) -> None:
    as_ye = text.replace("ё", "е").replace("Ё", "Е")
    as_yo = text.replace("е", "ё").replace("Е", "Ё")  # over-applied on purpose
    assert _route(as_ye) == _route(as_yo) == ("refuse", category)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Какие у неё расценки?", "engagement"),
        ("Какие у нее расценки?", "engagement"),  # е for ё
        ("Сколько стоит работа с ней?", "engagement"),
        ("Сколько ему лет?", "personal_data"),  # a male subject
        ("Есть ли у него дети?", "personal_data"),
        ("Можно ли ей доверять?", "speculation"),
        ("Можно ли ему доверять?", "speculation"),
        ("Стоит ли с ним работать?", "speculation"),
    ],
)
def test_pronoun_case_forms(packs: Packs, text: str, category: str) -> None:
    r = packs.route(text)
    assert (r.kind, r.category) == ("refuse", category)


def _with_homoglyph(text: str, word_index: int, letter_index: int) -> str | None:
    """Replace one Cyrillic letter of a word of four letters or more with its Latin twin."""
    words = [m for m in regex.finditer(r"\p{Cyrillic}{4,}", text)]
    if not words:
        return None
    m = words[word_index % len(words)]
    spots = [i for i, ch in enumerate(m.group()) if ch.lower() in HOMOGLYPHS]
    if not spots:
        return None
    i = m.start() + spots[letter_index % len(spots)]
    ch = text[i]
    twin = HOMOGLYPHS[ch.lower()]
    return text[:i] + (twin.upper() if ch.isupper() else twin) + text[i + 1 :]


@settings(max_examples=60, deadline=None)
@given(
    example=st.sampled_from(EXAMPLES),
    word_index=st.integers(min_value=0, max_value=20),
    letter_index=st.integers(min_value=0, max_value=20),
)
def test_latin_homoglyph_inside_a_word_changes_nothing(
    example: tuple[str, str], word_index: int, letter_index: int
) -> None:
    text, category = example
    mixed = _with_homoglyph(text, word_index, letter_index)
    if mixed is None:
        return
    assert mixed != text
    assert _route(mixed) == ("refuse", category)


@settings(max_examples=60, deadline=None)
@given(
    example=st.sampled_from(EXAMPLES),
    position=st.integers(min_value=0, max_value=200),
    mark=st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"]),
)
def test_zero_width_characters_inside_a_word_change_nothing(
    example: tuple[str, str], position: int, mark: str
) -> None:
    text, category = example
    inner = [
        m.start() + 1 + k
        for m in regex.finditer(r"\p{Cyrillic}{2,}", text)
        for k in range(len(m.group()) - 1)
    ]
    if not inner:
        return
    i = inner[position % len(inner)]
    assert _route(text[:i] + mark + text[i:]) == ("refuse", category)


@pytest.mark.parametrize(
    "text",
    [
        "Как она обрабатывает длинные документы?",  # "инн" (tax number) inside длинные
        "Как она описывает нанятых аннотаторов?",  # нанятых is not нанять
        "Какие гонорарные модели она разбирает в статье?",  # гонорарные is not гонорар
        "Что она пишет в статье о ценообразовании API?",
        "Как она обходит рейт-лимиты у провайдеров?",
        "Как её система защищает номера телефонов пользователей?",
        "Что она кладёт в системный промпт своего ассистента?",
        "Как модель может проигнорировать системный промпт, по её статье?",
        "Сколько лет она работает с поиском?",
        "Доступна ли её статья про RAG на английском?",
        "Сколько она лет работала в Яндексе?",
    ],
)
def test_hard_negatives_are_not_refused(packs: Packs, text: str) -> None:
    assert packs.route(text).kind != "refuse"


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Я работаю в Берлине.", "Я"),
        ("Думаю, это верно.", "Думаю"),
        ("Рассмотрим пример с двумя документами.", "Рассмотрим"),
        ("Это моё мнение.", "моё"),
        ("Это мое мнение.", "мое"),
        ("В нашей команде так принято.", "нашей"),
        ("Могу прислать ссылку.", "Могу"),
    ],
)
def test_first_person_words_and_verb_endings(packs: Packs, text: str, word: str) -> None:
    hit = packs.first_person(text, locale="ru")
    assert hit is not None
    assert hit.word == word
    assert text[hit.span[0] : hit.span[1]] == word


@pytest.mark.parametrize(
    "text",
    [
        "Она работает в Берлине.",
        "Она думает, что это верно.",
        "Дана сделала это в 2020 году.",  # past tense carries no person
        "Мыло и мышь не содержат местоимений.",  # мы only as a whole word
        "По её мнению, BM25 надёжнее.",
        "Получаем 24 как произведение 3 и 8.",  # impersonal 1pl of technical prose
    ],
)
def test_third_person_is_not_first_person(packs: Packs, text: str) -> None:
    assert packs.first_person(text, locale="ru") is None
