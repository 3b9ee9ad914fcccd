"""Inputs from peer normalisers' test suites, with expectations recomputed for SPEC §3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from guardlex.normalise import normalise

_DATA = Path(__file__).parent / "data" / "external_cases.yaml"
_CASES: list[dict[str, Any]] = yaml.safe_load(_DATA.read_text("utf-8"))["cases"]


def test_every_source_is_represented() -> None:
    sources = {case["source"].split()[0] for case in _CASES}
    assert sources == {"lucene-fa", "lucene-ar", "hazm", "nisaba"}


@pytest.mark.parametrize(
    "case", _CASES, ids=[f"{i:02d}-{c['source'].replace(' ', '-')}" for i, c in enumerate(_CASES)]
)
def test_external_case(case: dict[str, Any]) -> None:
    assert normalise(case["input"]) == case["expected"], case.get("peer", "")
