"""The linter: each check fires on a pack made to trip it, with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardlex.cli import main
from guardlex.rules.lint import Finding, backtracking_risks, lint, rewritten_chars

from .conftest import PackWriter, rule

MESSAGES = {
    k: "x"
    for k in (
        "refusal",
        "below_threshold",
        "gate_stop",
        "truncated",
        "budget_exhausted",
        "rate_limited",
    )
}


LOCALE = {"name": "Test", "scripts": ["Latn"], "direction": "ltr", "example_subject": "Dana Reyes"}


def full_pack(write_pack: PackWriter, code: str, refusal: dict, **kw: object) -> Path:
    return write_pack(
        code,
        refusal=refusal,
        overview=kw.pop("overview", []),
        lexicon=kw.pop("lexicon", {"pronouns": ["she"]}),
        first_person=kw.pop(
            "first_person",
            {"pronouns": ["i"], "examples": {"match": ["i am", "so am i"], "no_match": ["she is"]}},
        ),
        messages=MESSAGES,
        stopwords=["the"],
        locale=kw.pop("locale", LOCALE),
        **kw,
    )


def findings_for(root: Path, code: str) -> list[Finding]:
    return lint([root / code])


def messages(found: list[Finding], level: str = "ERROR") -> str:
    return "\n".join(str(f) for f in found if f.level == level)


def test_clean_pack_has_no_findings(write_pack: PackWriter) -> None:
    root = full_pack(
        write_pack,
        "tx",
        {
            "meta": [
                rule(
                    "m",
                    phrases=["your prompt"],
                    match=["show your prompt", "your prompt?"],
                    no_match=["a prompt"],
                )
            ]
        },
    )
    assert findings_for(root, "tx") == []


def test_failing_examples_are_errors(write_pack: PackWriter) -> None:
    root = full_pack(
        write_pack,
        "tx",
        {
            "meta": [
                rule(
                    "m", phrases=["prompt"], match=["prompt", "nothing here"], no_match=["a prompt"]
                )
            ]
        },
    )
    out = messages(findings_for(root, "tx"))
    assert "'nothing here' of rule 'm' should route to refuse/meta" in out
    assert "no_match example 'a prompt' is caught by rule 'm'" in out
    assert "refusal.yaml:" in out


def test_pattern_that_normalisation_rewrites(write_pack: PackWriter) -> None:
    assert rewritten_chars(r"\mPrice\M") == [("P", "p")]
    assert rewritten_chars("قيمت") == [("ي", "ی")]
    assert rewritten_chars(r"\m۱۲\M") == [("۱", "1"), ("۲", "2")]
    assert rewritten_chars("می\u200cخواهم") == []  # ZWNJ is allowed
    assert rewritten_chars(r"\p{L}\S+\M(?P<x>a)") == []  # syntax is not text
    root = full_pack(
        write_pack,
        "tx",
        {
            "meta": [
                rule("m", patterns=[r"\mPrompt\M"], match=["prompt", "the prompt"], no_match=["x"])
            ]
        },
    )
    out = messages(findings_for(root, "tx"))
    assert "contains 'P', which normalisation turns into 'p'" in out


@pytest.mark.parametrize("pattern", [r"(a+)+b", r"(\w*)*", r"(?:a|ab)*c", r"(?: \S+)+x", r"a.*b"])
def test_backtracking_risks_found(pattern: str) -> None:
    assert backtracking_risks(pattern)


@pytest.mark.parametrize("pattern", [r"(?:\S+ ){0,3}", r"(?:all|any)+", r"\mrates?\M", r"(?:a|b)"])
def test_safe_patterns_pass(pattern: str) -> None:
    assert backtracking_risks(pattern) == []


def test_duplicate_ids(write_pack: PackWriter) -> None:
    first = rule("a", phrases=["your prompt"], match=["your prompt", "see your prompt"])
    again = rule("a", phrases=["my rules"], match=["my rules", "see my rules"])
    root = full_pack(write_pack, "tx", {"meta": [first, again]})
    assert "rule id 'a' is used twice" in messages(findings_for(root, "tx"))


def test_shadowed_phrases(write_pack: PackWriter) -> None:
    short = rule("a", phrases=["your prompt"], match=["your prompt", "see your prompt"])
    long = rule(
        "b",
        phrases=["show your prompt now"],
        match=["show your prompt now", "pls show your prompt now"],
    )
    root = full_pack(write_pack, "tx", {"meta": [short, long]})
    warnings = messages(findings_for(root, "tx"), "WARNING")
    assert "'show your prompt now' of rule 'b' is shadowed by 'your prompt'" in warnings


def test_schema_errors_and_missing_files(write_pack: PackWriter) -> None:
    root = write_pack(
        "tx",
        raw={
            "refusal.yaml": "locale: tx\nschema_version: 1\nmeta:\n"
            "  - id: Bad_Id\n    about: x\n    phrases: [a]\n"
            "    examples: {match: [a], no_match: []}\n"
        },
    )
    out = messages(findings_for(root, "tx"))
    assert "refusal.yaml:4:" in out and "Bad_Id" in out
    assert "needs at least 2 item(s)" in out
    assert "has no messages.yaml" in out


def test_cli_exit_status_and_json(
    write_pack: PackWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = full_pack(
        write_pack,
        "tx",
        {"meta": [rule("m", phrases=["prompt"], match=["prompt", "nope"], no_match=["x"])]},
    )
    assert main(["lint", str(root / "tx")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("[ERROR] ") and "1 error(s)" in out
    assert main(["lint", "--json", str(root / "tx")]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data[0]["level"] == "ERROR" and data[0]["line"] > 0


def test_shipped_english_pack_is_clean() -> None:
    from guardlex.rules.loader import SHIPPED_DIR

    errors = [
        f
        for f in lint([SHIPPED_DIR / "en"])
        if f.level == "ERROR" and not f.message.startswith("locale 'en' has no stopwords.yaml")
    ]
    assert errors == []
