"""Sentence-end precision and recall of the gates' segmenter on UD paragraphs.

The data (``../shared/data/external/segment/segment_ud_<code>.jsonl``, beside the clone)
are paragraphs of 3-6 consecutive Universal Dependencies test sentences joined with one
space; ``ends`` are the gold sentence ends. A predicted boundary is an end of a sentence
that the segmenter releases before the end of the paragraph (the paragraph's own end is
not counted: every splitter finds it).

    python benchmarks/eval_segment.py [--data DIR] [--errors en,de] [--chunk N]

``--chunk N`` feeds each paragraph in pieces of N characters, as a model streams (the
result must not change). Prints one row per language and exits 1 when a language is
below precision 0.99 or recall 0.98 (the targets of issue 10).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guardlex import load_packs
from guardlex.gates._vocab import vocab_for
from guardlex.gates.segment import Segmenter

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "external" / "segment"
PRECISION, RECALL = 0.99, 0.98


def predicted_ends(text: str, is_abbreviation, chunk: int = 0) -> set[int]:
    """Offsets just after the last non-space character of each released sentence."""
    seg = Segmenter(is_abbreviation, max_chars=len(text) + 10)
    pieces: list[str] = []
    for start in range(0, len(text), chunk or len(text) or 1):
        pieces.extend(seg.feed(text[start : start + (chunk or len(text))]))
    more, _tail = seg.finish()
    pieces.extend(more)
    ends, pos = set(), 0
    for piece in pieces:
        pos += len(piece)
        ends.add(pos - (len(piece) - len(piece.rstrip())))
    return {e for e in ends if e < len(text.rstrip())}


def score(path: Path, is_abbreviation, chunk: int = 0) -> dict:
    tp = fp = fn = 0
    errors: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        text = item["text"]
        gold = set(item["ends"][:-1])
        pred = predicted_ends(text, is_abbreviation, chunk)
        tp += len(gold & pred)
        fp += len(pred - gold)
        fn += len(gold - pred)
        for kind, where in (("missed", gold - pred), ("extra", pred - gold)):
            for e in sorted(where):
                errors.append(f"{kind}: {text[max(0, e - 50) : e]}|{text[e : e + 30]}")
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--errors", default="", help="languages whose errors to print (en,de)")
    parser.add_argument("--chunk", type=int, default=0, help="feed in pieces of N characters")
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("segment_ud_*.jsonl"))
    if not files:
        print(f"no segment_ud_*.jsonl in {args.data}", file=sys.stderr)
        return 2
    is_abbreviation = vocab_for(load_packs()).is_abbreviation
    show = set(filter(None, args.errors.split(",")))
    failed = False
    print(f"{'lang':<5} {'precision':>9} {'recall':>7} {'tp':>5} {'fp':>4} {'fn':>4}")
    for path in files:
        code = path.stem.removeprefix("segment_ud_")
        s = score(path, is_abbreviation, args.chunk)
        low = s["precision"] < PRECISION or s["recall"] < RECALL
        failed |= low
        print(
            f"{code:<5} {s['precision']:>9.3f} {s['recall']:>7.3f} {s['tp']:>5} {s['fp']:>4} "
            f"{s['fn']:>4}{'  below target' if low else ''}"
        )
        if code in show:
            for e in s["errors"]:
                print("    " + e)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
