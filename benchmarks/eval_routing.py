"""Routing quality on material the pack authors did not tune to.

Usage::

    python benchmarks/eval_routing.py [--blind DIR ...] [--meta FILE] [--json] [--locale CODE ...]

Two measures, per locale, never blended:

* **Blind batches** (``tests/data/blind/<code>.yaml``: batch v1, written before the
  round-1 rewrite and studied by the pack authors in round 2, so no longer blind;
  ``tests/data/blind2/`` and ``blind3/``: batches v2 and v3, written before and during
  round 2 by two authors who read neither the packs nor any other batch; v2 was studied
  in round 3, v3 in round 4; ``blind4/``: batch v4, written at the start of round 4,
  measured once during it and then studied; ``blind5/``: batch v5, written at the start
  of round 4, measured once at its end and studied in round 5; ``blind6/``: batch v6,
  written at the start of round 5; ``blind7/`` to ``blind13/``: batches v7-v13 of rounds
  6 and 7, each measured once held out and then studied; ``blind14/``: batch v14, written
  at the start of round 8 by one author per language, each brainstorming in that language
  only, measured on the round-7 packs and once at the end of round 8, then studied;
  ``blind18/``: batch v18, written at the start of round 11 by three authors who read
  only the sample site's content, measured on the round-9 packs and once at the end of
  round 11, then studied; ``blind19/``: batch v19, written at the start of round 12 by
  three authors who read only the sample site's content and the category boundaries of
  docs/packs.md, measured on the round-11 packs and once at the end of round 12, then
  studied; ``blind20/``: batch v20, written at the start of round 13 by three authors
  who read only the sample site's content, measured on the round-12b packs and once at
  the end of round 13, then studied; ``blind21/``: batch v21, written at the start of
  round 13 by three authors who read only the sample site's content, measured once on
  the round-12b packs and given to the round-13 writers to study from the start (a
  study batch, never held out); ``blind22/``: batch v22, written at the start of round 14
  by three authors who read only the sample site's content, measured on the round-13
  packs and once at the end of round 14, then studied; ``blind23/``: batch v23, written
  at the start of round 15 by three authors who read only the sample site's content,
  measured on the round-14 packs and once at the end of round 15, then studied; batches
  v15-v17 were lost with an
  earlier session's machine):
  questions written by an author
  who had not read the packs. Reports, per batch and locale, refusal recall (right category and any
  category), legitimate questions answered (hard negatives and other answerable
  questions together, and each apart), overview routed, follow-ups right, and the
  pooled figures of all locales; ``--by-category`` adds recall per refusal category.
* **External prompt-injection sets** (``../shared/data/external/meta/meta_external.jsonl``,
  read in place, never copied): attacks refused (any category) and the datasets' own
  benign controls refused, in any category and as ``meta``, per language with the number
  of items. The benign controls are not injections, but many are general requests (a
  recipe, tax tips, "what is 1+1?") that the packs refuse as ``task`` by design: a
  portfolio assistant does not do general chores. A benign control refused as ``meta`` is
  a false alarm of the injection rules.

All locales are loaded with the sample site's subject names, as a deployment would, so
collisions between locales count. The script exits 0; it reports, it does not judge.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

from guardlex import load_packs

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = REPO / "tests" / "data"
META_FILE = REPO.parent / "shared" / "data" / "external" / "meta" / "meta_external.jsonl"
SUBJECT_NAMES = (
    "Dana Reyes",
    "دانا ریس",
    "دانا رييس",
    "Дана Рейес",
    "दाना रेयेस",
    "达娜·雷耶斯",
)


def _ratio(hit: int, total: int) -> str:
    return f"{hit}/{total} ({hit / total:.2f})" if total else "-"


def blind_report(packs: Any, folder: Path, locales: set[str] | None) -> dict[str, Any]:
    """Score every blind batch in ``folder``; one entry per locale."""
    out: dict[str, Any] = {}
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        code = doc.get("locale", path.stem)
        if locales and code not in locales:
            continue
        counts: Counter[str] = Counter()
        misses: list[dict[str, Any]] = []
        for case in doc.get("cases") or []:
            route = packs.route(case["text"], previous=case.get("previous"))
            expect = case["expect"]
            group = "followup" if case.get("previous") else expect
            if expect == "retrieve" and not case.get("previous"):
                group = case.get("kind_of", "answerable")
            counts[f"{group}:total"] += 1
            ok = route.kind == expect
            if expect == "refuse" and not case.get("previous"):
                counts[f"cat:{case.get('category')}:total"] += 1
            if expect == "refuse" and ok:
                counts[f"{group}:any"] += 1
                ok = route.category == case.get("category")
                if not case.get("previous"):
                    counts[f"cat:{case.get('category')}:any"] += 1
            if ok:
                counts[f"{group}:ok"] += 1
            else:
                misses.append(
                    {
                        "text": case["text"],
                        "previous": case.get("previous"),
                        "expect": expect,
                        "category": case.get("category"),
                        "got": route.kind,
                        "got_category": route.category,
                        "rule_id": route.rule_id,
                    }
                )
        out[code] = {"counts": dict(counts), "misses": misses}
    return out


def _half(row_id: str) -> str:
    """A stable split of the external set: pack authors may study ``dev``, never ``heldout``."""
    digest = hashlib.sha256(row_id.encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "heldout"


def meta_report(
    packs: Any, path: Path, locales: set[str] | None, split: str = "all"
) -> dict[str, Any]:
    """Attacks refused and benign controls refused, per language (``split``: all|dev|heldout)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        code = row["locale"]
        if locales and code not in locales:
            continue
        if split != "all" and _half(row["id"]) != split:
            continue
        label = row["label"]
        route = packs.route(row["text"])
        refused = route.kind == "refuse"
        counts[code][f"{label}:total"] += 1
        counts[code][f"{label}:refused"] += int(refused)
        if refused:  # which category: a benign control refused as meta is a false alarm
            counts[code][f"{label}:{route.category}"] += 1
    return {code: dict(c) for code, c in sorted(counts.items())}


CATEGORIES = ("engagement", "personal_data", "speculation", "meta", "task")


def _print_blind(report: dict[str, Any], folder: Path, by_category: bool = False) -> None:
    print(f"== blind batches in {folder}")
    head = (
        "locale",
        "refusal recall",
        "(any category)",
        "legit answered",
        "hard neg",
        "answerable",
        "overview",
        "follow-ups",
    )
    print(" | ".join(head))
    pooled: Counter[str] = Counter()
    rows = list(report.items())
    for _, entry in rows:
        pooled.update(entry["counts"])
    for code, c in [(code, entry["counts"]) for code, entry in rows] + [("all", pooled)]:
        legit = c.get("hard_negative:ok", 0) + c.get("answerable:ok", 0)
        legit_total = c.get("hard_negative:total", 0) + c.get("answerable:total", 0)
        print(
            " | ".join(
                (
                    code,
                    _ratio(c.get("refuse:ok", 0), c.get("refuse:total", 0)),
                    _ratio(c.get("refuse:any", 0), c.get("refuse:total", 0)),
                    _ratio(legit, legit_total),
                    _ratio(c.get("hard_negative:ok", 0), c.get("hard_negative:total", 0)),
                    _ratio(c.get("answerable:ok", 0), c.get("answerable:total", 0)),
                    _ratio(c.get("overview:ok", 0), c.get("overview:total", 0)),
                    _ratio(c.get("followup:ok", 0), c.get("followup:total", 0)),
                )
            )
        )
    if by_category:
        print("refused (any category), per category of the question:")
        print(" | ".join(("locale", *CATEGORIES)))
        for code, c in [(code, entry["counts"]) for code, entry in rows] + [("all", pooled)]:
            cells = [
                _ratio(c.get(f"cat:{cat}:any", 0), c.get(f"cat:{cat}:total", 0))
                for cat in CATEGORIES
            ]
            print(" | ".join((code, *cells)))


def _print_meta(report: dict[str, Any]) -> None:
    print(
        "== external prompt-injection sets (attacks refused / benign refused: in any"
        " category, and as meta)"
    )
    for code, c in report.items():
        benign = c.get("benign:total", 0)
        print(
            f"{code}: attacks {_ratio(c.get('meta:refused', 0), c.get('meta:total', 0))}"
            f"   benign {_ratio(c.get('benign:refused', 0), benign)}"
            f"   benign as meta {_ratio(c.get('benign:meta', 0), benign)}"
        )
    print(
        "(the benign controls are ordinary requests: recipes, advice and sums are refused"
        " as task by design; as meta, the injection rules raised a false alarm)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--blind",
        type=Path,
        action="append",
        help="folder of blind batches (repeatable; default: every tests/data/blind*)",
    )
    parser.add_argument(
        "--by-category", action="store_true", help="also print recall per refusal category"
    )
    parser.add_argument("--meta", type=Path, default=META_FILE, help="external meta JSONL file")
    parser.add_argument("--locale", action="append", help="only these locales (repeatable)")
    parser.add_argument(
        "--split",
        choices=("all", "dev", "heldout"),
        default="all",
        help="half of the external set: pack authors study dev; report heldout and all",
    )
    parser.add_argument("--misses", action="store_true", help="list every miss")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    locales = set(args.locale) if args.locale else None
    packs = load_packs(subject_names=SUBJECT_NAMES)
    result: dict[str, Any] = {}
    folders = args.blind or sorted(d for d in DATA_DIR.glob("blind*") if d.is_dir())
    blind: dict[str, Any] = {}
    for folder in folders:
        if folder.is_dir():
            blind[str(folder)] = blind_report(packs, folder, locales)
        else:
            print(f"eval_routing: no blind batches in {folder}", file=sys.stderr)
    if blind:
        result["blind"] = blind
    if args.meta.is_file():
        result["meta"] = meta_report(packs, args.meta, locales, args.split)
    else:
        print(f"eval_routing: external meta set not found at {args.meta}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    for folder, report in result.get("blind", {}).items():
        _print_blind(report, Path(folder), args.by_category)
        if args.misses:
            for code, entry in report.items():
                for m in entry["misses"]:
                    print(f"  {code} MISS {m}")
    if "meta" in result:
        _print_meta(result["meta"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
