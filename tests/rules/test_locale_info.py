"""locale.yaml: the typed reader, merging over sources, and what reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardlex import load_packs
from guardlex.errors import PackError
from guardlex.rules.locale_info import (
    LocaleInfo,
    example_subjects,
    fallback_chain,
    load_locale_info,
    locale_infos,
    root_locale,
    shipped_locale_infos,
    shipped_messages,
)

from .conftest import PackWriter

FACTS = {"name": "Test", "scripts": ["Latn"], "direction": "ltr", "example_subject": "D R"}


def test_reader_is_typed_and_frozen() -> None:
    fa = shipped_locale_infos()["fa"]
    assert isinstance(fa, LocaleInfo)
    assert fa.scripts == ("Arab",) and fa.direction == "rtl" and fa.fallback == "en"
    assert "پ" in fa.letters and fa.letter_weight == 2
    assert fa.example_subjects[0] == fa.example_subject
    with pytest.raises(AttributeError):
        fa.name = "x"  # type: ignore[misc]


def test_money_words_and_titles_come_from_data() -> None:
    infos = shipped_locale_infos()
    assert "تومان" in infos["fa"].money_words and "هزار" in infos["fa"].magnitudes
    assert "价格" in infos["zh"].price_words and "博士" in infos["zh"].titles_after
    assert "frau" in infos["de"].titles


def test_fallback_chain_and_root() -> None:
    infos = shipped_locale_infos()
    assert root_locale(infos) == "en"
    assert fallback_chain("pt", infos) == ("pt", "en")
    assert fallback_chain("en", infos) == ("en",)
    assert shipped_messages("en")["refusal"]


def test_later_locale_yaml_replaces_keys(write_pack: PackWriter, tmp_path: Path) -> None:
    write_pack("tx", locale=FACTS, stopwords=["a"])
    write_pack("tx", root=tmp_path / "ext", locale={**FACTS, "titles": ["sir"]})
    infos = locale_infos([tmp_path / "packs", tmp_path / "ext"], entry_points=False)
    assert infos["tx"].titles == ("sir",) and infos["tx"].name == "Test"
    assert infos["tx"].path.endswith("ext/tx/locale.yaml")


def test_folder_without_locale_yaml(write_pack: PackWriter, tmp_path: Path) -> None:
    root = write_pack("tx", stopwords=["a"])
    assert load_locale_info(root / "tx") == LocaleInfo(code="tx")
    # a folder extending a shipped locale keeps the shipped facts
    write_pack("de", root=root, stopwords=["a"])
    packs = load_packs(["de"], paths=[root], shipped=False)
    assert packs.locale_info("de").scripts == ("Latn",) and "ß" in packs.locale_info("de").letters


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"direction": "sideways"}, "allowed values: ltr, rtl"),
        ({"scripts": ["latin"]}, "ISO 15924"),
        ({"fallback": "tx"}, "cannot fall back to itself"),
        ({"colour": "blue"}, "unknown key 'colour'"),
    ],
)
def test_broken_locale_yaml_is_a_pack_error(
    write_pack: PackWriter, change: dict[str, object], words: str
) -> None:
    root = write_pack("tx", locale={**FACTS, **change})
    with pytest.raises(PackError, match=words) as err:
        load_packs(["tx"], paths=[root], shipped=False)
    assert err.value.path and err.value.path.endswith("locale.yaml") and err.value.line


def test_example_subjects_of_every_locale() -> None:
    names = example_subjects(shipped_locale_infos().values())
    assert "Dana Reyes" in names and "达娜" in names and "Дана Рейес" in names
    for info in shipped_locale_infos().values():
        assert info.writes(info.example_subject) > 0, info.code  # written in its own script


def test_rtl_and_titles_route(write_pack: PackWriter) -> None:
    facts = {**FACTS, "titles": ["dott.ssa"], "titles_after": ["sensei"]}
    rule = {
        "id": "engagement-rate",
        "about": "x",
        "phrases": ["how much does {subject} charge"],
        "examples": {"match": ["a", "b"], "no_match": ["c"]},
    }
    root = write_pack("tx", locale=facts, refusal={"engagement": [rule]})
    packs = load_packs(["tx"], ["Dana Reyes"], [root], shipped=False, cache=False)
    for text in ("how much does dott.ssa Reyes charge", "how much does Dana sensei charge"):
        assert packs.route(text).rule_id == "engagement-rate", text
