"""`guardlex gate` and `guardlex audit`: output, exit status and one-line errors."""

from __future__ import annotations

import io
import json

import pytest

import guardlex
from guardlex.cli import main


@pytest.fixture(autouse=True)
def _fake_packs(monkeypatch, packs):
    # the CLI loads the packs itself; pin them to the test packs
    monkeypatch.setattr(guardlex, "load_packs", lambda *a, **k: packs, raising=False)


@pytest.fixture
def policy(tmp_path):
    path = tmp_path / "policy.txt"
    path.write_text(
        "Standard plan includes 20 seats; extra seats cost 8 per seat per month, excluding tax. "
        "Enterprise: unlimited seats.",
        encoding="utf-8",
    )
    return str(path)


def test_gate_prints_what_the_reader_sees(policy, capsys, packs):
    answer = "The Standard plan includes 20 seats [1]. Prices include tax [1]. Hidden."
    assert main(["gate", "--sources", policy, "--", answer]) == 1
    out = capsys.readouterr().out
    assert "The Standard plan includes 20 seats." in out
    assert "[1]" not in out
    assert "tax" not in out and "Hidden" not in out
    assert packs.messages("en")["gate_stop"] in out


def test_gate_json_from_stdin_in_chunks(policy, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("Extra seats cost 8 per seat per month [1]."))
    assert main(["gate", "--sources", policy, "--json", "--chunk-size", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"] == "released"
    assert report["shown"] == "Extra seats cost 8 per seat per month."
    assert [e["kind"] for e in report["events"]] == ["released"]


def test_gate_truncated(policy, capsys, packs):
    assert (
        main(["gate", "--sources", policy, "--locale", "zh", "标准版包含 20 个席位[1]。企业版"])
        == 1
    )
    out = capsys.readouterr().out
    assert packs.messages("zh")["truncated"] in out


def test_gate_missing_file_is_one_line(capsys, tmp_path):
    assert main(["gate", "--sources", str(tmp_path / "nope.txt"), "text"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("guardlex: error: source file not found")
    assert "\n" not in err


def test_audit_answer_against_quotes(capsys):
    code = main(
        [
            "audit",
            "--quote",
            "Extra seats cost 8 per seat per month, excluding tax.",
            "--answer",
            "Extra seats cost 8 per person per day, tax included.",
            "--json",
        ]
    )
    assert code == 1
    codes = {v["code"] for v in json.loads(capsys.readouterr().out)["violations"]}
    assert codes == {"unit_mismatch", "polarity_flip"}


def test_audit_computed(capsys):
    args = ["audit", "--quote", "3 extra seats at 8 per seat", "--answer", "That is 24 in total."]
    assert main([*args, "--computed", "24=3*8"]) == 0
    assert main([*args]) == 1
    assert "number_not_in_quote: 24" in capsys.readouterr().out


def test_audit_resolve_and_accept_requests(tmp_path, capsys):
    evidence = tmp_path / "docs.json"
    evidence.write_text(
        json.dumps(
            [
                {"doc": "p", "version": 1, "text": "The Team plan includes 5 seats."},
                {"doc": "p", "version": 2, "text": "The Team plan includes 10 seats."},
            ]
        ),
        encoding="utf-8",
    )
    assert main(["audit", "--field", "seats_included", "--evidence", str(evidence)]) == 0
    assert capsys.readouterr().out.strip() == "OK: 10"
    request = tmp_path / "accept.json"
    request.write_text(
        json.dumps(
            {
                "field": "seats",
                "value": "20",
                "quote": "has 200 seats",
                "evidence": "x has 200 seats",
            }
        ),
        encoding="utf-8",
    )
    assert main(["audit", "--input", str(request)]) == 1
    assert capsys.readouterr().out.strip() == "rejected: value_not_in_quote"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit"], "nothing to audit"),
        (["audit", "--answer", "x"], "needs at least one --quote"),
        (["audit", "--field", "f"], "--field needs --evidence"),
        (["audit", "--quote", "q", "--answer", "a", "--computed", "24"], "VALUE=FORMULA"),
        (["audit", "--quote", "q", "--answer", "a", "--computed", "24=2**8"], "formula"),
    ],
)
def test_audit_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_audit_bad_json(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    assert main(["audit", "--input", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
