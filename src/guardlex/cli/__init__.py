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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
        print(f"guardlex: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
