"""Reading the sample site and user documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardlex.runner.corpus import (
    MAX_CHUNK_WORDS,
    Record,
    load_folder,
    parse_records,
    parse_site_file,
    sample_site,
    split_text,
)
from guardlex.runner.errors import CorpusError


def test_sample_site_follows_the_contract() -> None:
    site = sample_site()
    ids = [c.id for c in site.chunks]
    assert len(ids) == len(set(ids))
    for c in site.chunks:
        assert c.id.startswith(f"{c.locale}/{c.doc_id}/")
        assert c.text.strip()
    assert site.records and all("en" in r.title for r in site.records)
    assert "en" in site.owner_names


def test_split_text_bounds_chunks_and_keeps_words() -> None:
    para = " ".join(f"word{i}." for i in range(400))
    text = f"Short intro.\n\n{para}\n\nTail paragraph here."
    chunks = split_text(text)
    assert all(len(c.split()) <= MAX_CHUNK_WORDS for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_site_file_errors_name_the_problem() -> None:
    good = {
        "locale": "en",
        "documents": [
            {
                "id": "a",
                "kind": "article",
                "title": "A",
                "date": "2024-05",
                "chunks": [{"id": "en/a/1", "text": "Some text."}],
            }
        ],
    }
    assert parse_site_file(good, "x.yaml")[2][0].date == "2024-05"
    bad_id = {
        "locale": "en",
        "documents": [{"id": "a", "chunks": [{"id": "es/a/1", "text": "Some text."}]}],
    }
    with pytest.raises(CorpusError, match="must be 'en/a/<n>'"):
        parse_site_file(bad_id, "x.yaml")
    bad_date = {
        "locale": "en",
        "documents": [{"id": "a", "date": "May 2024", "chunks": [{"id": "en/a/1", "text": "t"}]}],
    }
    with pytest.raises(CorpusError, match="YYYY"):
        parse_site_file(bad_date, "x.yaml")
    with pytest.raises(CorpusError, match="kind"):
        parse_site_file(
            {"locale": "en", "documents": [{"id": "a", "kind": "blog", "text": "t"}]}, "x.yaml"
        )


def test_records_sort_current_first_then_newest() -> None:
    recs = parse_records(
        {
            "records": [
                {
                    "id": "old",
                    "kind": "position",
                    "start": "2010",
                    "end": "2012",
                    "title": {"en": "O"},
                },
                {
                    "id": "cur",
                    "kind": "position",
                    "start": "2020-01",
                    "current": True,
                    "title": {"en": "C"},
                },
                {
                    "id": "mid",
                    "kind": "project",
                    "start": "2015-03",
                    "end": "2019-11",
                    "title": {"en": "M"},
                },
                {"id": "year", "kind": "talk", "start": "2019", "title": {"en": "Y", "es": "Ye"}},
            ]
        },
        "records.yaml",
    )
    order = [r.id for r in sorted(recs, key=Record.sort_key)]
    assert order == ["cur", "mid", "year", "old"]
    assert recs[3].title_in("es") == "Ye" and recs[3].title_in("fr") == "Y"
    with pytest.raises(CorpusError, match="'en'"):
        parse_records({"records": [{"id": "x", "kind": "talk", "title": {"es": "x"}}]}, "r")


def test_load_folder_markdown_and_yaml(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "about.md").write_text(
        "---\ntitle: About Ana\ndate: '2024'\nkind: page\n---\n# About Ana\n\n"
        "Ana builds search systems for libraries.\n\n## Projects\n\nA catalogue search "
        "for a city library, launched in 2023.\n",
        encoding="utf-8",
    )
    (tmp_path / "notes" / "talk.yaml").write_text(
        "id: talk\nlocale: es\ntitle: Charla\ntext: Ana habló de búsqueda en bibliotecas.\n",
        encoding="utf-8",
    )
    (tmp_path / ".hidden.md").write_text("# secret\n\nnot indexed\n", encoding="utf-8")
    seen: list[int] = []
    site = load_folder(tmp_path, progress=lambda n, total, path: seen.append(n))
    assert seen == [1, 2]
    ids = [c.id for c in site.chunks]
    assert ids == ["en/about/1", "en/about/2", "es/talk/1"]
    assert site.chunks[1].text.startswith("Projects: A catalogue search")
    assert site.chunks[0].title == "About Ana" and site.chunks[0].date == "2024"


def test_load_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file"):
        load_folder(tmp_path / "missing")
    with pytest.raises(CorpusError, match="no Markdown"):
        load_folder(tmp_path)
    (tmp_path / "bad.yaml").write_text("a: [unclosed\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad.yaml:\d+: invalid YAML"):
        load_folder(tmp_path)
    (tmp_path / "bad.yaml").unlink()
    (tmp_path / "latin1.md").write_bytes("# Caf\xe9\n\ncaf\xe9 ol\xe9\n".encode("latin-1"))
    with pytest.raises(CorpusError, match="not UTF-8"):
        load_folder(tmp_path)
    (tmp_path / "latin1.md").unlink()
    (tmp_path / "other.yaml").write_text("just: a mapping\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a guardlex document"):
        load_folder(tmp_path)
