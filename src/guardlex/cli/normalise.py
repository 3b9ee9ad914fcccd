"""`guardlex normalise`: print the normalised form of text, as every rule sees it."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator

_DESCRIPTION = """\
Print the normalised form of TEXT (docs/normalise.md), the form every rule, stopword list and
value check works on. Without TEXT, or with "-", read standard input and normalise
it line by line. Input bytes that are not valid UTF-8 are kept as lone surrogates
(errors="surrogateescape"), normalised like any other character, and written back as
the same bytes, so binary junk passes through instead of stopping the run."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "normalise",
        help="print text as the rules see it (normalised)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "text",
        nargs="?",
        default="-",
        metavar="TEXT",
        help='text to normalise; omit it or give "-" to read standard input line by line',
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--explain",
        action="store_true",
        help="show every step that changed the text, with the text before and after it",
    )
    mode.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object per line: {"input", "text", "offsets"}, where '
        "offsets[i] is the index in the input of output character i",
    )
    p.set_defaults(func=_run)


def _lines(args: argparse.Namespace) -> Iterator[str]:
    if args.text != "-":
        yield args.text
        return
    stream = io.TextIOWrapper(
        sys.stdin.buffer, encoding="utf-8", errors="surrogateescape", newline=None
    )
    for line in stream:
        yield line.rstrip("\n")


def _run(args: argparse.Namespace) -> int:
    from guardlex.normalise import explain, normalise, normalise_with_offsets

    out = io.TextIOWrapper(
        sys.stdout.buffer, encoding="utf-8", errors="surrogateescape", line_buffering=True
    )
    try:
        for line in _lines(args):
            if args.json:
                n = normalise_with_offsets(line)
                record = {"input": line, "text": n.text, "offsets": list(n.offsets)}
                out.write(json.dumps(record, ensure_ascii=True) + "\n")
            elif args.explain:
                steps = explain(line)
                out.write(f"input: {line!r}\n")
                for step in steps:
                    out.write(f"  {step.name}: {step.before!r} -> {step.after!r}\n")
                final = steps[-1].after if steps else line
                out.write(f"output: {final!r}{'' if steps else ' (unchanged)'}\n")
            else:
                out.write(normalise(line) + "\n")
    finally:
        try:
            out.flush()
        finally:
            out.detach()
    return 0
