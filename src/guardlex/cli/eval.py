"""`guardlex eval` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="(not yet implemented)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    raise SystemExit("guardlex eval: not implemented yet")
