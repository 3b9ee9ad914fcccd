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
    # the loader refuses such a pattern; let it through to test the runtime safety net
    monkeypatch.setattr("guardlex.rules.checks.backtracking_risks", lambda pattern: [])
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
    header, payload = files[0].read_text(encoding="utf-8").split("\n", 1)
    assert set(json.loads(header)) == {"format", "key", "sha256"}
    assert json.loads(payload)["code"] == "tx"  # plain JSON, never pickle

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


# -- a broken pack is a PackError with file, line and a sentence, at load time ------------


def _load_error(root: Path, code: str = "tx") -> PackError:
    with pytest.raises(PackError) as err:
        load_packs([code], paths=[root], shipped=False, cache=False)
    return err.value


def test_yaml_aliases_are_refused(write_pack: PackWriter) -> None:
    text = (
        "locale: tx\nschema_version: 1\nmeta:\n"
        "  - &r {id: a, about: x, phrases: [alpha], examples: {match: [a, b], no_match: [c]}}\n"
        "  - *r\n"
    )
    err = _load_error(write_pack("tx", raw={"refusal.yaml": text}))
    assert err.path and err.path.endswith("refusal.yaml") and err.line == 4
    assert "alias" in str(err) and "write the value out in full" in str(err)


def test_yaml_merge_key_and_scalar_alias_are_refused(write_pack: PackWriter) -> None:
    text = "locale: tx\nschema_version: 1\nwords: [&w alpha, *w]\n"
    assert "alias" in str(_load_error(write_pack("tx", raw={"stopwords.yaml": text})))


def test_duplicate_yaml_key_is_refused(write_pack: PackWriter) -> None:
    text = "locale: tx\nschema_version: 1\nwords: [a]\nwords: [b]\n"
    err = _load_error(write_pack("tx", raw={"stopwords.yaml": text}))
    assert err.line == 4 and "appears twice" in str(err) and "line 3" in str(err)


def test_oversized_file_is_refused(write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    from guardlex.rules import _schema

    monkeypatch.setattr(_schema, "MAX_PACK_FILE_BYTES", 100)
    words = "\n".join(f"- word{i}" for i in range(50))
    err = _load_error(write_pack("tx", raw={"stopwords.yaml": f"locale: tx\nwords:\n{words}\n"}))
    assert "bytes" in str(err) and err.path and err.path.endswith("stopwords.yaml")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("locale: tx\nwords:\n\t- a\n", "spaces only"),
        ("locale: tx\nabout: how much: exactly\n", "in quotes"),
        ("locale: tx\nwords: [a, b\n", "not closed"),
        ('locale: tx\nwords: ["\\m a"]\n', "single quotes"),
    ],
)
def test_yaml_errors_are_explained_in_words(write_pack: PackWriter, text: str, words: str) -> None:
    err = _load_error(write_pack("tx", raw={"stopwords.yaml": text}))
    assert words in str(err) and err.line is not None
    assert "expected <block end>" not in str(err) and "scanner" not in str(err)


def test_duplicate_rule_id_in_one_file(write_pack: PackWriter) -> None:
    refusal = {"meta": [rule("same", phrases=["alpha"])], "task": [rule("same", phrases=["b"])]}
    err = _load_error(write_pack("tx", refusal=refusal))
    assert "'same' is used twice" in str(err) and err.line is not None


def test_typo_in_disabled_is_an_error(write_pack: PackWriter, tmp_path: Path) -> None:
    base = write_pack("tx", refusal={"meta": [rule("engagement-price", phrases=["alpha"])]})
    ext = write_pack("tx", root=tmp_path / "ext", refusal={"disabled": ["engagment-price"]})
    with pytest.raises(PackError) as err:
        load_packs(["tx"], paths=[base, ext], shipped=False, cache=False)
    assert "'engagment-price'" in str(err.value) and "engagement-price" in str(err.value)
    assert err.value.path and str(tmp_path / "ext") in err.value.path and err.value.line == 4


def test_catastrophic_regex_is_refused_at_load(write_pack: PackWriter) -> None:
    root = write_pack("tx", refusal={"meta": [rule("slow", patterns=[r"(\w+ )*prompt"])]})
    err = _load_error(root)
    assert "backtrack" in str(err) and err.path and err.path.endswith("refusal.yaml")


def test_invalid_regex_is_refused_at_load(write_pack: PackWriter) -> None:
    root = write_pack("tx", refusal={"meta": [rule("bad", patterns=[r"(unclosed"])]})
    err = _load_error(root)
    assert err.path and err.path.endswith("refusal.yaml") and err.line is not None


def test_entry_point_naming_a_missing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "not-installed"
    points = [SimpleNamespace(name="dist", value="dist:packs", load=lambda: lambda: gone)]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: points)
    with pytest.raises(PackError, match="does not exist"):
        load_packs(["en"])


def test_subject_names_as_one_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="subject_names"):
        load_packs(["en"], subject_names="Dana Reyes")


def test_broken_locale_yaml(write_pack: PackWriter) -> None:
    root = write_pack(
        "tx",
        locale={"name": "T", "scripts": ["Latin"], "direction": "ltr", "example_subject": "D"},
        stopwords=["a"],
    )
    err = _load_error(root)
    assert err.path and err.path.endswith("locale.yaml") and err.line == 5
    assert "'Latin'" in str(err) and "ISO 15924" in str(err) and "^[" not in str(err)


def _v2(code: str, rules: list[dict[str, object]]) -> str:
    import yaml

    doc = {"locale": code, "schema_version": 2, "rules": rules}
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def _v2_rule(**kw: object) -> dict[str, object]:
    out: dict[str, object] = {"id": "r", "category": "meta", "about": "test"}
    out.update(kw)
    out["examples"] = {"match": ["a b", "c d"], "no_match": ["zzz"]}
    return out


@pytest.mark.parametrize(
    ("rule_kw", "words"),
    [
        ({"templates": ["how much does {sujbect} charge"]}, "sujbect"),
        ({"templates": ["what is <prise>"]}, "prise"),
        ({"templates": ["(how much | what"]}, "("),
        ({"templates": ["co*"]}, "co*"),
        ({"when": {"all": ["<nope>"]}}, "nope"),
    ],
)
def test_broken_template_is_a_pack_error_at_load(
    write_pack: PackWriter, rule_kw: dict[str, object], words: str
) -> None:
    root = write_pack("tx", raw={"refusal.yaml": _v2("tx", [_v2_rule(**rule_kw)])})
    err = _load_error(root)
    assert err.path and err.path.endswith("refusal.yaml") and err.line is not None
    assert words in str(err)


def test_jsonschema_agrees_with_the_built_in_validator(tmp_path: Path) -> None:
    """The shipped schemas are real JSON Schema: editors (and jsonschema) read them the
    way the loader does, on every shipped file and on a scaffolded folder."""
    jsonschema = pytest.importorskip("jsonschema")
    from guardlex.rules._schema import load_schema, read_pack_file, validate
    from guardlex.rules.scaffold import new_locale

    new_locale("qx", tmp_path)
    files = sorted(loader.SHIPPED_DIR.glob("*/*.yaml")) + sorted((tmp_path / "qx").glob("*.yaml"))
    assert len(files) >= 80
    for path in files:
        kind = path.name.split(".")[0]
        pf = read_pack_file(path, kind)
        schema = load_schema(kind)
        jsonschema.Draft202012Validator.check_schema(schema)
        theirs = sorted(
            e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(pf.data)
        )
        ours = validate(pf.data, schema)
        assert bool(theirs) == bool(ours), (path, theirs[:3], ours[:3])


def _v2_concepts(code: str, concepts: dict[str, object]) -> str:
    import yaml

    doc = {"locale": code, "schema_version": 2, "concepts": concepts}
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


@pytest.mark.parametrize(
    ("concepts", "words"),
    [
        ({"a": {"terms": ["x <b>"]}, "b": {"terms": ["y <a>"]}}, "circle"),
        ({"a": {"terms": ["x <nope>"]}}, "nope"),
        ({"a": {"terms": ["(x | y"]}}, "unclosed"),
    ],
)
def test_broken_concepts_are_pack_errors_at_load(
    write_pack: PackWriter, concepts: dict[str, object], words: str
) -> None:
    raw = {
        "concepts.yaml": _v2_concepts("tx", concepts),
        "refusal.yaml": _v2("tx", [_v2_rule(templates=["show <a>"])]),
    }
    err = _load_error(write_pack("tx", raw=raw))
    assert words in str(err) and err.path and err.path.endswith("concepts.yaml")
    assert err.line is not None


def test_foreign_or_edited_cache_entry_is_rebuilt(
    write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache = tmp_path / "c"
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(cache))
    root_x = write_pack(
        "tx", root=tmp_path / "x", refusal={"meta": [rule("mx", phrases=["alpha"])]}
    )
    root_y = write_pack(
        "tx", root=tmp_path / "y", refusal={"meta": [rule("my", phrases=["alpha"])]}
    )
    load_packs(["tx"], paths=[root_x], shipped=False)
    (x_file,) = cache.glob("pack-*.json")
    load_packs(["tx"], paths=[root_y], shipped=False)
    (y_file,) = [f for f in cache.glob("pack-*.json") if f != x_file]
    # foreign: another key's (valid) entry under this key's name
    x_file.write_bytes(y_file.read_bytes())
    assert load_packs(["tx"], paths=[root_x], shipped=False).route("alpha").rule_id == "mx"
    # edited: the payload changed after it was written (the digest no longer matches)
    text = x_file.read_text(encoding="utf-8")
    assert '"mx"' in text
    x_file.write_text(text.replace('"mx"', '"zz"'), encoding="utf-8")
    assert load_packs(["tx"], paths=[root_x], shipped=False).route("alpha").rule_id == "mx"
    # truncated
    x_file.write_bytes(x_file.read_bytes()[:-10])
    assert load_packs(["tx"], paths=[root_x], shipped=False).route("alpha").rule_id == "mx"
