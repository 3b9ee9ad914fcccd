"""`guardlex index`, `guardlex ask` and `guardlex eval` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardlex.cli import main


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "about.md").write_text(
        "---\ntitle: About Ana Ruiz\ndate: '2025-01'\n---\n# About Ana Ruiz\n\n"
        "Ana Ruiz restores medieval manuscripts for the city archive of Toledo.\n\n"
        "## Methods\n\nAna Ruiz uses multispectral imaging to read faded iron-gall ink on "
        "parchment, a method she introduced at the archive in 2019.\n",
        encoding="utf-8",
    )
    (folder / "records.yaml").write_text(
        "records:\n  - id: archive\n    kind: position\n    start: '2016'\n    end: null\n"
        "    current: true\n    title: {en: Conservator, Toledo city archive}\n"
        "    summary: {en: Restores manuscripts.}\n",
        encoding="utf-8",
    )
    return folder


def test_index_then_ask_json(docs: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GUARDLEX_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "ana.sqlite"
    assert main(["index", str(docs), "--store", str(store), "--owner", "Ana Ruiz"]) == 0
    out, err = capsys.readouterr()
    assert "2 chunks" in out and "1 records" in out and "hashing-bow-256" in out
    assert "reading" in err and "indexing" in err  # progress on stderr
    rc = main(
        [
            "ask",
            "How does she read faded iron-gall ink on parchment?",
            "--store",
            str(store),
            "--json",
        ]
    )
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["code"] == "ANSWERED"
    assert data["sources"][0]["ref"] == "en/about/2"
    assert "multispectral imaging" in data["text"] and "[1]" not in data["text"]
    assert data["retrieval"]["passed"] is True


def test_ask_streams_text_and_prints_trace(docs: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GUARDLEX_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "ana.sqlite"
    main(["index", str(docs), "--store", str(store), "-q"])
    capsys.readouterr()
    assert main(["ask", "Which bridges did she design in Lisbon?", "--store", str(store)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() and "BELOW_THRESHOLD" in err


def test_index_unreadable_file_is_one_line_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "bad.md").write_bytes(b"# T\n\n\xff\xfe broken")
    rc = main(["index", str(tmp_path), "--store", str(tmp_path / "s.sqlite"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("guardlex: error: ") and "bad.md" in err and "not UTF-8" in err
    assert len(err.strip().splitlines()) == 1


def test_ask_missing_store_is_one_line_error(tmp_path: Path, capsys) -> None:
    rc = main(["ask", "hello", "--store", str(tmp_path / "nope.sqlite")])
    err = capsys.readouterr().err
    assert rc == 2 and "guardlex index" in err


def test_eval_rejects_unknown_locale(capsys) -> None:
    assert main(["eval", "--locale", "xx"]) == 2
    assert "unknown locale" in capsys.readouterr().err


def test_missing_numpy_is_a_one_line_install_hint(monkeypatch, capsys) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "numpy", None)
    assert main(["eval", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "guardlex: error: the reference runner needs numpy: pip install 'guardlex[runner]'"
    )
