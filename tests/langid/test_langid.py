"""guardlex.langid: script stage, bundled model, plug-in detectors, new locale folders."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pytest

import guardlex.langid as langid
from guardlex import load_packs
from guardlex.langid.ngram import model

SHORT = {
    "fr": ["J'accepte les missions courtes.", "Quel est son tarif ?"],
    "es": ["Acepto misiones cortas.", "¿Cuánto cobra?"],
    "pt": ["Aceito missões curtas.", "Quanto ela cobra?"],
    "de": ["Ich nehme kurze Aufträge an.", "Was kostet sie?"],
    "en": ["I accept short missions.", "What does she charge?"],
    "ru": ["Сколько она берёт?"],
    "zh": ["她的收费是多少？"],
    "hi": ["उनकी फीस कितनी है?"],
    "fa": ["هزینه‌اش چقدر است؟"],
    "ar": ["كم تتقاضى في الساعة؟"],
}


@pytest.fixture(scope="module")
def packs():  # type: ignore[no-untyped-def]
    return load_packs()


@pytest.mark.parametrize("code", sorted(SHORT))
def test_short_sentences(packs, code: str) -> None:  # type: ignore[no-untyped-def]
    for text in SHORT[code]:
        assert packs.detect_locale(text) == code, text


def test_short_french_first_person_is_caught_without_locale(packs) -> None:  # type: ignore[no-untyped-def]
    hit = packs.first_person("J'accepte les missions courtes.")
    assert hit is not None and hit.locale == "fr"


def test_script_decides_before_the_model(packs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    class Boom:
        name = "boom"
        languages = None

        def detect(self, text: str, candidates: Sequence[str]) -> str:
            raise AssertionError("the model must not run for a single-locale script")

    packs.language_detector = Boom()
    try:
        assert packs.detect_locale("这是什么") == "zh"
        assert packs.detect_locale("यह क्या है") == "hi"
        assert packs.detect_locale("Что это такое") == "ru"
    finally:
        packs.language_detector = None


def test_registry_plugs_in_a_detector(packs) -> None:  # type: ignore[no-untyped-def]
    class AlwaysGerman:
        name = "de-only"
        languages = frozenset({"de", "en"})

        def detect(self, text: str, candidates: Sequence[str]) -> str:
            return "de" if "de" in candidates else candidates[0]

    langid.register("de-only", AlwaysGerman)
    assert "de-only" in langid.detector_names()
    packs.language_detector = langid.get("de-only")
    try:
        assert packs.detect_locale("What does she charge?") == "de"
    finally:
        packs.language_detector = None
    assert packs.detect_locale("What does she charge?") == "en"


def test_new_locale_folder_is_detected_without_python(tmp_path: Path) -> None:
    # a Latin-script locale the bundled model does not know: its hints decide
    folder = tmp_path / "xq"
    folder.mkdir()
    (folder / "locale.yaml").write_text(
        "locale: xq\nschema_version: 1\nname: Test\nscripts: [Latn]\ndirection: ltr\n"
        "fallback: en\ndetection:\n  hints: [blorp, zix, quab]\n  letters: []\n"
        "  letter_weight: 1\nexample_subject: Dana Reyes\n",
        encoding="utf-8",
    )
    (folder / "first_person.yaml").write_text(
        "locale: xq\nschema_version: 1\npronouns: [mek]\n", encoding="utf-8"
    )
    packs = load_packs(["en", "fr", "xq"], paths=[tmp_path])
    assert packs.detect_locale("blorp zix the quab") == "xq"
    assert packs.detect_locale("What does she charge?") == "en"
    assert packs.detect_locale("J'accepte les missions courtes.") == "fr"
    hit = packs.first_person("blorp mek zix quab")
    assert hit is not None and hit.locale == "xq"


def test_model_counts_features_like_py3langid() -> None:
    pytest.importorskip("py3langid")
    from py3langid.langid import MODEL_FILE, LanguageIdentifier, visit_counts

    ident = LanguageIdentifier.from_model_file(MODEL_FILE)
    m = model()
    texts = ["J'accepte les missions courtes.", "هزینه‌اش چقدر است؟", "她的收费是多少？"]
    for text in texts:
        data = m.encode(text)
        theirs = visit_counts(ident.tk_nextmove, ident._rowbase, ident.tk_output, data)
        assert sum(m.counts(data).values()) == sum(theirs.values())


def test_bundled_model_is_current() -> None:
    pytest.importorskip("py3langid")
    path = Path(__file__).resolve().parents[2] / "tools" / "gen_langid_model.py"
    spec = importlib.util.spec_from_file_location("gen_langid_model", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0


ROMANIZED = {
    "hi": [
        "kya aap next month free hain?",
        "unka phone number kya hai yaar",
        "search me zyada kaun jaanta hai, wo ya Jeff Dean?",
    ],
    "fa": ["hazine-ye ye workshop cheqad mishe?", "shoma ye call-e kootah ba team-e ma dari?"],
    "ar": ["momken a3raf el se3r bta3ek?", "hya 3ayza tshta8al ma3ana wala la2?"],
}


@pytest.mark.parametrize("code", sorted(ROMANIZED))
def test_romanized_questions_are_their_locales(packs, code: str) -> None:  # type: ignore[no-untyped-def]
    for text in ROMANIZED[code]:
        assert packs.detect_locale(text) == code, text


def test_one_romanized_word_does_not_change_a_latin_question(packs) -> None:  # type: ignore[no-untyped-def]
    # "Ana" and "habibi" alone, or next to as many English stopwords, stay English
    for text in (
        "Ana, what is your rate?",
        "habibi what are her talks about",
        "is she free in may",
    ):
        assert packs.detect_locale(text) == "en", text
    assert packs.detect_locale("¿Cuánto cobra por una semana?") == "es"


def test_romanized_words_are_no_words_of_a_latin_script_locale(packs) -> None:  # type: ignore[no-untyped-def]
    latin = [c for c in packs.locales if "Latn" in packs.locale_info(c).scripts]
    m = packs.matcher()
    for code in packs.locales:
        for word in packs.locale_info(code).romanized:
            for other in latin:
                assert word not in packs.stopwords(other), (code, word, other)
                assert word not in m.vocabulary(other), (code, word, other)
