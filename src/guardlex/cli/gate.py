"""`guardlex gate`: stream an answer through the sentence gate and print what a reader sees."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guardlex.errors import GuardlexError

EPILOG = """\
the answer (TEXT) can follow the source files directly, follow '--', come first, or be
piped in: the last word after --sources is read as the answer when it is not an existing
file and does not look like a file name (no spaces, with an extension or a '/').

exit status: 0 every sentence was released; 1 the gate stopped the answer or it was cut
off mid-sentence; 2 a usage error (missing source file, unknown locale, bad number).

examples:
  guardlex gate --sources a.txt b.txt "The standard plan includes 20 seats [1]."
  guardlex gate --sources a.txt -- "The standard plan includes 20 seats [1]."
  guardlex gate "The standard plan includes 20 seats [1]." --sources a.txt
  echo "The standard plan includes 20 seats [1]." | guardlex gate --sources a.txt
  guardlex gate --sources a.txt --sources b.txt --json --chunk-size 4 < answer.txt
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
        action="extend",
        required=True,
        metavar="FILE",
        help=(
            "source files (UTF-8), cited in the answer as [1], [2] ... in this order; "
            "repeatable (--sources a.txt --sources b.txt)"
        ),
    )
    p.add_argument(
        "text",
        nargs="?",
        default=None,
        metavar="TEXT|-",
        help=(
            "the answer to gate, with its citation markers; '-' or nothing reads standard "
            "input (see below for where it may stand)"
        ),
    )
    p.add_argument("--json", action="store_true", help="print the events and outcome as JSON")
    p.add_argument(
        "--locale",
        help=(
            "the reader's locale (first-person list and messages); default: detected on the answer"
        ),
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
        help="only the string checks; skip the unit, polarity, unlimited and subject audit",
    )
    p.add_argument(
        "--no-forbidden",
        action="store_true",
        help="skip the forbidden-content check (a rate, e-mail or phone number of the subject)",
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


def _looks_like_path(word: str) -> bool:
    """A word that names a file rather than an answer: no spaces, and a '/' or an
    extension ("policy.txt"); "Yes." and "See [1]." are answers."""
    if not word or any(ch.isspace() for ch in word):
        return False
    if "/" in word or "\\" in word:
        return True
    stem, dot, ext = word.rpartition(".")
    return bool(stem and dot and ext and len(ext) <= 5 and ext.isascii() and ext.isalnum())


def split_sources(sources: list[str], text: str | None) -> tuple[list[str], str]:
    """The source files and the answer argument.

    ``--sources`` takes every word up to the next flag, so ``--sources a.txt b.txt TEXT``
    hands TEXT to it: when no answer was given separately, its last word is the answer
    if it is ``-`` or is neither an existing file nor file-like."""
    if text is not None or len(sources) < 2:
        return sources, "-" if text is None else text
    last = sources[-1]
    if last == "-" or (not Path(last).exists() and not _looks_like_path(last)):
        return sources[:-1], last
    return sources, "-"


def read_text_file(path: str, what: str) -> str:
    """Read a UTF-8 file or raise a one-line ``GuardlexError``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = " (to give the answer as text, put it after '--')" if what == "source file" else ""
        raise GuardlexError(f"{what} not found: {path}{hint}") from None
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

    paths, text_arg = split_sources(args.sources, args.text)
    sources = [read_text_file(path, "source file") for path in paths]
    text = read_text_arg(text_arg, "answer text")
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
        forbidden=not args.no_forbidden,
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
