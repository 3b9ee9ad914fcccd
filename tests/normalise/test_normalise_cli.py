"""`guardlex normalise` end to end, in a subprocess like a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys


def _run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "guardlex", "normalise", *args],
        input=stdin,
        capture_output=True,
        check=False,
    )


def test_text_argument() -> None:
    out = _run("Wie viel kostet die Straße?")
    assert out.returncode == 0
    assert out.stdout.decode() == "wie viel kostet die strasse?\n"


def test_stdin_line_by_line_and_dash() -> None:
    data = "قيمت كتاب\nЁЛКА\n\n¿Cuánto?\n".encode()
    for args in ((), ("-",)):
        out = _run(*args, stdin=data)
        assert out.returncode == 0
        assert out.stdout.decode().split("\n") == ["قیمت کتاب", "елка", "", "¿cuanto?", ""]


def test_invalid_utf8_passes_through_without_traceback() -> None:
    out = _run(stdin=b"Price\xff\xfe LIST\n")
    assert out.returncode == 0
    assert out.stdout == b"price\xff\xfe list\n"
    assert b"Traceback" not in out.stderr


def test_json_has_text_and_offsets() -> None:
    out = _run("--json", "  Café ")
    record = json.loads(out.stdout)
    assert record == {"input": "  Café ", "text": "cafe", "offsets": [2, 3, 4, 5]}


def test_explain_names_the_steps() -> None:
    out = _run("--explain", "ＱＵÉ ك")
    text = out.stdout.decode()
    for name in ("nfkc", "casefold", "arabic_letters", "latin_diacritics"):
        assert f"  {name}: " in text
    assert text.rstrip().endswith("output: 'que ک'")


def test_explain_and_json_exclude_each_other() -> None:
    out = _run("--json", "--explain", "x")
    assert out.returncode == 2
    assert b"not allowed with" in out.stderr and b"Traceback" not in out.stderr


def test_help_documents_every_flag() -> None:
    out = _run("--help")
    text = out.stdout.decode()
    for flag in ("--explain", "--json", "TEXT", "surrogateescape"):
        assert flag in text
