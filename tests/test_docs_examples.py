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
    for rule in data["engagement"]:
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
