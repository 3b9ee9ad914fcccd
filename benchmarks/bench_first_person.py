"""``first_person`` µs per sentence, with and without the locale (language identification
included), per locale, beside the frozen 0.1.0 engine (``benchmarks/_legacy_engine``,
hand-kept language tables, no generated verb forms; 18 µs / 157 µs in the 0.1.0 notes).

Sentences: the UD first-person sets (``../shared/data/external/first_person``), the
first ``--per`` sentences of each label per language: "no" rows are sentences without
first person (what the gate sees almost always), "yes" rows sentences with it. Medians
over rounds of per-sentence medians, after a warm-up (patterns compiled, model read).

    python benchmarks/bench_first_person.py            # 7 rounds, 100 sentences per locale
    python benchmarks/bench_first_person.py --quick    # 3 rounds, 40 sentences
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "external" / "first_person"
LOCALES = ("en", "de", "fr", "es", "pt", "ru", "ar", "hi", "fa", "zh")


def median_us(fn: Callable[[str], Any], items: Sequence[str], rounds: int) -> float:
    per_round = []
    for _ in range(rounds):
        times = []
        for item in items:
            t0 = time.perf_counter_ns()
            fn(item)
            times.append(time.perf_counter_ns() - t0)
        per_round.append(statistics.median(times) / 1000)
    return statistics.median(per_round)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--per", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 7
    per = args.per or (40 if args.quick else 100)
    if not DATA.is_dir():
        print(f"missing external data: {DATA}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    from benchmarks import _legacy_engine

    from guardlex import load_packs

    packs = load_packs()
    legacy = _legacy_engine.load_packs()
    texts: dict[tuple[str, bool], list[str]] = {}
    for code in LOCALES:
        rows = (DATA / f"first_person_ud_{code}.jsonl").read_text(encoding="utf-8").splitlines()
        items = [json.loads(r) for r in rows]
        for label in (False, True):
            texts[(code, label)] = [r["text"] for r in items if r["expect"] is label][:per]
    for (code, _label), items in texts.items():  # warm-up: compile, read the model
        for t in items[:3]:
            packs.first_person(t, locale=code)
            packs.first_person(t)
            legacy.first_person(t, locale=code)
            legacy.first_person(t)
    print(f"median µs per sentence ({per} UD sentences per locale and label, {rounds} rounds)")
    head = ("locale", "1st?", "given", "auto", "detect", "0.1.0 given", "0.1.0 auto")
    print("{:6} {:4} {:>7} {:>7} {:>7}   {:>11} {:>10}".format(*head))
    summary: dict[bool, list[tuple[float, float, float, float]]] = {False: [], True: []}
    for (code, label), items in texts.items():
        if not items:
            continue
        given = median_us(lambda t, c=code: packs.first_person(t, locale=c), items, rounds)
        auto = median_us(packs.first_person, items, rounds)
        detect = median_us(packs.detect_locale, items, rounds)
        old_given = median_us(lambda t, c=code: legacy.first_person(t, locale=c), items, rounds)
        old_auto = median_us(legacy.first_person, items, rounds)
        summary[label].append((given, auto, old_given, old_auto))
        print(
            f"{code:6} {'yes' if label else 'no':4} {given:7.1f} {auto:7.1f} {detect:7.1f}"
            f"   {old_given:11.1f} {old_auto:10.1f}"
        )
    for label, rows_ in summary.items():
        med = [statistics.median(col) for col in zip(*rows_, strict=True)]
        print(
            f"median {'yes' if label else 'no':4} {med[0]:7.1f} {med[1]:7.1f} {'':7}"
            f"   {med[2]:11.1f} {med[3]:10.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
