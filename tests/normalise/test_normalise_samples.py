"""Ordinary text: the evasion defences change nothing, and the fast paths agree with
the reference chain of steps (the benchmark's samples and real sentences)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from guardlex.normalise import normalise, normalise_with_offsets
from guardlex.normalise.steps import STEPS

REPO = Path(__file__).resolve().parents[2]
EXTERNAL = REPO.parent / "shared" / "data" / "external" / "first_person"
DEFENCES = {"invisible", "arabic_variants", "cyrillic_stress", "lookalikes"}


def _bench() -> ModuleType:
    path = REPO / "benchmarks" / "bench_normalise.py"
    spec = importlib.util.spec_from_file_location("bench_normalise", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _chain(text: str, skip: frozenset[str] = frozenset()) -> str:
    for _ in range(6):
        before = text
        for name, func in STEPS:
            if name not in skip:
                text = func(text)
        if text == before:
            break
    return text


def _samples() -> list[str]:
    b = _bench()
    others = [line for lines in b.OTHER.values() for line in lines]
    return b.sample(b.FA + b.AR, b._vary_fa_ar, 40_000) + b.sample(others, b._vary_other, 40_000)


def _real_sentences() -> list[str]:
    out: list[str] = []
    for path in sorted(EXTERNAL.glob("first_person_ud_*.jsonl")):
        lines = path.read_text("utf-8").splitlines()[:150]
        out.extend(json.loads(line)["text"] for line in lines if line)
    return out


def test_benchmark_samples_fast_paths_equal_the_reference() -> None:
    lines = _samples()
    assert len(lines) > 500
    for line in lines:
        out = normalise(line)
        assert out == _chain(line), line
        assert normalise_with_offsets(line).text == out, line


def test_defences_leave_ordinary_text_as_the_ten_steps_make_it() -> None:
    lines = _samples() + _real_sentences()
    if len(lines) < 1000:
        pytest.skip("real sentences not available")
    skip = frozenset(DEFENCES)
    changed = [line for line in lines if normalise(line) != _chain(line, skip)]
    assert changed == []
