"""`guardlex lint [PATH...]`: check locale packs and print findings for linguists."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "lint",
        help="check locale packs for linguists (schema, templates, concepts, examples, ...)",
        description=(
            "Check locale packs and print '[ERROR] path:line: message' findings. "
            "Exit status 1 when any error is found."
        ),
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="pack directory or locale folder (default: shipped packs and installed extensions)",
    )
    p.add_argument("--json", action="store_true", help="print findings as a JSON list")
    p.add_argument(
        "--packs",
        action="append",
        default=[],
        metavar="DIR",
        help="extra pack directory to lint (same as PATH; repeatable)",
    )
    p.add_argument(
        "--routing",
        metavar="DIR",
        help="routing cases (<code>.yaml) every rule should be hit by "
        "(default: tests/data/routing of a source checkout, for the shipped packs or a "
        "locale folder of them)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--no-warnings", action="store_true", help="print errors only")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    import sys

    from guardlex.rules.lint import lint, regex_count

    def progress(line: str) -> None:
        print(f"linting {line}", file=sys.stderr, flush=True)

    paths = [*args.paths, *args.packs]
    findings = lint(paths, progress=None if args.quiet else progress, routing_dir=args.routing)
    if args.no_warnings:
        findings = [f for f in findings if f.level == "ERROR"]
    errors = sum(1 for f in findings if f.level == "ERROR")
    warnings = len(findings) - errors
    if args.json:
        print(json.dumps([f.to_dict() for f in findings], ensure_ascii=False, indent=2))
    else:
        for f in findings:
            print(f)
        hatches = regex_count(paths)
        print(f"{errors} error(s), {warnings} warning(s), {hatches} regex escape hatch(es)")
    return 1 if errors else 0
