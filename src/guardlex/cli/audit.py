"""`guardlex audit`: the faithfulness checks (audit an answer, accept a field, resolve a field)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from datetime import date
from typing import Any

from guardlex.cli.gate import read_text_arg, read_text_file
from guardlex.errors import GuardlexError

EPILOG = """\
three modes:
  audit an answer    guardlex audit --quote "Extra seats cost 8 per seat per month." \\
                                    --answer "Extra seats cost 8 per person per day."
  resolve a field    guardlex audit --field seats_included --evidence docs.json [--facts facts.json]
                                    [--subject Standard] [--now 2025-01-01]
  a JSON request     guardlex audit --input request.json
                     {"answer": ..., "quotes": [...], "computed": {"24": "3 * 8"}}   audit
                     {"field": ..., "evidence": [{doc, version?, effective?, expiry?, text}],
                      "facts"?: [{field, value, quote, doc}], "now"?: "YYYY-MM-DD",
                      "subject"?: ...}                                            resolve
                     {"field": ..., "value": ..., "quote": ..., "evidence": "text",
                      "subject"?: ...}                                            accept

exit status: 0 no violation / status OK / field accepted; 1 otherwise; 2 usage error.
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg, unused-ignore]
    p = sub.add_parser(
        "audit",
        help="faithfulness checks: audit an answer against quotes, or resolve a field",
        description=(
            "Check an answer against the exact quotes it rests on (numbers, units, polarity, "
            "'unlimited', computed numbers), or resolve one field over versioned evidence."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--answer",
        metavar="TEXT|-",
        help="the answer to audit ('-' reads standard input)",
    )
    p.add_argument(
        "--quote",
        action="append",
        default=[],
        metavar="TEXT",
        help="a quote the answer rests on (repeatable)",
    )
    p.add_argument(
        "--quotes-file",
        action="append",
        default=[],
        metavar="FILE",
        help="a UTF-8 file whose every non-empty line is one quote (repeatable)",
    )
    p.add_argument(
        "--computed",
        action="append",
        default=[],
        metavar="VALUE=FORMULA",
        help="a number the program computed and its formula, e.g. '24=3*8' (repeatable)",
    )
    p.add_argument(
        "--subject",
        action="append",
        default=[],
        metavar="NAME",
        help="a plan, product or person name: the subject check of --answer (repeatable), "
        "or the subject whose value --field resolves",
    )
    p.add_argument("--field", help="resolve this field over --evidence")
    p.add_argument(
        "--evidence",
        metavar="FILE",
        help="JSON list of documents {doc, version?, effective?, expiry?, text}",
    )
    p.add_argument(
        "--facts",
        metavar="FILE",
        help="JSON list of facts {field, value, quote, doc}; default: the rule-based extractor",
    )
    p.add_argument(
        "--now",
        metavar="YYYY-MM-DD",
        help="the date documents must be in force on (default: today)",
    )
    p.add_argument("--input", metavar="FILE|-", help="a JSON request (see below)")
    p.add_argument("--locale", help="use only this locale's unit and polarity words")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--packs",
        action="append",
        default=[],
        metavar="DIR",
        help="an extra pack directory merged over the shipped packs (repeatable)",
    )
    p.set_defaults(func=_run)


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GuardlexError(f"{what} is not valid JSON (line {exc.lineno}): {exc.msg}") from None


def _parse_date(value: Any) -> date | None:
    if value in (None, ""):
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise GuardlexError(f"not a date (YYYY-MM-DD): {value}") from None


def _computed(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        value, sep, formula = item.partition("=")
        if not sep or not value.strip() or not formula.strip():
            raise GuardlexError(f"--computed needs VALUE=FORMULA, got {item!r}")
        out[value.strip()] = formula.strip()
    return out


def _run(args: argparse.Namespace) -> int:
    from guardlex import load_packs

    packs = load_packs(paths=args.packs)
    if args.input:
        source = "standard input" if args.input == "-" else args.input
        raw = (
            read_text_arg("-", "JSON request")
            if args.input == "-"
            else read_text_file(args.input, "input file")
        )
        request = _load_json(raw, source)
        if not isinstance(request, Mapping):
            raise GuardlexError(f"{source}: the request must be a JSON object")
        return _dispatch(request, args, packs)
    if args.field:
        if not args.evidence:
            raise GuardlexError("--field needs --evidence FILE (a JSON list of documents)")
        resolve_request: dict[str, Any] = {
            "field": args.field,
            "evidence": _load_json(read_text_file(args.evidence, "evidence file"), args.evidence),
            "now": args.now,
        }
        if args.facts:
            resolve_request["facts"] = _load_json(
                read_text_file(args.facts, "facts file"), args.facts
            )
        return _dispatch(resolve_request, args, packs)
    if args.answer is None:
        raise GuardlexError("nothing to audit: give --answer with --quote, or --field, or --input")
    quotes = list(args.quote)
    for path in args.quotes_file:
        quotes.extend(
            line.strip()
            for line in read_text_file(path, "quotes file").splitlines()
            if line.strip()
        )
    if not quotes:
        raise GuardlexError("--answer needs at least one --quote or --quotes-file")
    audit_request = {
        "answer": read_text_arg(args.answer, "answer"),
        "quotes": quotes,
        "computed": _computed(args.computed),
        "subjects": args.subject,
    }
    return _dispatch(audit_request, args, packs)


def _dispatch(request: Mapping[str, Any], args: argparse.Namespace, packs: Any) -> int:
    """Run the request; a wrongly typed value in a JSON request is a usage error."""
    if "field" in request and "quote" in request and "value" not in request:
        raise GuardlexError(
            "'value' is missing: give the extracted value (null when the quote says the "
            'slot has no number, "unlimited" for an unlimited count, true/false for a polarity)'
        )
    try:
        return _run_request(request, args, packs)
    except TypeError as exc:
        raise GuardlexError(f"bad request: {exc}") from None


def _run_request(request: Mapping[str, Any], args: argparse.Namespace, packs: Any) -> int:
    from guardlex.gates import accept, audit, resolve

    locale = request.get("locale") or args.locale
    if "answer" in request:
        quotes = request.get("quotes")
        if not isinstance(quotes, list) or not all(isinstance(q, str) for q in quotes):
            raise GuardlexError("'quotes' must be a list of strings")
        computed = request.get("computed") or {}
        if not isinstance(computed, Mapping):
            raise GuardlexError("'computed' must map a value to its formula")
        violations = audit(
            str(request["answer"]),
            quotes,
            locale,
            computed={str(k): str(v) for k, v in computed.items()},
            subjects=list(request.get("subjects") or args.subject),
            packs=packs,
        )
        if args.json:
            out = {"ok": not violations, "violations": [v.to_dict() for v in violations]}
            print(json.dumps(out, ensure_ascii=False, indent=2))
        elif violations:
            for v in violations:
                print(f"{v.code}: {v.token}" + (f" ({v.detail})" if v.detail else ""))
        else:
            print("ok: no violation found")
        return 1 if violations else 0
    if "field" in request and isinstance(request.get("evidence"), list):
        now = _parse_date(request.get("now") or args.now)
        subject = request.get("subject") or (args.subject[0] if args.subject else None)
        result = resolve(
            str(request["field"]),
            request.get("facts"),
            request["evidence"],
            now=now,
            subject=subject,
            packs=packs,
        )
        if args.json:
            print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str))
        else:
            shown = result.value if result.status == "OK" else ", ".join(map(str, result.values))
            print(f"{result.status}" + (f": {shown}" if shown not in (None, "") else ""))
        return 0 if result.status == "OK" else 1
    if "field" in request and "quote" in request:
        field_result = accept(
            str(request["field"]),
            request.get("value"),
            str(request["quote"]),
            str(request.get("evidence") or ""),
            request.get("subject"),
            packs=packs,
        )
        if args.json:
            print(json.dumps(field_result.to_dict(), ensure_ascii=False, indent=2))
        else:
            print("accepted" if field_result.ok else f"rejected: {field_result.reason}")
        return 0 if field_result.ok else 1
    raise GuardlexError(
        "the request needs 'answer' and 'quotes' (audit), 'field' and an 'evidence' list "
        "(resolve), or 'field', 'value', 'quote' and 'evidence' text (accept)"
    )
