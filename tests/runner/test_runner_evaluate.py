"""The evaluation: sets kept apart, every miss listed, regressions decide the exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from guardlex.runner.errors import CorpusError
from guardlex.runner.evaluate import evaluate, render, render_json


def _write(root: Path, name: str, cases: list[dict], source: str = "fixture") -> None:
    (root / f"{name}.yaml").write_text(
        yaml.safe_dump({"schema_version": 1, "source": source, "cases": cases}, allow_unicode=True),
        encoding="utf-8",
    )


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    _write(
        tmp_path,
        "refusals",
        [
            {"locale": "en", "text": "What is the price?", "category": "engagement"},
            {
                "locale": "en",
                "text": "and on weekends?",
                "previous": "the price?",
                "category": "engagement",
            },
        ],
    )
    _write(
        tmp_path,
        "no_evidence",
        [
            {"locale": "en", "text": "What will the weather be like in Paris tomorrow?"},
        ],
    )
    _write(
        tmp_path,
        "overview",
        [{"locale": "en", "text": "Tell me about her career", "topic": "career"}],
    )
    _write(
        tmp_path,
        "answerable",
        [
            {
                "locale": "en",
                "text": "How many test answers did the sentence gate stop?",
                "chunks": ["en/gates/1"],
            },
            {
                "locale": "es",
                "text": "¿Qué tasa de aciertos alcanzó la caché semántica?",
                "chunks": ["es/cache/1"],
            },
        ],
    )
    _write(
        tmp_path,
        "gate",
        [
            {
                "id": "ok",
                "locale": "en",
                "sources": ["The gate stopped 27 of 500 answers."],
                "answer": "The gate stopped 27 of 500 answers [1].",
                "expect": "released",
                "must_include": ["27 of 500"],
                "must_not": ["[1]"],
            },
            {
                "id": "stop",
                "locale": "en",
                "sources": ["The gate stopped 27 of 500 answers."],
                "answer": "The gate stopped 27 of 500 answers [1]. It stopped 31 more [1].",
                "expect": "stop",
                "reason": "unsupported_value",
                "must_include": ["27 of 500"],
                "must_not": ["31"],
            },
        ],
    )
    _write(
        tmp_path,
        "followups",
        [
            {
                "locale": "en",
                "previous": "q",
                "previous_answer": "1. A\n2. B",
                "text": "the second one",
                "expect_resolved": 2,
            },
        ],
    )
    return tmp_path


def test_all_sets_pass_on_a_consistent_fixture(runner, golden: Path) -> None:
    report = evaluate(runner, root=golden)
    assert report.ok, report.regressions
    assert report.sets["refusals"].size == 2 and report.sets["refusals"].passed == 2
    assert report.recall == 1.0
    assert report.embedder == "hashing-bow-256"
    text = render(report)
    assert "RESULT: PASS" in text and "embedding model: hashing-bow-256" in text
    assert "[2 cases]" in text
    data = json.loads(render_json(report))
    assert data["ok"] is True and data["sets"]["gate"]["size"] == 2
    assert data["answerable"]["recall_per_locale"]["es"] == {"hits": 1, "total": 1}


def test_each_kind_of_miss_is_a_separate_regression(runner, golden: Path) -> None:
    _write(
        golden,
        "refusals",
        [{"locale": "en", "text": "Tell me about caches", "category": "engagement"}],
    )
    _write(golden, "no_evidence", [{"locale": "en", "text": "semantic cache hit rate weeks"}])
    _write(
        golden,
        "answerable",
        [
            {"locale": "en", "text": "What is the price of the gate?", "chunks": ["en/gates/1"]},
            {"locale": "en", "text": "semantic cache hit rate weeks", "chunks": ["en/gates/2"]},
        ],
    )
    _write(
        golden,
        "gate",
        [
            {
                "id": "leak",
                "locale": "en",
                "sources": ["The gate stopped 27 answers."],
                "answer": "The gate stopped 27 answers [1].",
                "expect": "released",
                "must_include": [],
                "must_not": ["27 answers"],
            },
        ],
    )
    report = evaluate(runner, root=golden, min_recall=0.9)
    assert not report.ok
    kinds = {r.split(":")[0] for r in report.regressions}
    assert kinds == {
        "refusals",
        "no_evidence",
        "answerable",
        "recall@5",
        "gate",
        "must-not leakage",
    }
    assert [c.id for c in report.wrongly_refused] == ["answerable#0"]
    text = render(report)
    assert "RESULT: FAIL" in text and "miss refusals#0 [en]" in text
    assert "leak leak [en] ['27 answers']" in text


def test_locale_filter_and_missing_source_note(runner, golden: Path) -> None:
    report = evaluate(runner, root=golden, locale="es")
    assert report.sets["answerable"].size == 1 and report.sets["refusals"].size == 0
    _write(golden, "refusals", [], source="")
    with pytest.raises(CorpusError, match="where its cases came from"):
        evaluate(runner, root=golden)


def test_held_out_folder_may_hold_any_subset(runner, tmp_path: Path) -> None:
    _write(tmp_path, "no_evidence", [{"locale": "en", "text": "Who won the 1998 World Cup?"}])
    report = evaluate(runner, root=tmp_path)
    assert set(report.sets) >= {"no_evidence", "refusals"}
    assert report.sets["no_evidence"].size == 1 and report.sets["refusals"].size == 0
    assert f"golden files: {tmp_path}" in render(report)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusError, match="no golden cases"):
        evaluate(runner, root=empty)


def test_case_missing_a_field_names_file_and_index(runner, tmp_path: Path) -> None:
    _write(tmp_path, "answerable", [{"locale": "en", "text": "q?"}])
    with pytest.raises(CorpusError, match=r"answerable.yaml: cases\[0\] needs 'chunks'"):
        evaluate(runner, root=tmp_path)


def test_baseline_diff_and_junit_name_what_changed(runner, golden: Path) -> None:
    import xml.etree.ElementTree as ET

    from guardlex.runner.evaluate import REPORT_VERSION, diff_baseline, render_diff, render_junit

    before = json.loads(render_json(evaluate(runner, root=golden)))
    assert before["report_version"] == REPORT_VERSION and before["ok"]
    # one refusal case now fails (its category is wrong), one case is new
    cases = yaml.safe_load((golden / "refusals.yaml").read_text(encoding="utf-8"))["cases"]
    cases[0]["category"] = "meta"
    cases.append({"id": "new-one", "locale": "en", "text": "price?", "category": "engagement"})
    _write(golden, "refusals", cases)
    report = evaluate(runner, root=golden)
    diff = diff_baseline(report, before)
    assert diff["newly_failing"] == ["refusals/refusals#0"]
    assert diff["added"] == ["refusals/new-one"] and diff["sizes"]["refusals"] == [2, 3]
    text = render_diff(diff)
    assert "now failing (1): refusals/refusals#0" in text and "refusals: 2 -> 3 cases" in text
    root = ET.fromstring(render_junit(report))
    failures = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert [tc.get("name") for tc in failures] == ["refusals#0 [en]"]
    assert "expected refuse:meta" in failures[0].find("failure").get("message")
