"""`guardlex route TEXT`: where a question goes (refuse, overview or retrieve)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "route",
        help="route a question: refuse, overview or retrieve",
        description="Route a question with the locale packs (docs/packs.md).",
    )
    p.add_argument("text", nargs="?", help="the question (omit with --jsonl)")
    p.add_argument("--previous", metavar="TEXT", help="the previous question of the conversation")
    p.add_argument("--json", action="store_true", help="print the route as JSON")
    p.add_argument(
        "--explain",
        action="store_true",
        help="say in words why: the rule, what it is about, and each item that matched",
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help='batch mode: read {"text": ..., "previous": ...} per line on stdin, '
        "write one JSON route per line",
    )
    p.add_argument(
        "--locale",
        action="append",
        metavar="CODE",
        help="load only this locale (repeatable; default: all)",
    )
    p.add_argument(
        "--subject",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the subject is referred to by (repeatable; default: the example "
        "subject of the shipped locales' locale.yaml, Dana Reyes in every script, the "
        "names the packs' own examples use)",
    )
    p.add_argument(
        "--no-subject",
        action="store_true",
        help="route with no subject names at all (a name in the question is then just a name)",
    )
    p.add_argument(
        "--packs", action="append", default=[], metavar="DIR", help="extra pack directory"
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    import sys

    from guardlex.errors import GuardlexError
    from guardlex.rules import load_packs

    if args.jsonl and (args.text is not None or args.previous is not None):
        raise GuardlexError("--jsonl reads every question from stdin: drop TEXT and --previous")
    if not args.jsonl:
        if args.text is None:
            raise GuardlexError("give the question as TEXT, or use --jsonl to read from stdin")
        if not args.text.strip():
            raise GuardlexError("the question is empty")
    if args.no_subject and args.subject:
        raise GuardlexError("--no-subject and --subject contradict each other: give one")
    names = args.subject
    if not names and not args.no_subject:
        from guardlex.rules.lint import example_subject_names

        names = list(example_subject_names())
    packs = load_packs(args.locale, subject_names=names, paths=args.packs)
    if args.jsonl:
        # exactly one JSON line out per line in, so a caller can zip input and output;
        # a blank or malformed line gets an {"error": ...} object and exit status 1
        status = 0
        for lineno, line in enumerate(sys.stdin, 1):
            try:
                if not line.strip():
                    raise ValueError("empty line")
                item = json.loads(line)
                if isinstance(item, str):
                    item = {"text": item}
                if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                    raise ValueError('expected {"text": "...", "previous": "..."}')
                previous = item.get("previous")
                if previous is not None and not isinstance(previous, str):
                    raise ValueError('"previous" must be a string or null')
                out = packs.route(item["text"], previous).to_dict()
            except (ValueError, TypeError, GuardlexError) as exc:
                out = {"error": f"line {lineno}: {exc}"}
                status = 1
            print(json.dumps(out, ensure_ascii=False), flush=False)
        return status
    route = packs.route(args.text, args.previous)
    if args.json:
        print(json.dumps(route.to_dict(), ensure_ascii=False))
    else:
        parts = [route.kind]
        for name in ("category", "topic", "locale", "rule_id"):
            value = getattr(route, name)
            if value:
                parts.append(f"{name}={value}")
        if route.span:
            s, e = route.span
            parts.append(f"span={s}:{e} {args.text[s:e]!r}")
        print(" ".join(parts))
        if args.explain:
            print(explain(route, previous=args.previous is not None))
    return 0


_EVIDENCE = {
    "template": "the template matched",
    "regex": "the rule's regular expression matched",
    "subject": "it refers to the subject",
    "number": "a number",
}


def explain(route: object, previous: bool = False) -> str:
    """A route in words: why the question goes where it goes (``previous``: the question
    came with a previous one, so a match outside it was inherited)."""
    kind = getattr(route, "kind", "")
    if kind == "retrieve":
        return "No refusal or overview rule matched: the question is answered from the site."
    rule = getattr(route, "rule_id", None)
    locale = getattr(route, "locale", None)
    if rule == "guardlex-regex-timeout":
        return "A rule took too long on this question, so it is refused to be safe."
    what = (
        f"refused as {route.category}"  # type: ignore[attr-defined]
        if kind == "refuse"
        else f"routed to the overview of {route.topic}"  # type: ignore[attr-defined]
    )
    lines = [f"The question is {what} by rule {rule!r} ({locale})."]
    about = getattr(route, "about", None)
    if about:
        lines.append(f"The rule: {about}")
    for ev in getattr(route, "evidence", ()):
        label = _EVIDENCE.get(ev.concept, f"concept <{ev.concept}>")
        elsewhere = " in the previous question" if previous else " in a reading of the question"
        where = f" at {ev.span[0]}:{ev.span[1]}" if ev.span else elsewhere
        lines.append(f"  - {label}: {ev.text!r}{where}")
    if getattr(route, "span", "x") is None and previous:
        lines.append("  (a short follow-up: it inherits the refusal of the previous question)")
    elif getattr(route, "span", "x") is None:
        lines.append(
            "  (found in a disguised reading of the question: spaced or doubled letters,"
            " digits or symbols for letters, joined words)"
        )
    return "\n".join(lines)
