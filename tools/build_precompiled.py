"""Write the compiled programs of the shipped locales (``guardlex/rules/precompiled``).

Run: ``python tools/build_precompiled.py`` after changing a shipped pack or the compiler,
before a release; ``--check`` only reports (exit 1) which programs are missing or stale.

A first start with an empty user cache then reads these files instead of compiling the
packs. The normaliser's snapshot of tables (``guardlex/normalise/data/
unicode_tables.marshal``, ``guardlex.normalise._snapshot``) is written first, the same
way. ``load_packs`` uses a program only when its header names the SHA-256 of the pack
files being loaded and the stamp of the code that compiles them
(``guardlex.rules.cache.load_precompiled``); a stale one is ignored, never trusted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from guardlex.normalise import _snapshot as snapshot
from guardlex.rules import compile_locale
from guardlex.rules.cache import PRECOMPILED_DIR, load_precompiled, write_precompiled
from guardlex.rules.loader import SHIPPED_DIR, discover, load_locale, source_digest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report missing or stale files")
    ap.add_argument("--out", type=Path, default=PRECOMPILED_DIR, help="target folder")
    ap.add_argument("locales", nargs="*", help="default: every shipped locale")
    args = ap.parse_args(argv)
    found = discover(entry_points=False)
    codes = args.locales or sorted(found)
    stale = []
    if args.out == PRECOMPILED_DIR:  # the normaliser's tables (guardlex.normalise._snapshot)
        if snapshot.current():
            print(f"{snapshot.SNAPSHOT.name}: up to date")
        elif args.check:
            print(f"{snapshot.SNAPSHOT.name}: missing or stale")
            stale.append(snapshot.SNAPSHOT.name)
        else:
            t = time.perf_counter()
            path = snapshot.write()
            print(
                f"{path.name}: written ({path.stat().st_size:,} bytes, "
                f"{time.perf_counter() - t:.2f} s)"
            )
    for code in codes:
        folders = [SHIPPED_DIR / code]
        digest = source_digest(folders)
        if load_precompiled(code, digest, args.out) is not None:
            print(f"{code}: up to date")
            continue
        if args.check:
            print(f"{code}: missing or stale")
            stale.append(code)
            continue
        t = time.perf_counter()
        payload = compile_locale(load_locale(code, folders))
        path = write_precompiled(code, digest, payload, args.out)
        print(
            f"{code}: written {path.name} ({path.stat().st_size:,} bytes, "
            f"{time.perf_counter() - t:.2f} s)"
        )
    # programs of locales that are no longer shipped
    for path in sorted(args.out.glob("*.program")):
        if path.stem not in found:
            print(f"{path.stem}: no such shipped locale; remove {path}")
            stale.append(path.stem)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
