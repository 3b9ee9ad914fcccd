"""Route every test text and write each full route, to compare two versions of the engine.

Run: ``python tools/dump_routes.py --root PACKS OUT.jsonl`` with one version of guardlex
importable (``PYTHONPATH=<tree>/src``), again with the other, then
``python tools/dump_routes.py --compare A.jsonl B.jsonl``: exit 1 when any route differs.

Texts are those of ``tools/compare_routes.py`` (every rule example with only its locale
loaded; every routing, independent and golden case with all locales loaded), every case
of the blind batches (``tests/data/blind*``, all locales loaded), plus a second pass of
the shared cases with 100 subject names. A route is the whole
``Route.to_dict()`` (kind, category, locale, rule, span, topic, evidence, about). Give
both runs the same ``--root`` (a snapshot of the packs) so only the code differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))

HUNDRED = [
    "Dana Reyes",
    "دانا ریس",
    "Дана Рейес",
    "दाना रेयेस",
    "达娜·雷耶斯",
    *(
        f"{f} {last}"
        for last in (
            "Kim",
            "Novak",
            "Haddad",
            "Chen",
            "Ivanova",
            "Sharma",
            "Rossi",
            "Silva",
            "Dubois",
            "Moreau",
        )
        for f in ("Alex", "Maria", "Yusuf", "Mei", "Olga", "Arjun", "Sara", "Tomás", "Léa", "Ana")
    ),
][:100]


def blind_cases(codes: list[str]) -> list[dict[str, Any]]:
    """Every case of the blind batches (``tests/data/blind*``), with the independent
    cases' subject names."""
    import yaml

    from compare_routes import INDEPENDENT_SUBJECTS

    out: list[dict[str, Any]] = []
    for path in sorted((ROOT / "tests" / "data").glob("blind*/*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        code = doc.get("locale", path.stem)
        if code not in codes:
            continue
        for i, c in enumerate(doc.get("cases") or []):
            if "text" in c:
                out.append(
                    {
                        "source": f"{path.parent.name}/{code}/{i}",
                        "text": c["text"],
                        "previous": c.get("previous"),
                        "names": INDEPENDENT_SUBJECTS,
                    }
                )
    return out


def dump(root: Path, out: Path, cache: bool = False) -> int:
    from compare_routes import EXAMPLE_SUBJECTS, INDEPENDENT_SUBJECTS, all_locale_cases, rule_cases
    from guardlex import load_packs

    codes = sorted(p.name for p in root.iterdir() if p.is_dir())
    groups: list[tuple[str, list[str], tuple[str, ...], list[dict[str, Any]]]] = []
    by_locale: dict[str, list[dict[str, Any]]] = {}
    for c in rule_cases(codes, root):
        by_locale.setdefault(c["locale"], []).append(c)
    for code, cases in sorted(by_locale.items()):
        groups.append((f"examples/{code}", [code], EXAMPLE_SUBJECTS, cases))
    shared = all_locale_cases(codes) + blind_cases(codes)
    for subjects in (EXAMPLE_SUBJECTS, INDEPENDENT_SUBJECTS):
        groups.append(("shared", codes, subjects, [c for c in shared if c["names"] == subjects]))
    groups.append(("hundred", codes, tuple(HUNDRED), shared))
    n = 0
    t = time.perf_counter()
    with out.open("w", encoding="utf-8") as fh:
        for label, locs, names, cases in groups:
            packs = load_packs(locs, subject_names=names, paths=[root], shipped=False, cache=cache)
            for c in cases:
                try:
                    got: Any = packs.route(c["text"], c["previous"]).to_dict()
                except Exception as exc:  # an error is a result too
                    got = {"error": f"{type(exc).__name__}: {exc}"}
                key = [label, c["source"], c["text"], c["previous"]]
                fh.write(json.dumps([key, got], ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} routes written to {out} in {time.perf_counter() - t:.1f} s")
    return 0


def compare(a: Path, b: Path) -> int:
    def read(p: Path) -> dict[str, Any]:
        out = {}
        for line in p.read_text(encoding="utf-8").splitlines():
            key, got = json.loads(line)
            out[json.dumps(key, ensure_ascii=False)] = got
        return out

    old, new = read(a), read(b)
    common = old.keys() & new.keys()
    diffs = [k for k in sorted(common) if old[k] != new[k]]
    for k in diffs[:50]:
        print(f"DIFF {k}\n  before {old[k]}\n  after  {new[k]}")
    print(
        f"{len(common)} texts in both ({len(old)} before, {len(new)} after): "
        f"{len(common) - len(diffs)} identical, {len(diffs)} different"
    )
    return 1 if diffs else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="pack directory (a snapshot of the packs)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument(
        "--cache",
        action="store_true",
        help="load through a fresh pack cache (the first load of a locale compiles and "
        "stores it, later ones read the stored program), to check the stored form too",
    )
    ap.add_argument("out", nargs="?", type=Path)
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.root is None or args.out is None:
        ap.error("give --root PACKS OUT, or --compare BEFORE AFTER")
    if args.cache:
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            os.environ["GUARDLEX_CACHE_DIR"] = tmp
            return dump(args.root, args.out, cache=True)
    return dump(args.root, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
