"""A package a user can trust: its license files, its sdist contents, user docs that stand
on their own (no links out of the repository, no design-document sections, numbers that
match the code), shipped data that names its source, and one-line CLI mistakes."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
import regex

from guardlex.cli import main

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "guardlex"
USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ------------------------------------------------------------ license files


def test_license_is_apache_2_and_matches_pyproject() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert regex.search(r'(?m)^license = "Apache-2.0"$', pyproject, timeout=1)
    files = regex.search(r"(?m)^license-files = \[(.*)\]$", pyproject, timeout=1)
    assert files is not None
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    for name in ("LICENSE", "NOTICE", "THIRD_PARTY_NOTICES.md"):
        assert f'"{name}"' in files.group(1)
        assert (ROOT / name).is_file()


def _shipped_data() -> list[Path]:
    """The shipped data files that come from a third-party source."""
    pats = [
        "normalise/data/*",
        "langid/data/*",
        "locales/*/stopwords.yaml",
        "locales/*/*.generated.yaml",
        "locales/*/words.txt",
        "locales/fa/first_person.yaml",
    ]
    return sorted(Path(p) for pat in pats for p in glob.glob(str(SRC / pat)))


def test_every_third_party_data_file_is_in_the_notices() -> None:
    notices = (ROOT / "THIRD_PARTY_NOTICES.md").read_text(encoding="utf-8")
    files = _shipped_data()
    assert len(files) >= 16
    for path in files:
        rel = path.relative_to(SRC)
        mentioned = str(rel) in notices.replace("guardlex/", "") or path.name in notices
        if rel.parts[0] == "locales" and path.name == "stopwords.yaml":
            mentioned = rel.parts[1] in _stopword_locales(notices) or rel.parts[1] == "fa"
        assert mentioned, f"{rel} is shipped but THIRD_PARTY_NOTICES.md does not name it"
    for source in ("ICU 72.1", "Unicode", "stopwords-iso", "hazm", "py3langid", "jieba"):
        assert source in notices


def _stopword_locales(notices: str) -> set[str]:
    m = regex.search(r"locales/\{([a-z,]+)\}/stopwords\.yaml", notices, timeout=1)
    return set(m.group(1).split(",")) if m else set()


def test_shipped_tables_name_their_source() -> None:
    for path in _shipped_data():
        head = path.read_bytes()[:2000]
        if path.suffix == ".xz":
            continue  # binary: its header names py3langid (tools/gen_langid_model.py)
        assert regex.search(rb"(?i)source", head, timeout=1), f"{path} names no source"


def test_sdist_manifest_carries_docs_tests_and_notices() -> None:
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    for line in ("graft docs", "graft tests", "graft src/guardlex", "prune **/__pycache__"):
        assert line in manifest
    for name in ("LICENSE", "NOTICE", "THIRD_PARTY_NOTICES.md", "README.md", "CHANGELOG.md"):
        assert name in manifest


# ------------------------------------------------------------ docs stand on their own

_LINK = regex.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: p.name)
def test_docs_link_only_inside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for target in _LINK.findall(text, timeout=1):
        if regex.match(r"[a-z]+:", target, timeout=1) or target.startswith("#"):
            continue  # a web address or an anchor
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert path.exists(), f"{doc.name} links to a missing file: {target}"


def _user_visible_files() -> list[Path]:
    return [
        *USER_DOCS,
        *sorted(SRC.rglob("*.py")),
        *sorted(SRC.rglob("*.yaml")),
        *sorted(SRC.rglob("*.md")),
    ]


_DESIGN_REF = regex.compile(r"\bSPEC\b(?:\s*(?:§|section|\.md))|shared/SPEC", regex.IGNORECASE)
_PRODUCED_BY = regex.compile(r"\bhelper [A-Z]\w*\b|\(helper\b|\bby helper\b")


def test_no_references_to_design_document_sections() -> None:
    bad = []
    for path in _user_visible_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _DESIGN_REF.search(line, timeout=1):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert not bad, "design-document references a user cannot follow:\n" + "\n".join(bad)


def test_shipped_data_says_where_it_came_from_not_who_produced_it() -> None:
    files = [
        *sorted((SRC / "corpus").rglob("*")),
        *sorted((ROOT / "tests" / "data").rglob("*.yaml")),
        *USER_DOCS,
    ]
    bad = []
    for path in files:
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _PRODUCED_BY.search(line, timeout=1):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert not bad, "\n".join(bad)


def _quoted() -> list[tuple[str, str]]:
    """(doc, text the doc must contain), built from the constants the docs quote."""
    from guardlex.gates import MIN_WORDS
    from guardlex.gates.faith.common import (
        MAX_ANSWER_CHARS,
        MAX_COMPUTED,
        MAX_NAME_CHARS,
        MAX_QUOTES,
    )
    from guardlex.gates.faith.formula import MAX_FORMULA_DEPTH
    from guardlex.gates.sentence import MAX_SOURCE_CHARS, MAX_SOURCES, MAX_SOURCES_CHARS
    from guardlex.normalise._core import MAX_CHARS, MAX_EXPANSION, MAX_OFFSETS_CHARS
    from guardlex.rules import FOLLOW_UP_MAX_WORDS, MAX_INPUT_CHARS
    from guardlex.runner._regex import REGEX_TIMEOUT
    from guardlex.runner.corpus import MAX_CHUNK_WORDS, MAX_FILE_BYTES, MIN_CHUNK_WORDS
    from guardlex.runner.costs import DEFAULT_LIMITS, LEDGER_BUSY_TIMEOUT
    from guardlex.runner.followups import CONTEXT_CHARS, MAX_TITLE_CHARS
    from guardlex.runner.models import (
        DEFAULT_TURN_DEADLINE,
        MAX_EVENT_BYTES,
        MAX_STREAM_BYTES,
    )
    from guardlex.runner.pipeline import (
        DEFAULT_MAX_OUTPUT_TOKENS,
        DEFAULT_MONTHLY_CAP,
        MAX_PREVIOUS_ANSWER_CHARS,
        MAX_QUESTION_CHARS,
    )
    from guardlex.runner.retrieval import CANDIDATES, DEFAULT_THRESHOLD, DEFAULT_TOP_K, RRF_K

    def n(x: int) -> str:
        return f"{x:,}"

    limits = " / ".join(str(allowed) for _, _, allowed in DEFAULT_LIMITS)
    return [
        ("runner.md", f"`timeout=REGEX_TIMEOUT` ({REGEX_TIMEOUT:g} s"),
        ("runner.md", f"oversized ({MAX_FILE_BYTES // 1_000_000} MB)"),
        ("runner.md", f"at most {MAX_CHUNK_WORDS} words"),
        ("runner.md", f"merged up\n  to {MIN_CHUNK_WORDS})"),
        ("runner.md", f"threshold ({DEFAULT_THRESHOLD})"),
        ("runner.md", f"top-k ({DEFAULT_TOP_K})"),
        ("runner.md", f"top {CANDIDATES} candidates"),
        ("runner.md", f"`1/({RRF_K} + rank)`"),
        ("runner.md", f"({limits} by default"),
        ("runner.md", f"`--max-output-tokens N` | `{DEFAULT_MAX_OUTPUT_TOKENS}`"),
        ("runner.md", f"`--monthly-cap N` | `{DEFAULT_MONTHLY_CAP}`"),
        ("runner.md", f"(about {CONTEXT_CHARS} characters)"),
        ("runner.md", f"at most {MAX_TITLE_CHARS} characters"),
        ("runner.md", f"at most {LEDGER_BUSY_TIMEOUT:g} s (`LEDGER_BUSY_TIMEOUT`"),
        ("runner.md", f"{DEFAULT_TURN_DEADLINE:g} s by default"),
        ("runner.md", f"line over {MAX_EVENT_BYTES // 1024} KiB"),
        ("runner.md", f"stream over {MAX_STREAM_BYTES // 1024 // 1024} MiB"),
        ("runner.md", f"{n(MAX_QUESTION_CHARS)} characters (`MAX_QUESTION_CHARS`)"),
        ("runner.md", f"{n(MAX_PREVIOUS_ANSWER_CHARS)} (`MAX_PREVIOUS_ANSWER_CHARS`)"),
        ("gates.md", f"`guardlex.gates.MIN_WORDS` = {MIN_WORDS}"),
        ("gates.md", f"Sources: {n(MAX_SOURCES)} of them, {n(MAX_SOURCE_CHARS)} characters each"),
        ("gates.md", f"{n(MAX_SOURCES_CHARS)} together"),
        ("gates.md", f"answer: {n(MAX_ANSWER_CHARS)}"),
        ("gates.md", f"{n(MAX_QUOTES)} items"),
        ("gates.md", f"`computed`: {n(MAX_COMPUTED)} entries"),
        ("gates.md", f"field names {n(MAX_NAME_CHARS)}\ncharacters each"),
        ("gates.md", f"nested at most {MAX_FORMULA_DEPTH} deep"),
        ("normalise.md", f"| `MAX_CHARS` | {n(MAX_CHARS)} characters"),
        ("normalise.md", f"| `MAX_OFFSETS_CHARS` | {n(MAX_OFFSETS_CHARS)} characters"),
        ("normalise.md", f"`MAX_EXPANSION` ({MAX_EXPANSION})"),
        ("extending.md", f"`guardlex.rules.MAX_INPUT_CHARS` ({n(MAX_INPUT_CHARS)} characters)"),
        ("extending.md", f"`guardlex.rules.FOLLOW_UP_MAX_WORDS` = {FOLLOW_UP_MAX_WORDS} words"),
    ]


def test_numbers_in_the_docs_match_the_code() -> None:
    missing = []
    for doc, text in _quoted():
        body = (ROOT / "docs" / doc).read_text(encoding="utf-8")
        if text not in body:
            missing.append(f"docs/{doc}: {text!r}")
    assert not missing, "the docs quote other numbers than the code:\n" + "\n".join(missing)


# ------------------------------------------------------------ one-line CLI mistakes


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse leaves through sys.exit
        rc = int(exc.code or 0)
    err = capsys.readouterr().err
    return rc, err


MISTAKES = {
    "top-level": [["--bogus"], ["nosuchcommand"]],
    "normalise": [["normalise", "--bogus", "x"]],
    "route": [["route"], ["route", "hi", "--locale", "xx"], ["route", "--packs", "/no/such", "hi"]],
    "first-person": [["first-person"], ["first-person", "I think", "--locale", "xx"]],
    "lint": [["lint", "/no/such"], ["lint", "--bogus"]],
    "new-locale": [["new-locale"]],
    "gate": [["gate"], ["gate", "--sources", "/no/such", "--", "answer [1]."]],
    "audit": [["audit"], ["audit", "--input", "/no/such.json"], ["audit", "stray"]],
    "index": [["index"], ["index", "/no/such"]],
    "ask": [["ask"], ["ask", "   "], ["ask", "hi", "--threshold", "abc"]],
    "eval": [["eval", "--min-recall", "abc"], ["eval", "--golden", "/no/such"]],
    "calibrate": [["calibrate", "--bogus"]],
    "serve": [["serve", "--port", "abc"]],
}


@pytest.mark.parametrize("command", sorted(MISTAKES))
def test_every_cli_mistake_is_one_line_and_exit_2(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in MISTAKES[command]:
        rc, err = _run(argv, capsys)
        lines = [line for line in err.splitlines() if line.strip()]
        assert rc == 2, f"{argv}: exit {rc}"
        assert len(lines) == 1, f"{argv}: {len(lines)} lines on stderr:\n{err}"
        assert "error:" in lines[0] and "Traceback" not in err


def test_unreadable_inputs_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe not utf-8")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"# A\n\n\xff\xfe")
    for argv in (
        ["gate", "--sources", str(binary), "--", "answer [1]."],
        ["audit", "--input", str(binary)],
        ["index", str(folder), "--store", str(tmp_path / "s.sqlite"), "-q"],
        ["index", str(binary)],
    ):
        rc, err = _run(argv, capsys)
        assert rc == 2 and err.strip().count("\n") == 0, f"{argv}: {rc} {err}"
