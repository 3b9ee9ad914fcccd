"""Shipped programs (``guardlex/rules/precompiled``): used only for their own pack files
and code, and equal to what compiling gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import guardlex.rules as rules_pkg
from guardlex import load_packs
from guardlex.rules import cache, compile_locale
from guardlex.rules.loader import SHIPPED_DIR, discover, load_locale, source_digest
from guardlex.rules.matcher import program_index

from .conftest import PackWriter, rule


def _plain(payload: dict[str, Any]) -> Any:
    """The payload as JSON reads it back (tuples become lists), for comparison."""
    return json.loads(json.dumps(payload, ensure_ascii=False, sort_keys=True))


def _unpacked(payload: dict[str, Any]) -> Any:
    """A stored program (``cache.packed``) with its rules and concepts decoded, its index
    checked against the forms and then dropped: what compiling gives, for comparison."""
    payload = dict(payload)
    payload["first_person_words"] = dict(payload["first_person_words"])  # decoded
    program = dict(payload["program"])
    index = dict(program.pop("index"))
    refs = index["refs"] = dict(index["refs"])
    for kind in ("w", "t"):
        refs[kind] = {k: list(cache.unpacked_refs(v)) for k, v in refs[kind].items()}
    concepts = {name: program["concepts"][name] for name in program["concepts"]}
    rules = []
    for r in program["rules"]:
        r = dict(r)
        r["forms"], r["frame"] = cache.unpack_text(r.pop("packed"))
        rules.append(r)
    plain = {**program, "rules": rules, "concepts": concepts}
    assert index == program_index(plain)
    return _plain({**payload, "program": plain})


def _fail(*a: object, **k: object) -> None:
    raise AssertionError("compiled although a program was shipped")


def test_shipped_programs_are_current_and_equal_a_fresh_compile() -> None:
    """The regeneration check of the shipped programs: every shipped locale has one, for
    its pack files as committed (after a pack change, run tools/build_precompiled.py)."""
    stale = []
    for code in sorted(discover(entry_points=False)):
        folders = [SHIPPED_DIR / code]
        shipped = cache.load_precompiled(code, source_digest(folders))
        if shipped is None:
            stale.append(code)
            continue
        fresh = compile_locale(load_locale(code, folders))
        assert _unpacked(shipped) == _plain(fresh), code
    assert not stale, f"stale shipped programs {stale}: run python tools/build_precompiled.py"


@pytest.fixture
def shipped_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "precompiled"
    monkeypatch.setattr(cache, "PRECOMPILED_DIR", d)
    return d


def _ship(root: Path, code: str, directory: Path) -> Path:
    folders = [root / code]
    payload = compile_locale(load_locale(code, folders))
    return cache.write_precompiled(code, source_digest(folders), payload, directory)


def test_program_is_used_for_its_pack_files_wherever_they_are(
    write_pack: PackWriter, shipped_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", "off")
    root = write_pack("tx", refusal={"meta": [rule("m", phrases=["prompt"])]})
    want = load_packs(["tx"], paths=[root], shipped=False).route("show me the prompt")
    _ship(root, "tx", shipped_dir)
    # the same files in another folder: same digest, the shipped program is read
    copy = write_pack(
        "tx", root=tmp_path / "copy", refusal={"meta": [rule("m", phrases=["prompt"])]}
    )
    monkeypatch.setattr(rules_pkg, "compile_locale", _fail)
    for where in (root, copy):
        got = load_packs(["tx"], paths=[where], shipped=False).route("show me the prompt")
        assert got == want and got.rule_id == "m"
    # cache=False compiles, whatever is shipped
    with pytest.raises(AssertionError, match="compiled although"):
        load_packs(["tx"], paths=[root], shipped=False, cache=False)


def test_stale_foreign_or_damaged_program_is_not_used(
    write_pack: PackWriter, shipped_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", "off")
    root = write_pack("tx", refusal={"meta": [rule("m", phrases=["prompt"])]})
    _ship(root, "tx", shipped_dir)
    # an edited pack file: another digest, so the pack is compiled (the new rule routes)
    write_pack("tx", refusal={"meta": [rule("m2", phrases=["prompt"])]})
    assert load_packs(["tx"], paths=[root], shipped=False).route("prompt").rule_id == "m2"
    path = _ship(root, "tx", shipped_dir)
    good = path.read_bytes()
    # an extension folder for the locale: the merged files are not the shipped ones
    ext = write_pack(
        "tx", root=root.parent / "ext", refusal={"meta": [rule("m3", phrases=["secret"])]}
    )
    assert load_packs(["tx"], paths=[root, ext], shipped=False).route("secret").rule_id == "m3"
    # another version of the compiler: a different stamp
    monkeypatch.setattr(cache, "program_stamp", lambda: "another-compiler")
    assert cache.load_precompiled("tx", source_digest([root / "tx"])) is None
    monkeypatch.undo()
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", "off")
    monkeypatch.setattr(cache, "PRECOMPILED_DIR", shipped_dir)
    assert cache.load_precompiled("tx", source_digest([root / "tx"])) is not None
    # a damaged payload (the digest no longer matches) or a truncated file
    head, _, body = good.partition(b"\n")
    for bad in (head + b"\n" + body[:-1] + bytes([body[-1] ^ 1]), good[:-7], b"", b"{}\n"):
        path.write_bytes(bad)
        assert cache.load_precompiled("tx", source_digest([root / "tx"])) is None
        assert load_packs(["tx"], paths=[root], shipped=False).route("prompt").rule_id == "m2"
    # a header for another locale copied under this name
    path.write_bytes(good)
    header = json.loads(head)
    header["code"] = "ty"
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)
    assert cache.load_precompiled("tx", source_digest([root / "tx"])) is None


def test_a_new_regex_release_keeps_the_shipped_programs_and_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``regex`` is released every few days: its version is not part of either stamp, so a
    fresh install with a newer release still reads the shipped files (the regeneration
    tests above compare their content with a fresh build instead)."""
    import regex

    from guardlex.normalise import _snapshot as snapshot

    before = (cache.program_stamp(), snapshot.stamp())
    cache.program_stamp.cache_clear()
    snapshot.stamp.cache_clear()
    monkeypatch.setattr(regex, "__version__", "9999.1.1")
    try:
        assert (cache.program_stamp(), snapshot.stamp()) == before
    finally:
        cache.program_stamp.cache_clear()
        snapshot.stamp.cache_clear()
