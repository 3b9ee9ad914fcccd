"""`guardlex new-locale`: a scaffolded folder loads, lints clean, routes and is detected."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from guardlex import load_packs
from guardlex.cli import main
from guardlex.rules.lint import lint
from guardlex.rules.scaffold import SCAFFOLD_FILES, ScaffoldError, new_locale

RULE = {
    "id": "engagement-fee",
    "category": "engagement",
    "about": "Asks what the subject charges.",
    "templates": ["kitne paise (leti | lete) [hai | hain]"],
    "examples": {
        "match": ["Dana kitne paise leti hai", "kitne paise lete hain"],
        "no_match": ["x"],
    },
}


def _add_rule(folder: Path) -> None:
    path = folder / "refusal.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["rules"] = [RULE]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_scaffold_writes_every_file_with_schema_header(tmp_path: Path) -> None:
    folder = new_locale("qx", tmp_path)
    for kind in SCAFFOLD_FILES:
        text = (folder / f"{kind}.yaml").read_text(encoding="utf-8")
        first = text.splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=")
        schema = (folder / first.split("$schema=", 1)[1]).resolve()
        assert schema.is_file() and schema.name == f"{kind}.schema.json"
        doc = yaml.safe_load(text)
        assert doc["locale"] == "qx" and isinstance(doc["schema_version"], int)


def test_scaffold_lints_clean_and_loads(tmp_path: Path) -> None:
    folder = new_locale("qx", tmp_path)
    assert lint([folder]) == []
    packs = load_packs(["qx"], paths=[tmp_path], shipped=False, cache=False)
    assert packs.route("anything at all").kind == "retrieve"
    assert packs.messages("qx")["refusal"]  # the root locale's text until translated


def test_one_rule_added_routes_a_question(tmp_path: Path) -> None:
    folder = new_locale("qx", tmp_path)
    _add_rule(folder)
    assert [f for f in lint([folder]) if f.level == "ERROR"] == []
    packs = load_packs(["qx"], paths=[tmp_path], shipped=False, cache=False)
    route = packs.route("Dana kitne paise leti hai?")
    assert route.kind == "refuse" and route.category == "engagement"
    assert route.rule_id == "engagement-fee"


def test_new_locale_is_detected_from_its_locale_yaml(tmp_path: Path) -> None:
    folder = new_locale("tt", tmp_path, name="Tatar", scripts=("Cyrl",))
    path = folder / "locale.yaml"
    text = path.read_text(encoding="utf-8").replace("letters: []", "letters: [ә, ө, ү, җ, ң, һ]")
    path.write_text(text, encoding="utf-8")
    packs = load_packs(["ru", "tt"], paths=[tmp_path], cache=False)
    assert packs.detect_locale("Дана хәзер нәрсә эшли?") == "tt"
    assert packs.detect_locale("Чем сейчас занимается Дана?") == "ru"
    assert packs.locale_info("tt").scripts == ("Cyrl",)


@pytest.mark.parametrize("code", ["TT", "t", "en_US", "../x", ""])
def test_bad_code_is_a_one_line_error(
    code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new-locale", code, "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a locale code" in err
    assert not any(tmp_path.iterdir())


def test_existing_folder_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new-locale", "qx", "--dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["new-locale", "qx", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err


def test_bad_script_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="ISO 15924"):
        new_locale("qx", tmp_path, scripts=("Latin",))
