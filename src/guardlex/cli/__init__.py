"""The ``guardlex`` command. Each subcommand lives in its own module of this package.

A module listed in ``COMMANDS`` exposes ``register(subparsers)``, which adds its parser
and sets ``func`` (called with the parsed namespace, returning the exit status).
Heavy imports happen inside ``func`` so that ``guardlex --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from guardlex import __version__
from guardlex.errors import GuardlexError

COMMANDS = (
    "normalise",
    "route",
    "first_person",
    "lint",
    "new_locale",
    "gate",
    "audit",
    "index",
    "ask",
    "eval",
    "calibrate",
    "serve",
)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line on stderr and exit status 2.

    argparse prints the whole usage before the error; the subcommands' parsers are of
    this class too (``add_subparsers`` uses the parent's class), so every usage mistake
    reads ``guardlex CMD: error: ... (see guardlex CMD --help)``.
    """

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {line} (see {self.prog} --help)\n")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="guardlex",
        description="Multilingual refusal rules, normalisation and output gates for RAG.",
    )
    parser.add_argument("--version", action="version", version=f"guardlex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"guardlex.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except GuardlexError as exc:
        print(f"guardlex: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file the command was told to read or write
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"guardlex: error: {where}{exc.strerror or _one_line(exc)}", file=sys.stderr)
        return 2
    except UnicodeError as exc:  # an input that is not UTF-8 text
        print(f"guardlex: error: input is not UTF-8 text: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
