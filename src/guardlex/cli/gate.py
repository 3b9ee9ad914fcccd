"""`guardlex gate`: stream an answer through the sentence gate and print what a reader sees."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guardlex.errors import GuardlexError

EPILOG = """\
exit status: 0 every sentence was released; 1 the gate stopped the answer or it was cut
off mid-sentence; 2 a usage error (missing file, unknown locale).

example:
  guardlex gate --sources policy.txt -- "The standard plan includes 20 seats [1]."
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg, unused-ignore]
    p = sub.add_parser(
        "gate",
        help="stream an answer through the sentence gate and print what a reader sees",
        description=(
            "Stream TEXT through the sentence gate against the numbered sources ([1] is the "
            "first --sources file) and print the released sentences, markers stripped, "
            "followed by the fixed stop or truncation message when there is one."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--sources",
        nargs="+",
        required=True,
        metavar="FILE",
        help="source files (UTF-8), cited in the answer as [1], [2] ... in this order",
    )
    p.add_argument(
        "text",
        nargs="?",
        default="-",
        metavar="TEXT|-",
        help="the answer to gate; '-' or nothing reads standard input",
    )
    p.add_argument("--json", action="store_true", help="print the events and outcome as JSON")
    p.add_argument(
        "--locale",
        help="the reader's locale (first-person list and messages); default: detected",
    )
    p.add_argument(
        "--min-words",
        type=int,
        default=None,
        metavar="N",
        help="sentences of at least N words need a marker (default: 6)",
    )
    p.add_argument(
        "--no-faithful",
        action="store_true",
        help="only the four string checks; skip the unit, polarity and unlimited audit",
    )
    p.add_argument(
        "--subject",
        action="append",
        default=[],
        metavar="NAME",
        help="a plan, product or person name for the subject check (repeatable)",
    )
    p.add_argument(
        "--chunk-size",
        type=int,
        default=0,
        metavar="N",
        help="feed the text in chunks of N characters, as a model would stream it (default: whole)",
    )
    p.add_argument(
        "--packs",
        action="append",
        default=[],
        metavar="DIR",
        help="an extra pack directory merged over the shipped packs (repeatable)",
    )
    p.set_defaults(func=_run)


def read_text_file(path: str, what: str) -> str:
    """Read a UTF-8 file or raise a one-line ``GuardlexError``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GuardlexError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise GuardlexError(f"{what} is a directory, not a file: {path}") from None
    except UnicodeDecodeError:
        raise GuardlexError(f"{what} is not UTF-8 text: {path}") from None
    except OSError as exc:
        raise GuardlexError(f"cannot read {what} {path}: {exc.strerror}") from None


def read_text_arg(value: str, what: str) -> str:
    """The argument itself, or standard input for ``-``."""
    if value != "-":
        return value
    if sys.stdin.isatty():
        raise GuardlexError(f"no {what}: pass it as an argument or pipe it into standard input")
    return sys.stdin.read()


def _run(args: argparse.Namespace) -> int:
    from guardlex import load_packs
    from guardlex.gates import SentenceGate, Stopped, Truncated
    from guardlex.gates.sentence import MIN_WORDS

    sources = [read_text_file(path, "source file") for path in args.sources]
    text = read_text_arg(args.text, "answer text")
    if args.min_words is not None and args.min_words < 1:
        raise GuardlexError("--min-words must be at least 1")
    if args.chunk_size < 0:
        raise GuardlexError("--chunk-size must be 0 (whole text) or positive")
    packs = load_packs(paths=args.packs)
    gate = SentenceGate(
        sources,
        packs=packs,
        locale=args.locale,
        min_words=args.min_words or MIN_WORDS,
        faithful=not args.no_faithful,
        subjects=args.subject,
    )
    size = args.chunk_size or max(1, len(text))
    chunks = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    events = list(gate.stream(chunks))
    outcome = "released"
    for event in events:
        if isinstance(event, Stopped):
            outcome = "stopped"
        elif isinstance(event, Truncated):
            outcome = "truncated"
    shown = "".join(getattr(e, "text", "") for e in events).strip()
    notice = next((e.message for e in events if isinstance(e, (Stopped, Truncated))), "")
    if args.json:
        report = {
            "outcome": outcome,
            "shown": shown,
            "notice": notice,
            "events": [e.to_dict() for e in events],
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        if shown:
            print(shown)
        if notice:
            print(notice)
    return 0 if outcome == "released" else 1
