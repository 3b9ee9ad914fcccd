"""`guardlex first-person TEXT`: the first first-person word in a text, if any."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "first-person",
        help="find a first-person word (I, we, my...) in a text",
        description="Exit status 0 when no first-person word is found, 1 when one is.",
    )
    p.add_argument("text", help="the text to check")
    p.add_argument(
        "--locale",
        metavar="CODE",
        help="check only this locale's lexicon (default: detected from the text)",
    )
    p.add_argument("--json", action="store_true", help="print the hit as JSON (null if none)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json

    from guardlex.rules import load_packs

    packs = load_packs()
    hit = packs.first_person(args.text, locale=args.locale)
    if args.json:
        print(json.dumps(hit.to_dict() if hit else None, ensure_ascii=False))
    elif hit is None:
        print("no first-person word")
    else:
        print(f"{hit.word!r} ({hit.locale}) at {hit.span[0]}:{hit.span[1]}")
    return 1 if hit else 0
