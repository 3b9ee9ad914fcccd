"""First-person detection: whole words, exceptions, locale choice, spans."""

from __future__ import annotations

from guardlex import load_packs

from .conftest import PackWriter


def test_han_exception_compounds(write_pack: PackWriter) -> None:
    root = write_pack("zx", first_person={"pronouns": ["我", "我们"], "exceptions": ["自我"]})
    packs = load_packs(["zx"], paths=[root], shipped=False)
    assert packs.first_person("这是自我修正的方法。", locale="zx") is None
    hit = packs.first_person("这个项目是我做的。", locale="zx")
    assert hit is not None and hit.word == "我" and hit.span == (5, 6)


def test_whole_words_and_original_span(write_pack: PackWriter) -> None:
    root = write_pack("tx", first_person={"pronouns": ["we", "i’m", "i'm"]})
    packs = load_packs(["tx"], paths=[root], shipped=False)
    assert packs.first_person("The weather was fine.", locale="tx") is None
    text = "Results: \u200bWE shipped it."
    hit = packs.first_person(text, locale="tx")
    assert hit is not None and text[hit.span[0] : hit.span[1]] == "WE" == hit.word
    assert packs.first_person("I'm done", locale="tx") is not None


def test_explicit_locale_avoids_cross_language_collisions() -> None:
    packs = load_packs(["en", "es"])
    # Spanish "me" (object pronoun) is first person in Spanish too; check a word only
    # one language has: English "we" in an English sentence, none in Spanish text.
    assert packs.first_person("We built it.", locale="en") is not None
    assert packs.first_person("Ella construyó el buscador.", locale="es") is None
    hit = packs.first_person("We built it.")
    assert hit is not None and hit.locale == "en"
