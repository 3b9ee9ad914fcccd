"""tools/pack_size.py measures what it says: lines and bytes of refusal + concepts."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType

import pytest


def test_measure_counts_lines_and_bytes_of_both_files(tool: Callable[[str], ModuleType]) -> None:
    mod = tool("pack_size")
    folder = mod.LOCALES / "de"
    data = [(folder / n).read_bytes() for n in ("refusal.yaml", "concepts.yaml")]
    got = mod.measure("de")
    assert got["bytes"] == sum(len(d) for d in data)
    assert got["lines"] == sum(d.count(b"\n") for d in data)
    assert got["lines_ratio"] == round(got["lines"] / mod.BASELINE["de"][0], 3)


def test_report_has_every_locale(
    tool: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    mod = tool("pack_size")
    assert mod.main(["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report) == sorted(mod.BASELINE)
