"""`guardlex new-locale CODE [--dir DIR]`: scaffold a complete locale folder."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "new-locale",
        help="create a complete, commented locale folder to fill in",
        description=(
            "Write DIR/CODE/ with every pack file (locale.yaml, concepts.yaml, refusal.yaml, "
            "overview.yaml, first_person.yaml, lexicon.yaml, messages.yaml, stopwords.yaml), "
            "commented and with schema headers. The folder loads and lints clean; "
            "docs/packs.md says how to fill it in."
        ),
    )
    p.add_argument("code", metavar="CODE", help="the locale code, e.g. tt, fil or pt-BR")
    p.add_argument(
        "--dir", default=".", metavar="DIR", help="pack directory to create CODE/ in (default: .)"
    )
    p.add_argument("--name", help="the locale's name in English (default: CODE)")
    p.add_argument(
        "--script",
        action="append",
        metavar="ISO15924",
        help="a script the locale is written in, e.g. Latn, Cyrl, Arab (repeatable; default: Latn)",
    )
    p.add_argument("--direction", choices=("ltr", "rtl"), default="ltr")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from guardlex.rules.scaffold import new_locale

    folder = new_locale(
        args.code,
        args.dir,
        name=args.name,
        scripts=tuple(args.script or ("Latn",)),
        direction=args.direction,
    )
    print(f"created {folder}; fill it in (docs/packs.md), then: guardlex lint {folder}")
    return 0
