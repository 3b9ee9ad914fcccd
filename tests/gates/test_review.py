"""Regression tests for the review of the gates (each failed before its fix).

They run against the shipped packs: the reviewer's cases depend on the real lexicons
(English "support" is also a form of the supported / not supported pair).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import guardlex
from guardlex import load_packs
from guardlex.cli import main
from guardlex.errors import InputTooLargeError
from guardlex.gates import (
    Released,
    SentenceGate,
    Stopped,
    accept,
    audit,
    extract_facts,
    resolve,
)

GATES = Path(guardlex.__file__).parent / "gates"


@pytest.fixture(scope="module")
def shipped():
    return load_packs()


def _codes(answer: str, quote: str, packs) -> list[str]:
    return [v.code for v in audit(answer, [quote], packs=packs)]


# ------------------------------------------------------------- 1. polarity per claim

FLIPS = [
    # (answer, evidence): a sentence about something else in the evidence carries the
    # opposite polarity and must not cancel the flip
    ("Support is included.", "The Standard plan includes 20 seats. Support is not included."),
    ("Support is not included.", "The Standard plan includes 20 seats. Support is included."),
    (
        "El soporte está incluido.",
        "El plan Estándar incluye 20 asientos. El soporte no está incluido.",
    ),
    (
        "Der Support ist inklusive.",
        "Der Standard-Tarif enthält 20 Plätze. Der Support ist nicht inklusive.",
    ),
    ("Поддержка включена.", "Тариф Стандарт включает 20 мест. Поддержка не включена."),
    ("技术支持包含在内。", "标准版包含 20 个席位。技术支持不包含在内。"),
]


@pytest.mark.parametrize(("answer", "evidence"), FLIPS, ids=[a for a, _ in FLIPS])
def test_polarity_flip_is_judged_per_claim(shipped, answer, evidence):
    assert "polarity_flip" in _codes(answer, evidence, shipped)


def test_polarity_of_other_claims_is_not_a_flip(shipped):
    evidence = "The Standard plan includes 20 seats. Support is not included. Tax is included."
    assert _codes("Tax is included.", evidence, shipped) == []
    assert _codes("Support is not included.", evidence, shipped) == []


def test_gate_stops_the_flip_from_the_cli_case(shipped):
    gate = SentenceGate(
        ["The Standard plan includes 20 seats. Support is not included."], packs=shipped
    )
    assert gate.check("Support is included [1].").reason == "polarity_flip"
    assert gate.check("Support is not included [1].").ok
    assert gate.check("The Standard plan includes 20 seats [1].").ok


# ----------------------------------------------------------------- 2. CLI --sources


@pytest.fixture
def sources(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("The Standard plan includes 20 seats. Support is not included.", "utf-8")
    b = tmp_path / "b.txt"
    b.write_text("Extra seats cost 8 EUR per seat per month.", "utf-8")
    return str(a), str(b)


def test_cli_sources_then_text(sources, capsys):
    a, b = sources
    answer = "The plan includes 20 seats [1]. Extra seats cost 8 EUR per seat per month [2]."
    assert main(["gate", "--sources", a, b, answer]) == 0
    out = capsys.readouterr().out
    assert "The plan includes 20 seats. Extra seats cost 8 EUR per seat per month." in out


def test_cli_sources_double_dash_and_repeated_flag(sources, capsys):
    a, b = sources
    assert main(["gate", "--sources", a, "--", "Support is included [1]."]) == 1
    assert "Support is included" not in capsys.readouterr().out
    assert main(["gate", "--sources", a, "--sources", b, "Extra seats cost 8 EUR [2]."]) == 0
    assert "Extra seats cost 8 EUR." in capsys.readouterr().out


@pytest.mark.parametrize("dash", [[], ["-"]])
def test_cli_sources_with_stdin(sources, capsys, monkeypatch, dash):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("Support is not included [1]."))
    assert main(["gate", "--sources", sources[0], *dash]) == 0
    assert capsys.readouterr().out.strip() == "Support is not included."


def test_cli_missing_source_file_is_named(sources, capsys, tmp_path):
    missing = str(tmp_path / "missing.txt")
    assert main(["gate", "--sources", sources[0], missing, "Yes [1]."]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("guardlex: error: source file not found") and missing in err
    assert "\n" not in err


def test_cli_help_documents_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = capsys.readouterr().out
    docs = (Path(__file__).parents[2] / "docs" / "gates.md").read_text("utf-8")
    for flag in (
        "--sources",
        "--json",
        "--locale",
        "--min-words",
        "--no-faithful",
        "--subject",
        "--chunk-size",
        "--packs",
    ):
        assert flag in text
        assert flag in docs, f"{flag} missing from docs/gates.md"


# ------------------------------------------------------------ 3. the fact extractor


def _values(field: str, text: str, packs, **kw) -> list:
    return [f.value for f in extract_facts(field, [{"doc": "d", "text": text}], packs=packs, **kw)]


@pytest.mark.parametrize(
    ("field", "text", "expected"),
    [
        ("support", "Support is not included.", [False]),
        ("support_included", "Support is not included.", [False]),
        ("tax_included", "Support is included.", []),
        ("tax_included", "Extra seats cost 8 per seat per month, plus tax.", [False]),
        ("soporte_incluido", "El soporte no está incluido. El plan incluye 20 asientos.", [False]),
        ("поддержка_включена", "Тариф включает 20 мест. Поддержка не включена.", [False]),
        ("技术支持", "标准版包含 20 个席位。技术支持不包含在内。", [False]),
    ],
)
def test_extractor_binds_polarity_to_its_subject(shipped, field, text, expected):
    assert _values(field, text, shipped) == expected


@pytest.mark.parametrize(
    ("field", "text", "expected"),
    [
        ("price", "Extra seats cost 8 EUR per seat per month.", ["8"]),
        ("seat_price", "It costs 8 EUR per seat per month.", ["8"]),
        ("price_per_seat", "Each extra seat costs $8 per seat per month.", ["8"]),
        ("price_per_seat", "Each extra seat costs 8 USD per seat per month.", ["8"]),
        ("price_per_seat", "Each extra seat costs €8 per seat per month.", ["8"]),
        ("цена_за_место", "Дополнительное место стоит 900 руб. в месяц за место.", ["900"]),
        ("每席位价格", "额外席位每席位每月 8 元。", ["8"]),
        ("价格", "额外席位 ¥8/席位/月。", ["8"]),
        ("precio", "Cada asiento adicional cuesta 8 EUR por asiento al mes.", ["8"]),
        ("preço", "Cada usuário extra custa R$ 49 por usuário por mês.", ["49"]),
        ("قیمت_هر_کاربر", "هر کاربر اضافه ۵۰۰ هزار تومان به ازای هر کاربر در ماه.", ["500"]),
        ("प्रति_सीट_कीमत", "हर अतिरिक्त सीट की कीमत ₹500 प्रति सीट प्रति माह है।", ["500"]),
    ],
)
def test_extractor_reads_money_units(shipped, field, text, expected):
    assert _values(field, text, shipped) == expected


def test_resolve_tax_ignores_other_subjects(shipped):
    docs = [{"doc": "p", "text": "Support is included. Prices are shown excluding tax."}]
    result = resolve("tax_included", None, docs, packs=shipped)
    assert (result.status, result.value) == ("OK", False)


# ------------------------------------------------------------------- 4. bad input


def test_bad_input_is_a_type_error_naming_the_argument(shipped):
    with pytest.raises(TypeError, match=r"sources must be a list of texts, not a str"):
        SentenceGate("abc", packs=shipped)
    with pytest.raises(TypeError, match="sources"):
        SentenceGate(None, packs=shipped)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"sources\[1\] must be a str, not int"):
        SentenceGate(["a", 3], packs=shipped)  # type: ignore[list-item]
    gate = SentenceGate(["The plan includes 20 seats."], packs=shipped)
    with pytest.raises(TypeError, match="sentence must be a str, not NoneType"):
        gate.check(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="answer must be a str, not NoneType"):
        audit(None, ["x"], packs=shipped)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="quotes must be a list of texts, not a str"):
        audit("x", "The plan includes 20 seats.", packs=shipped)
    # None is a value (docs/gates.md): a slot without a number, accepted with such a quote only
    assert not accept("seats", None, "20 seats", "20 seats", packs=shipped).ok
    assert accept("seats", None, "unlimited seats", "unlimited seats", packs=shipped).ok
    with pytest.raises(TypeError, match="documents must be a list"):
        resolve("seats", None, "20 seats", packs=shipped)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="field must be a str"):
        extract_facts(None, [], packs=shipped)  # type: ignore[arg-type]


def test_unbounded_inputs_have_limits(shipped):
    with pytest.raises(InputTooLargeError):
        SentenceGate(["x"] * 10_001, packs=shipped)
    with pytest.raises(InputTooLargeError):
        audit("x", ["y"] * 10_001, packs=shipped)
    with pytest.raises(InputTooLargeError):
        accept("f", "1", "1", "1" + " " * 5_000_000, packs=shipped)
    with pytest.raises(InputTooLargeError):
        audit("x", ["y"], computed={str(i): "1" for i in range(1001)}, packs=shipped)


def test_cli_accept_without_value_is_a_usage_error_and_null_is_a_value(tmp_path, capsys):
    request = tmp_path / "r.json"
    request.write_text('{"field": "seats", "quote": "a", "evidence": "a"}')
    assert main(["audit", "--input", str(request)]) == 2
    assert "'value' is missing" in capsys.readouterr().err
    request.write_text('{"field": "seats", "value": null, "quote": "a", "evidence": "a"}')
    assert main(["audit", "--input", str(request)]) == 1
    request.write_text(
        '{"field": "seats", "value": null, "quote": "Enterprise: unlimited seats",'
        ' "evidence": "Enterprise: unlimited seats."}'
    )
    assert main(["audit", "--input", str(request)]) == 0


# ------------------------------------------------------------ 5. regex timeouts

_MATCHERS = {"match", "search", "finditer", "sub", "subn", "split", "findall", "fullmatch"}


def _is_str_split(node: ast.Call) -> bool:
    # str.split() / str.split(" ") on a lower-case variable is not a regex call
    receiver = node.func.value  # type: ignore[attr-defined]
    name = ast.unparse(receiver)
    return (
        node.func.attr == "split"  # type: ignore[attr-defined]
        and name != "regex"
        and not name.lstrip("_")[:1].isupper()
        and all(isinstance(a, ast.Constant) for a in node.args)
    )


def test_every_regex_call_in_the_gates_has_a_timeout():
    missing = []
    for path in sorted(GATES.glob("*.py")):
        source = path.read_text("utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                assert "re" not in names, f"{path.name}: stdlib re imported"
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MATCHERS
            ):
                continue
            if any(k.arg == "timeout" for k in node.keywords) or _is_str_split(node):
                continue
            missing.append(f"{path.name}:{node.lineno} {ast.unparse(node.func)}")
    assert missing == []


# ------------------------------------------- first person: the answer's locale


@pytest.mark.parametrize(
    ("source", "answer", "word"),
    [
        (
            "O plano Escritório inclui 3 usuários e custa 49 reais por mês.",
            "O plano Escritório inclui 3 usuários [1]. Ele custa 49 reais por mês [1]. "
            "Eu acho [1].",
            "Eu",
        ),
        (
            "Le plan Pro coûte 20 euros par mois et inclut 5 utilisateurs.",
            "Le plan Pro coûte 20 euros par mois [1]. Il inclut 5 utilisateurs [1]. Je pense [1].",
            "Je",
        ),
        (
            "پلن استاندارد ۲۰ صندلی دارد و پشتیبانی ایمیلی دارد.",
            "پلن استاندارد ۲۰ صندلی دارد [1]. پشتیبانی ایمیلی هم دارد [1]. به نظرم بله [1].",
            "به نظرم",
        ),
    ],
)
def test_first_person_uses_the_whole_answers_locale(shipped, source, answer, word):
    events = list(SentenceGate([source], packs=shipped).stream([answer]))
    assert all(isinstance(e, Released) for e in events[:-1]), events
    assert isinstance(events[-1], Stopped), events
    assert (events[-1].reason, events[-1].token) == ("first_person", word)


# ------------------------------------------------------------ 6. audit fast path


def test_audit_is_skipped_only_when_it_cannot_find_anything(shipped):
    gate = SentenceGate(["Founded in 2019. Support is not included. 20 seats."], packs=shipped)
    auditor = gate._auditor
    assert auditor is not None
    from guardlex.normalise import normalise

    # no number, no polarity word: nothing to audit
    assert not auditor.relevant(normalise("Here are the details."), False)
    # a number without a unit word: the gate's own value check is all there is
    assert not auditor.relevant(normalise("It was founded in 2019."), True)
    # a polarity word, or a number with a unit word: audited
    assert auditor.relevant(normalise("Support is included."), False)
    assert auditor.relevant(normalise("It has 20 seats."), True)
    assert gate.check("Support is included [1].").reason == "polarity_flip"
