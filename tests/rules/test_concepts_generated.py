"""The generated concepts (``tools/gen_concepts.py``): the committed files equal the
generator's output, wrong specs are refused with the entry named, and the hand-written
packs use what is generated.

The libraries (pymorphy3, verbecc, hazm) are in the ``tools`` extra, which the ``test``
extra installs, so these run with the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from guardlex import load_packs

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(p.stem for p in (ROOT / "tools" / "concepts").glob("*.yaml"))


_LOADED: dict[str, ModuleType] = {}


@pytest.fixture
def gen(tool: Callable[[str], ModuleType]) -> ModuleType:
    """The generator, loaded once (its library objects are cached inside it)."""
    if "gen" not in _LOADED:
        _LOADED["gen"] = tool("gen_concepts")
    return _LOADED["gen"]


def test_every_library_locale_has_a_spec() -> None:
    assert SPECS == ["es", "fa", "fr", "pt", "ru"]


@pytest.mark.parametrize("code", SPECS)
def test_committed_file_equals_generator_output(code: str, gen: ModuleType) -> None:
    path = ROOT / "src" / "guardlex" / "locales" / code / "concepts.generated.yaml"
    assert path.read_text(encoding="utf-8") == gen.generate(code), (
        f"run: python tools/gen_concepts.py {code}"
    )


@pytest.mark.parametrize("code", SPECS)
def test_every_generated_concept_is_used_by_the_hand_written_pack(code: str) -> None:
    folder = ROOT / "src" / "guardlex" / "locales" / code
    generated = yaml.safe_load((folder / "concepts.generated.yaml").read_text(encoding="utf-8"))
    hand = "".join(
        (folder / name).read_text(encoding="utf-8")
        for name in ("concepts.yaml", "refusal.yaml", "overview.yaml")
    )
    for name in generated["concepts"]:
        assert f"<{name}>" in hand, f"{code}: {name} is generated but no hand-written term uses it"


def _spec(monkeypatch: pytest.MonkeyPatch, gen: ModuleType, tmp_path: Path, doc: Any) -> None:
    (tmp_path / "ru.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(gen, "SPECS", tmp_path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"about": "x", "lemmas": ["брать"], "only": [["VERB", "4per"]]},
            "unknown pymorphy3 grammeme",
        ),
        ({"about": "x", "lemmas": ["бруть"]}, "does not know the lemma"),
        ({"about": "x", "lemmas": ["брать"], "persons": ["4s"]}, "unknown person"),
        ({"lemmas": ["брать"]}, "needs 'about'"),
    ],
)
def test_a_wrong_spec_names_its_entry(
    monkeypatch: pytest.MonkeyPatch,
    gen: ModuleType,
    tmp_path: Path,
    entry: dict[str, Any],
    message: str,
) -> None:
    _spec(monkeypatch, gen, tmp_path, {"locale": "ru", "concepts": {"bad_idea": entry}})
    with pytest.raises(gen.SpecError, match=message) as err:
        gen.generate("ru")
    assert "bad_idea" in str(err.value)


def test_an_unknown_tense_is_refused(
    monkeypatch: pytest.MonkeyPatch, gen: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "es.yaml").write_text(
        "locale: es\nconcepts:\n  x:\n    about: x\n    lemmas: [cobrar]\n"
        "    tenses: [indicativo/presentee]\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(gen, "SPECS", tmp_path)
    with pytest.raises(gen.SpecError, match="no tense 'indicativo/presentee'"):
        gen.generate("es")


def test_a_name_clash_with_the_hand_written_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, gen: ModuleType, tmp_path: Path
) -> None:
    locales = tmp_path / "locales"
    (locales / "ru").mkdir(parents=True)
    (locales / "ru" / "concepts.yaml").write_text(
        "locale: ru\nschema_version: 2\nconcepts:\n  gen_x: {terms: [берет]}\n", encoding="utf-8"
    )
    monkeypatch.setattr(gen, "LOCALES", locales)
    _spec(
        monkeypatch,
        gen,
        tmp_path,
        {"locale": "ru", "concepts": {"x": {"about": "x", "lemmas": ["брать"]}}},
    )
    with pytest.raises(gen.SpecError, match="also defines 'gen_x'"):
        gen.generate("ru")


def test_main_reports_a_wrong_spec_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
    gen: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _spec(
        monkeypatch,
        gen,
        tmp_path,
        {"locale": "ru", "concepts": {"y": {"about": "x", "lemmas": ["бруть"]}}},
    )
    assert gen.main(["ru"]) == 2
    assert "entry 'y'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("code", "question", "category"),
    [
        # forms only the generator wrote (the hand list had берёт/возьмёт/просите, not
        # запросит or попросите): both were answered before the list was generated
        ("ru", "Сколько она запросит за аудит?", "engagement"),
        ("ru", "Сколько вы попросите за день?", "engagement"),
    ],
)
def test_generated_forms_reach_the_routes(code: str, question: str, category: str) -> None:
    route = load_packs([code]).route(question)
    assert (route.kind, route.category) == ("refuse", category), route
