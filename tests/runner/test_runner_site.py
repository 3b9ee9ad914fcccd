"""A user's own site from the command line, on both backends (SQLite and PostgreSQL).

A fresh site in a temporary folder: its own documents in two languages, its own subject
("Sam Okafor", also written in Persian script), no records, and its own golden set with
one deliberately failing case. Indexed, evaluated, calibrated and asked through
``guardlex.cli.main``, exactly as a user would type it. Uses the real packs and gates.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex.cli import main

SOURCE = "hand-written for the guardlex own-site test (a fictional engineer, Sam Okafor)"

DOCS = {
    "bridges.md": """---
id: bridges
title: Inspecting timber footbridges
date: '2023-04'
locale: en
---
# Inspecting timber footbridges

Sam Okafor inspects timber footbridges for river councils. Each inspection measures
moisture in the deck boards, checks the bolts of every truss joint and records rot with a
resistance drill. A footbridge that shows more than 20 percent moisture is inspected
again after six months.

# Drone surveys

Sam Okafor flies a small drone under each footbridge to photograph the bearings. The
photographs are stitched into one model, so cracks in the bearings can be measured to the
millimetre.
""",
    "puentes.md": """---
id: puentes
title: Inspección de pasarelas de madera
date: '2023-04'
locale: es
---
# Inspección de pasarelas de madera

Sam Okafor inspecciona pasarelas de madera para ayuntamientos ribereños. Cada inspección
mide la humedad de las tablas del tablero, revisa los pernos de cada unión de la cercha y
registra la pudrición con un taladro de resistencia. Una pasarela con más del 20 por
ciento de humedad se inspecciona de nuevo a los seis meses.
""",
}

GOLDEN: dict[str, list[dict[str, Any]]] = {
    "refusals": [
        {
            "id": "price-en",
            "locale": "en",
            "text": "How much does Sam Okafor charge for an inspection?",
            "category": "engagement",
        },
        {
            "id": "price-es",
            "locale": "es",
            "text": "¿Cuánto cobra Sam Okafor por una inspección?",
            "category": "engagement",
        },
        {  # an ordinary question, labelled as a refusal on purpose: it must fail
            "id": "deliberately-failing",
            "locale": "en",
            "text": "How do you measure moisture in the deck boards?",
            "category": "engagement",
        },
    ],
    "answerable": [
        {
            "id": "moisture-en",
            "locale": "en",
            "text": "How does Sam Okafor measure moisture in footbridge deck boards?",
            "chunks": ["en/bridges/1"],
        },
        {
            "id": "drone-en",
            "locale": "en",
            "text": "Why does he photograph the bearings with a drone?",
            "chunks": ["en/bridges/2"],
        },
        {
            "id": "humedad-es",
            "locale": "es",
            "text": "¿Cómo mide Sam Okafor la humedad de las tablas de las pasarelas?",
            "chunks": ["es/puentes/1"],
        },
    ],
    "no_evidence": [
        {"id": "jazz-en", "locale": "en", "text": "Which jazz festivals did he play at in Lagos?"},
        {"id": "cocina-es", "locale": "es", "text": "¿Qué recetas de cocina vegetariana publica?"},
    ],
    "overview": [
        {"id": "now-en", "locale": "en", "text": "What is Sam Okafor working on these days?"},
    ],
}


def write_site(root: Path, golden: dict[str, list[dict[str, Any]]] = GOLDEN) -> tuple[Path, Path]:
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    gold = root / "golden"
    gold.mkdir(exist_ok=True)
    for name, cases in golden.items():
        data = {"schema_version": 1, "source": SOURCE, "cases": cases}
        (gold / f"{name}.yaml").write_text(
            yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8"
        )
    return docs, gold


@pytest.fixture
def site_store(backend: str, tmp_path: Path) -> str:
    """Where the user's store goes: a SQLite file, or a fresh PostgreSQL database."""
    return str(tmp_path / "okafor.sqlite") if backend == ":memory:" else backend


@pytest.mark.filterwarnings("ignore:.* deprecated - use")  # matplotlib's use of pyparsing
def test_own_site_index_eval_calibrate_ask(
    site_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, gold = write_site(tmp_path)
    rc = main(
        ["index", str(docs), "--store", site_store, "--subject", "Sam Okafor",
         "--subject", "سام اوکافور", "--site", "Okafor Bridges", "-q"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "site 'Okafor Bridges'" in out and "3 chunks in 2 locale(s) (en, es)" in out
    assert "Sam Okafor, سام اوکافور" in out and "hashing-bow-256" in out

    # eval needs only --store and --golden; the failing case fails the run and is named
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    argv = ["eval", "--store", site_store, "--golden", str(gold), "-q"]
    rc = main([*argv, "--junit", str(junit), "--report", str(report)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "site 'Okafor Bridges'" in out and "embedding model: hashing-bow-256" in out
    assert "subjects: Sam Okafor, سام اوکافور" in out
    assert "miss deliberately-failing [en]" in out
    assert "pattern refusals  [3 cases]  2/3  FAIL" in out  # the subject's own refusals hold
    assert "recall@5  [3 cases]  3/3" in out
    assert "questions without evidence  [2 cases]  2/2  ok" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["report_version"] == 1 and data["ok"] is False
    assert data["site"]["name"] == "Okafor Bridges" and data["site"]["chunks"] == 3
    assert data["results"]["refusals"] == {
        "price-en": True,
        "price-es": True,
        "deliberately-failing": False,
    }
    tree = ET.parse(junit).getroot()
    failed = [tc.get("name") for tc in tree.iter("testcase") if tc.find("failure") is not None]
    assert failed == ["deliberately-failing [en]"]
    assert tree.get("failures") == "1"

    # the same run against its own report: nothing changed
    rc = main([*argv, "--baseline", str(report)])
    assert rc == 1 and "nothing changed" in capsys.readouterr().out

    # the case fixed (it is moved to the answerable set): exit 0, and the diff says so
    fixed = dict(GOLDEN)
    fixed["refusals"] = GOLDEN["refusals"][:2]
    write_site(tmp_path, fixed)
    rc = main([*argv, "--baseline", str(report)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "RESULT: PASS" in out and "removed cases (1): refusals/deliberately-failing" in out

    # calibrate: a plot, a record, and --apply; eval and ask then say they use it
    plot, record = tmp_path / "cal.png", tmp_path / "cal.json"
    rc = main(
        ["calibrate", "--store", site_store, "--golden", str(gold), "--plot", str(plot),
         "--record", str(record), "--apply"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0, out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    cal = json.loads(record.read_text(encoding="utf-8"))
    assert cal["sizes"] == {"answerable": 3, "no_evidence": 2}
    assert cal["embedder"] == "hashing-bow-256" and cal["recommended"] is not None
    value = cal["recommended"]
    assert "applied: threshold" in out and "policy: keep all of the answerable" in out
    rc = main([*argv])
    out = capsys.readouterr().out
    assert rc == 0 and f"threshold from: threshold {value} (calibrated:" in out

    # an overview question on a site without records: the documents' titles, gated
    rc = main(["ask", "What is Sam Okafor working on these days?", "--store", site_store,
               "--json"])  # fmt: skip
    ans = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert ans["code"] == "OVERVIEW" and "OVERVIEW_DOCUMENTS" in ans["trace"]
    assert "Inspecting timber footbridges" in ans["text"]
    assert ans["threshold_source"].startswith(f"threshold {value} (calibrated")
    # the subject's name in Persian script is the subject too: a price question refuses
    rc = main(["ask", "How much does سام اوکافور charge?", "--store", site_store, "--json"])
    ans = json.loads(capsys.readouterr().out)
    assert ans["code"] == "REFUSED"
    rc = main(["ask", "¿Cómo mide la humedad de las tablas?", "--store", site_store,
               "--locale", "es", "--json"])  # fmt: skip
    ans = json.loads(capsys.readouterr().out)
    assert ans["code"] == "ANSWERED" and ans["sources"][0]["ref"] == "es/puentes/1"


def test_store_without_golden_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, _gold = write_site(tmp_path)
    store = str(tmp_path / "s.sqlite")
    assert main(["index", str(docs), "--store", store, "-q"]) == 0
    capsys.readouterr()
    assert main(["eval", "--store", store]) == 2
    assert "--store needs --golden" in capsys.readouterr().err
    assert main(["eval", "--store", store, "--golden", str(tmp_path / "none")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["eval", "--golden", str(tmp_path / "golden"), "--store", store,
                 "--baseline", str(bad)]) == 2  # fmt: skip
    assert "not a versioned guardlex eval report" in capsys.readouterr().err


def test_empty_site_overview_is_the_fixed_text_never_empty(fake_packs) -> None:
    from guardlex.runner.build import build_store
    from guardlex.runner.corpus import Site
    from guardlex.runner.pipeline import Runner

    runner = Runner(build_store(Site(()), ":memory:", packs=fake_packs), fake_packs)
    a = runner.ask("what has her career been like", locale="en")
    assert a.text.startswith("BELOW-TEXT") and a.code == "BELOW_THRESHOLD"
    assert "OVERVIEW_EMPTY" in a.trace
