"""How big each locale's rule data is, against the issue's size target.

Run: ``python tools/pack_size.py [--json]``

The target (issue "Ten packs that generalise"): a locale's ``refusal.yaml`` and
``concepts.yaml`` together, examples included, at most a third of its 0.1.0
``refusal.yaml``. Both measures are printed, lines and bytes, because they disagree:
rule-language-2 packs write alternatives on long lines, so a file can be a third of the
0.1.0 file in lines and larger than it in bytes. ``BASELINE`` holds the 0.1.0 file's
lines and bytes per locale (read from the repository's history at a6ba250, the last
commit before the rewrite; the history is not shipped, so the figures are written here).
Exit status 0: the script reports, it does not judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "src" / "guardlex" / "locales"

#: 0.1.0 ``refusal.yaml`` per locale: (lines, bytes)
BASELINE = {
    "ar": (2871, 102078),
    "de": (2994, 93409),
    "en": (1406, 114179),
    "es": (3118, 94894),
    "fa": (1165, 134547),
    "fr": (3342, 102125),
    "hi": (1941, 91545),
    "pt": (3450, 101341),
    "ru": (2205, 93539),
    "zh": (2119, 59637),
}


def measure(code: str) -> dict[str, int | float]:
    """Lines and bytes of the locale's refusal and concept files, and their ratio to
    the 0.1.0 refusal file."""
    lines = size = 0
    for name in ("refusal.yaml", "concepts.yaml"):
        path = LOCALES / code / name
        if path.is_file():
            data = path.read_bytes()
            size += len(data)
            lines += data.count(b"\n")
    old_lines, old_bytes = BASELINE[code]
    return {
        "lines": lines,
        "bytes": size,
        "lines_ratio": round(lines / old_lines, 3),
        "bytes_ratio": round(size / old_bytes, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    report = {code: measure(code) for code in sorted(BASELINE) if (LOCALES / code).is_dir()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("locale | lines (x 0.1.0) | bytes (x 0.1.0) | target: <= 0.333 of 0.1.0")
    for code, m in report.items():
        ok_l = "ok" if m["lines_ratio"] <= 1 / 3 else "over"
        ok_b = "ok" if m["bytes_ratio"] <= 1 / 3 else "over"
        print(
            f"{code} | {m['lines']:,} ({m['lines_ratio']:.2f}, {ok_l}) | "
            f"{m['bytes']:,} ({m['bytes_ratio']:.2f}, {ok_b})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
