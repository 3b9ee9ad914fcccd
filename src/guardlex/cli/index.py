"""`guardlex index PATH`: build a store from a folder of Markdown or YAML documents."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "index",
        help="build a store from your own Markdown or YAML documents",
        description=(
            "Read a folder of Markdown (.md) or YAML (.yaml, .yml) documents, split them "
            "into chunks on headings and paragraphs, embed them and write a SQLite store "
            "for `guardlex ask --store`. The format is described in docs/corpus.md."
        ),
    )
    p.add_argument("path", metavar="PATH", help="folder (or single file) of documents")
    p.add_argument(
        "--store",
        "-o",
        default="guardlex-store.sqlite",
        help="store file to write (default: %(default)s; replaced atomically)",
    )
    p.add_argument(
        "--locale",
        default="en",
        help="locale of documents that do not state one (default: %(default)s)",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="embedding model: hashing-bow-256 (default, deterministic) or "
        "all-MiniLM-L6-v2 (needs guardlex[sentence])",
    )
    p.add_argument(
        "--owner",
        action="append",
        default=[],
        help="a name of the person or company the site is about (repeatable); "
        "used for {subject} in refusal rules and for ordering",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import build_store
    from guardlex.runner.corpus import Site, load_folder
    from guardlex.runner.embeddings import DEFAULT_EMBEDDER, check_embedder_name
    from guardlex.runner.progress import ProgressBar

    if args.embedder is not None:
        args.embedder = check_embedder_name(args.embedder)
    bar = ProgressBar("reading", enabled=not args.quiet)
    site = load_folder(
        Path(args.path),
        default_locale=args.locale,
        progress=lambda n, total, path: bar.update(n, total, path),
    )
    if args.owner:
        owners = {loc: tuple(args.owner) for loc in site.locales}
        for loc, names in site.owner_names.items():
            owners[loc] = tuple(dict.fromkeys([*args.owner, *names]))
        site = Site(site.chunks, site.records, owners)
    bar2 = ProgressBar("indexing", enabled=not args.quiet)
    store = build_store(
        site,
        args.store,
        args.embedder or DEFAULT_EMBEDDER,
        progress=lambda n, total: bar2.update(n, total),
    )
    print(
        f"{args.store}: {store.chunk_count()} chunks in {len(site.locales)} locale(s), "
        f"{len(site.records)} records, embedder {store.embedder_name}",
        file=sys.stdout,
    )
    return 0
