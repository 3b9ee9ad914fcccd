"""Route every test text with the 0.1.0 engine and the current one, and diff the routes.

Run: ``python tools/compare_routes.py [--out report.txt] [--locales en fr]``

Texts: every rule example (``match`` and ``no_match``, with only the rule's locale
loaded, as ``tests/test_locale_data.py`` does), every routing case
(``tests/data/routing``), every independent case (``tests/data/independent``) and the
golden set's routing texts (``guardlex/corpus/golden``), the last three with all locales
loaded. The 0.1.0 engine is the frozen copy in ``benchmarks/_legacy_engine``; both read
the same shipped packs (v1, or v2 converted mechanically).

A route is (kind, category, topic). Each difference is classified against the case's
expectation where it has one: ``improvement`` (new right, old wrong), ``regression``
(old right, new wrong), ``changed`` (no expectation, or both wrong, or both right).
Exit status 1 when there is a regression.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import _legacy_engine as legacy  # noqa: E402
from guardlex import load_packs  # noqa: E402
from guardlex.rules.loader import SHIPPED_DIR, discover, load_locale  # noqa: E402

EXAMPLE_SUBJECTS = (
    "Dana Reyes",
    "دانا ریس",
    "دانا رییس",
    "Дана Рейес",
    "दाना रेयेस",
    "डाना रेयेस",
    "达娜·雷耶斯",
    "达娜",
)
INDEPENDENT_SUBJECTS = (
    "Dana Reyes",
    "دانا ریس",
    "دانا رييس",
    "Дана Рейес",
    "दाना रेयेस",
    "达娜·雷耶斯",
)

Case = dict[str, Any]  # source, locale, text, previous, expect (kind, category, topic)|None


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _expect(case: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    kind = case.get("expect")
    if kind is None:
        return None
    return (kind, case.get("category"), case.get("topic"))


def rule_cases(codes: list[str], root: Path) -> list[Case]:
    found = discover([root], entry_points=False, shipped=False)
    out: list[Case] = []
    for code in codes:
        data = load_locale(code, found[code])
        for r in data.rules:
            want = "refuse" if r.section == "refusal" else "overview"
            for t in r.match:
                out.append(
                    {
                        "source": f"{code}/{r.section}/{r.id}/match",
                        "locale": code,
                        "text": t,
                        "previous": None,
                        "expect": (want, r.category, None),
                    }
                )
            for t in r.no_match:
                out.append(
                    {
                        "source": f"{code}/{r.section}/{r.id}/no_match",
                        "locale": code,
                        "text": t,
                        "previous": None,
                        "expect": None,
                    }
                )
    return out


def all_locale_cases(codes: list[str]) -> list[Case]:
    out: list[Case] = []
    for path in sorted((ROOT / "tests" / "data" / "routing").glob("*.yaml")):
        if path.stem not in codes:
            continue
        for i, c in enumerate(_yaml(path).get("cases") or []):
            out.append(
                {
                    "source": f"routing/{path.stem}/{i}",
                    "locale": path.stem,
                    "text": c["text"],
                    "previous": c.get("previous"),
                    "expect": _expect(c),
                    "names": EXAMPLE_SUBJECTS,
                }
            )
    indep = ROOT / "tests" / "data" / "independent"
    for path in sorted(indep.glob("*.yaml")):
        if path.stem in ("first_person", "known_failures"):
            continue
        doc = _yaml(path)
        code = doc.get("locale", path.stem)
        if code not in codes:
            continue
        for i, c in enumerate(doc.get("cases") or []):
            out.append(
                {
                    "source": f"independent/{code}/{i}",
                    "locale": code,
                    "text": c["text"],
                    "previous": c.get("previous"),
                    "expect": _expect(c),
                    "names": INDEPENDENT_SUBJECTS,
                }
            )
    golden = ROOT / "src" / "guardlex" / "corpus" / "golden"
    kinds = {
        "answerable": "retrieve",
        "no_evidence": "retrieve",
        "overview": "overview",
        "refusals": "refuse",
    }
    for name, kind in kinds.items():
        for i, c in enumerate(_yaml(golden / f"{name}.yaml").get("cases") or []):
            if c.get("locale") not in codes:
                continue
            out.append(
                {
                    "source": f"golden/{name}/{c.get('locale')}/{i}",
                    "locale": c.get("locale"),
                    "text": c["text"],
                    "previous": c.get("previous"),
                    "expect": (kind, c.get("category"), c.get("topic")),
                    "names": INDEPENDENT_SUBJECTS,
                }
            )
    return out


def _key(route: Any) -> tuple[str, str | None, str | None]:
    return (route.kind, route.category, route.topic)


def _ok(got: tuple[str, str | None, str | None], want: Any) -> bool:
    if want is None:
        return True
    kind, category, topic = want
    if got[0] != kind:
        return False
    if category and got[1] != category:
        return False
    return not (topic and got[2] != topic)


def compare(
    codes: list[str], root: Path = SHIPPED_DIR, old_root: Path | None = None
) -> tuple[list[tuple[str, Case, Any, Any]], int]:
    diffs: list[tuple[str, Case, Any, Any]] = []
    n = 0
    by_locale: dict[str, list[Case]] = {}
    for c in rule_cases(codes, root):
        by_locale.setdefault(c["locale"], []).append(c)
    groups: list[tuple[list[str], tuple[str, ...], list[Case]]] = [
        ([code], EXAMPLE_SUBJECTS, cases) for code, cases in by_locale.items()
    ]
    shared = all_locale_cases(codes)
    for names in (EXAMPLE_SUBJECTS, INDEPENDENT_SUBJECTS):
        groups.append((codes, names, [c for c in shared if c["names"] == names]))
    for locs, names, cases in groups:
        old = legacy.load_packs(locs, subject_names=names, root=old_root or root)
        new = load_packs(locs, subject_names=names, paths=[root], cache=False, shipped=False)
        for c in cases:
            n += 1
            a = _key(old.route(c["text"], c["previous"]))
            b = _key(new.route(c["text"], c["previous"]))
            if a == b:
                continue
            want = c["expect"]
            if want is None or _ok(a, want) == _ok(b, want):
                label = "changed"
            elif _ok(b, want):
                label = "improvement"
            else:
                label = "regression"
            diffs.append((label, c, a, b))
    return diffs, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locales", nargs="*", help="default: every shipped locale")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--root", type=Path, default=SHIPPED_DIR, help="pack directory to read")
    ap.add_argument(
        "--old-root",
        type=Path,
        help="packs for the 0.1.0 engine (default: --root), e.g. an export of the v1 packs",
    )
    args = ap.parse_args(argv)
    codes = args.locales or sorted(p.name for p in args.root.iterdir() if p.is_dir())
    diffs, n = compare(codes, args.root, args.old_root)
    counts = Counter(label for label, *_ in diffs)
    lines = [
        f"{n} texts routed by the 0.1.0 engine and the current engine; "
        f"{n - len(diffs)} identical; "
        + ", ".join(f"{k}: {counts.get(k, 0)}" for k in ("regression", "improvement", "changed"))
    ]
    for label, c, a, b in sorted(diffs, key=lambda d: (d[0], d[1]["source"])):
        prev = f" (previous {c['previous']!r})" if c["previous"] else ""
        want = f" expected {c['expect']}" if c["expect"] else ""
        lines.append(f"{label:11} {c['source']}: {c['text']!r}{prev}: {a} -> {b}{want}")
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n", encoding="utf-8")
    return 1 if counts.get("regression") else 0


if __name__ == "__main__":
    raise SystemExit(main())
