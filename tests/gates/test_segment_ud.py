"""Sentence ends measured on Universal Dependencies paragraphs written outside this project.

The data live beside the clone (``../shared/data/external/segment``, as in CI); a missing
folder is a failure, not a skip: the figures are the check of issue 10 (precision >= 0.99
and recall >= 0.98 per language). ``benchmarks/eval_segment.py`` prints the table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardlex import load_packs
from guardlex.gates._vocab import vocab_for
from guardlex.gates.segment import Segmenter

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "external" / "segment"
LOCALES = ["ar", "de", "en", "es", "fa", "fr", "hi", "pt", "ru", "zh"]


@pytest.fixture(scope="module")
def is_abbr():
    return vocab_for(load_packs()).is_abbreviation


def _ends(text: str, is_abbr, chunk: int) -> set[int]:
    seg = Segmenter(is_abbr, max_chars=len(text) + 10)
    pieces = []
    for start in range(0, len(text), chunk):
        pieces.extend(seg.feed(text[start : start + chunk]))
    more, _ = seg.finish()
    ends, pos = set(), 0
    for piece in [*pieces, *more]:
        pos += len(piece)
        ends.add(pos - (len(piece) - len(piece.rstrip())))
    return {e for e in ends if e < len(text.rstrip())}


def test_the_data_is_there():
    assert DATA.is_dir(), f"missing {DATA}: the UD segmentation data must sit beside the clone"
    assert sorted(p.stem.removeprefix("segment_ud_") for p in DATA.glob("*.jsonl")) == LOCALES


@pytest.mark.parametrize("code", LOCALES)
def test_boundary_precision_and_recall(code, is_abbr):
    path = DATA / f"segment_ud_{code}.jsonl"
    assert path.is_file(), f"missing {path}"
    tp = fp = fn = 0
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        gold = set(item["ends"][:-1])
        whole = _ends(item["text"], is_abbr, len(item["text"]))
        # the same boundaries whatever the chunking (a model streams a few characters)
        assert _ends(item["text"], is_abbr, 7) == whole, item["id"]
        tp += len(gold & whole)
        fp += len(whole - gold)
        fn += len(gold - whole)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert precision >= 0.99, f"{code}: precision {precision:.3f} (tp {tp}, fp {fp})"
    assert recall >= 0.98, f"{code}: recall {recall:.3f} (tp {tp}, fn {fn})"
