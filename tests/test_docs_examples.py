"""The examples in the README and docs work as printed."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import guardlex

ROOT = Path(__file__).resolve().parent.parent


def _blocks(path: Path, lang: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_extension_example_in_extending_md_loads_and_routes(tmp_path: Path) -> None:
    (block,) = [b for b in _blocks(ROOT / "docs" / "extending.md", "yaml") if "sponsorship" in b]
    data = yaml.safe_load(block)
    folder = tmp_path / "en"
    folder.mkdir()
    (folder / "refusal.yaml").write_text(block, encoding="utf-8")
    packs = guardlex.load_packs(["en"], paths=[tmp_path], cache=False)
    for rule in data["rules"]:
        for text in rule["examples"]["match"]:
            assert packs.route(text).category == "engagement", text
        for text in rule["examples"]["no_match"]:
            assert packs.route(text).rule_id != rule["id"], text
    disabled = data["disabled"][0]
    assert all(r.id != disabled for r in packs.rules()), "disabled rule is gone"


def test_readme_python_example_prints_what_it_claims() -> None:
    (block,) = [b for b in _blocks(ROOT / "README.md", "python") if "load_packs" in b]
    packs = guardlex.load_packs(subject_names=["Dana Reyes"])
    assert guardlex.normalise("كيف حالك ۱۲۳") == "کیف حالک 123"
    assert guardlex.count_words("GPT-4o的价格") == 3
    route = packs.route("Is Dana Reyes available next week?")
    assert (route.kind, route.category, route.locale) == ("refuse", "engagement", "en")
    assert packs.route("and on weekends?", previous="Is she available next week?").kind == (
        "refuse"
    )
    assert packs.route("What does her article say about pricing LLM APIs?").kind == "retrieve"
    hit = packs.first_person("我在做自我修正", locale="zh")
    assert hit is not None and hit.word == "我"
    gate = guardlex.SentenceGate(["The Standard plan includes 20 seats."], packs=packs)
    events = list(
        gate.stream(["The Standard plan includes ", "20 seats [1]. It has 25 seats [1]."])
    )
    assert type(events[0]).__name__ == "Released"
    assert type(events[-1]).__name__ == "Stopped" and events[-1].reason == "unsupported_value"
    assert "unsupported_value" in block and "'refuse'" in block


# -- docs/packs.md: the Italian walk-through pack, block by block -------------------------

PACKS_MD = ROOT / "docs" / "packs.md"


def _packs_md_files() -> dict[str, str]:
    text = PACKS_MD.read_text(encoding="utf-8")
    found = re.findall(r"<!-- file: (\S+) -->\n```yaml\n(.*?)```", text, flags=re.S)
    return dict(found)


def _write_pack(root: Path) -> Path:
    files = _packs_md_files()
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return root


def test_packs_md_shows_every_file_of_a_locale() -> None:
    from guardlex.rules.scaffold import SCAFFOLD_FILES

    assert sorted(_packs_md_files()) == sorted(f"it/{k}.yaml" for k in SCAFFOLD_FILES)


def test_packs_md_generator_spec_is_the_shipped_one() -> None:
    """The spec block of §4 is an entry of the real Russian spec, lemma for lemma."""
    text = PACKS_MD.read_text(encoding="utf-8")
    found = re.findall(r"<!-- spec: (\S+) -->\n```yaml\n(.*?)```", text, flags=re.S)
    assert [name for name, _ in found] == ["tools/concepts/ru.yaml"]
    shown = yaml.safe_load(found[0][1])
    real = yaml.safe_load((ROOT / found[0][0]).read_text(encoding="utf-8"))
    assert shown["locale"] == real["locale"]
    for idea, entry in shown["concepts"].items():
        assert idea in real["concepts"], idea
        for key in ("lemmas", "only"):
            assert entry[key] == real["concepts"][idea][key], (idea, key)


def test_packs_md_pack_lints_clean(tmp_path: Path) -> None:
    from guardlex.rules.lint import lint

    root = _write_pack(tmp_path)
    assert [str(f) for f in lint([root / "it"])] == []


def test_packs_md_rules_route_their_examples(tmp_path: Path) -> None:
    root = _write_pack(tmp_path)
    alone = guardlex.load_packs(["it"], ["Dana Reyes"], [root], shipped=False, cache=False)
    every = guardlex.load_packs(None, ["Dana Reyes"], [root])
    for name in ("it/refusal.yaml", "it/overview.yaml"):
        doc = yaml.safe_load(_packs_md_files()[name])
        for rule in doc["rules"]:
            for packs in (alone, every):
                for text in rule["examples"]["match"]:
                    route = packs.route(text)
                    assert route.rule_id == rule["id"] and route.locale == "it", (text, route)
                for text in rule["examples"]["no_match"]:
                    assert packs.route(text).kind == "retrieve", text
    # the frame explains itself: the concepts that made it match
    route = alone.route("Quali sono le sue tariffe?")
    assert {e.concept for e in route.evidence} >= {"price"}
    assert route.about == "Asks what the subject charges for work."
    # the reader's language comes from locale.yaml, with every shipped locale loaded
    assert every.detect_locale("Quanto chiede Dana per un progetto?") == "it"
    assert every.locale_info("it").name == "Italian"


def test_packs_md_concept_examples(tmp_path: Path) -> None:
    from guardlex.rules.loader import discover, load_locale

    root = _write_pack(tmp_path)
    data = load_locale("it", discover([root], entry_points=False, shipped=False)["it"])
    assert set(data.concepts) == {"price", "about_article"}


def test_packs_md_routing_cases(tmp_path: Path) -> None:
    (block,) = re.findall(
        r"<!-- routing-cases -->\n```yaml\n(.*?)```", PACKS_MD.read_text(encoding="utf-8"), re.S
    )
    packs = guardlex.load_packs(None, ["Dana Reyes"], [_write_pack(tmp_path)])
    for case in yaml.safe_load(block)["cases"]:
        route = packs.route(case["text"], case.get("previous"))
        assert route.kind == case["expect"], case
        for key in ("category", "topic"):
            if key in case:
                assert getattr(route, key) == case[key], case


def test_packs_md_commands_work(tmp_path: Path, monkeypatch: object) -> None:
    import contextlib
    import io
    import os
    import shlex

    from guardlex.cli import main

    text = PACKS_MD.read_text(encoding="utf-8")
    commands = [
        line
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
        for line in block.splitlines()
        if line.startswith("guardlex ")
    ]
    assert any(c.startswith("guardlex new-locale") for c in commands)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for command in commands:
            argv = shlex.split(command)[1:]
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                status = main(argv)
            assert status == 0, (command, out.getvalue())
            if argv[0] == "new-locale":
                # then the walk-through's files replace the scaffold's
                _write_pack(tmp_path / "mypacks")
            if argv[0] == "route":
                assert out.getvalue().startswith("refuse"), (command, out.getvalue())
    finally:
        os.chdir(cwd)


def test_packs_md_states_the_precedence_of_the_matcher() -> None:
    from guardlex.rules.matcher import CATEGORY_ORDER

    (block,) = re.findall(
        r"<!-- precedence -->\n(.*?)<!-- /precedence -->",
        PACKS_MD.read_text(encoding="utf-8"),
        re.S,
    )
    listed = re.search(r"category order decides: ([a-z_, ]+);", " ".join(block.split()))
    assert listed is not None
    assert tuple(c.strip() for c in listed.group(1).split(",")) == CATEGORY_ORDER
