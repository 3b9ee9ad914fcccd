"""Loading: errors with file and line, extension and merge, entry points, cache, limits."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import guardlex.rules as rules_pkg
from guardlex import load_packs
from guardlex.errors import InputTooLargeError, PackError, UnknownLocaleError
from guardlex.rules import MAX_INPUT_CHARS, TIMEOUT_RULE_ID, engine, loader

from .conftest import PackWriter, rule


def test_unknown_locale_lists_available() -> None:
    with pytest.raises(UnknownLocaleError) as err:
        load_packs(["xx-nope"])
    assert "en" in str(err.value) and "xx-nope" in str(err.value)


def test_yaml_syntax_error_has_line(write_pack: PackWriter) -> None:
    text = "locale: tx\nschema_version: 1\nengagement:\n  - id: a\n    phrases: [unclosed\n"
    root = write_pack("tx", raw={"refusal.yaml": text})
    with pytest.raises(PackError) as err:
        load_packs(["tx"], paths=[root], shipped=False)
    assert err.value.line is not None and err.value.line >= 5
    assert "refusal.yaml:" in str(err.value)


def test_schema_error_points_at_the_line(write_pack: PackWriter) -> None:
    text = (
        "locale: tx\nschema_version: 1\nengagement:\n  - id: good\n    about: x\n"
        "    phrases: [a b]\n    examples: {match: [a b, a b c], no_match: [c]}\n"
        "  - id: bad\n    about: y\n    phrasess: [c d]\n"
        "    examples: {match: [c d, c d e], no_match: [e]}\n"
    )
    root = write_pack("tx", raw={"refusal.yaml": text})
    with pytest.raises(PackError) as err:
        load_packs(["tx"], paths=[root], shipped=False)
    assert err.value.line == 10
    assert "phrasess" in str(err.value)


def test_locale_mismatch_and_unknown_version(write_pack: PackWriter) -> None:
    root = write_pack("tx", raw={"messages.yaml": "locale: ty\nschema_version: 1\nmessages: {}\n"})
    with pytest.raises(PackError, match="folder name"):
        load_packs(["tx"], paths=[root], shipped=False)
    root = write_pack("tz", raw={"messages.yaml": "locale: tz\nschema_version: 7\nmessages: {}\n"})
    with pytest.raises(PackError, match="schema_version"):
        load_packs(["tz"], paths=[root], shipped=False)


def test_input_size_limit(write_pack: PackWriter) -> None:
    root = write_pack("tx", refusal={"meta": [rule("m", phrases=["prompt"])]})
    packs = load_packs(["tx"], paths=[root], shipped=False)
    packs.route("a" * MAX_INPUT_CHARS)
    with pytest.raises(InputTooLargeError):
        packs.route("a" * (MAX_INPUT_CHARS + 1))
    with pytest.raises(InputTooLargeError):
        packs.route("ok", previous="a" * (MAX_INPUT_CHARS + 1))
    with pytest.raises(InputTooLargeError):
        packs.first_person("a" * (MAX_INPUT_CHARS + 1))


def test_regex_timeout_fails_closed(
    write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_pack("tx", refusal={"meta": [rule("slow", patterns=["(?:a|aa)+$"])]})
    packs = load_packs(["tx"], paths=[root], shipped=False)
    monkeypatch.setattr(engine, "REGEX_TIMEOUT", 0.01)
    route = packs.route("a" * 5000 + "!")
    assert route.kind == "refuse" and route.rule_id == TIMEOUT_RULE_ID
    assert "timed out" in caplog.text


def test_extension_extends_replaces_and_disables(write_pack: PackWriter, tmp_path: Path) -> None:
    base = write_pack(
        "tx",
        refusal={
            "meta": [
                rule("keep", phrases=["alpha"]),
                rule("swap", phrases=["beta"]),
                rule("drop", phrases=["gamma"]),
            ]
        },
    )
    ext = tmp_path / "ext"
    write_pack(
        "tx",
        root=ext,
        refusal={
            "meta": [rule("swap", phrases=["delta"])],
            "task": [rule("new", phrases=["epsilon"])],
            "disabled": ["drop"],
        },
    )
    write_pack("ty", root=ext, refusal={"task": [rule("other", phrases=["zeta"])]})
    packs = load_packs(["tx", "ty"], paths=[base, ext], shipped=False)
    assert packs.route("alpha").rule_id == "keep"
    assert packs.route("beta").kind == "retrieve"  # replaced by the extension
    assert packs.route("delta").rule_id == "swap"
    assert packs.route("gamma").kind == "retrieve"  # disabled by id
    assert packs.route("epsilon").rule_id == "new"  # appended
    assert packs.route("zeta").locale == "ty"  # a new locale
    assert [r.id for r in packs.rules("tx")] == ["keep", "swap", "new"]


def test_enabled_false_turns_a_rule_off(write_pack: PackWriter) -> None:
    root = write_pack("tx", refusal={"meta": [rule("off", phrases=["alpha"], enabled=False)]})
    assert load_packs(["tx"], paths=[root], shipped=False).route("alpha").kind == "retrieve"


def test_entry_point_packs(
    write_pack: PackWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_pack(
        "tq", root=tmp_path / "dist", refusal={"meta": [rule("ep", phrases=["omega"])]}
    )
    points = [SimpleNamespace(name="dist", value="dist:packs", load=lambda: lambda: root)]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: points)
    packs = load_packs(["tq"])
    assert packs.route("omega").rule_id == "ep"
    broken = [SimpleNamespace(name="bad", value="bad:x", load=lambda: 1 / 0)]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: broken)
    with pytest.raises(PackError, match="entry point 'bad'"):
        load_packs(["en"])


def test_missing_pack_directory_is_an_error() -> None:
    with pytest.raises(PackError, match="does not exist"):
        load_packs(["en"], paths=["/nonexistent/guardlex-packs"])


def test_cache_is_written_and_reused(
    write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(cache))
    root = write_pack("tx", refusal={"meta": [rule("m", phrases=["prompt"])]})
    first = load_packs(["tx"], paths=[root], shipped=False)
    files = list(cache.glob("pack-*.json"))
    assert len(files) == 1
    json.loads(files[0].read_text(encoding="utf-8"))  # plain JSON, never pickle

    def fail(*a: object, **k: object) -> None:
        raise AssertionError("recompiled although cached")

    monkeypatch.setattr(rules_pkg, "compile_locale", fail)
    second = load_packs(["tx"], paths=[root], shipped=False)
    assert second.route("prompt") == first.route("prompt")
    # a changed pack file is a new key: compiled again
    write_pack("tx", refusal={"meta": [rule("m2", phrases=["prompt"])]})
    with pytest.raises(AssertionError, match="recompiled"):
        load_packs(["tx"], paths=[root], shipped=False)


def test_corrupt_or_unwritable_cache_is_ignored(
    write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(cache))
    root = write_pack("tx", refusal={"meta": [rule("m", phrases=["prompt"])]})
    load_packs(["tx"], paths=[root], shipped=False)
    for f in cache.glob("pack-*.json"):
        f.write_text("{not json", encoding="utf-8")
    assert load_packs(["tx"], paths=[root], shipped=False).route("prompt").rule_id == "m"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(blocker / "sub"))
    assert load_packs(["tx"], paths=[root], shipped=False).route("prompt").rule_id == "m"
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", "off")
    assert load_packs(["tx"], paths=[root], shipped=False).route("prompt").rule_id == "m"


def test_locales_are_discovered_not_listed() -> None:
    found = loader.discover(entry_points=False)
    assert "en" in found
    assert all(loader.LOCALE_CODE.match(code) for code in found)


def test_messages_fall_back_to_english(write_pack: PackWriter) -> None:
    root = write_pack("en", messages={"refusal": "No.", "gate_stop": "Stopped."})
    write_pack("tx", root=root, messages={"refusal": "Nein."})
    packs = load_packs(["tx", "en"], paths=[root], shipped=False)
    assert packs.messages("tx")["refusal"] == "Nein."
    assert packs.messages("tx")["gate_stop"] == "Stopped."
    assert dict(packs.messages("en")) == {"refusal": "No.", "gate_stop": "Stopped."}
