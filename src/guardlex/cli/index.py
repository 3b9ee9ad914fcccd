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
        help="store to write: a SQLite file (default: %(default)s; replaced atomically) or "
        "a postgresql://user@host/db URL (PostgreSQL + pgvector, the 'postgres' extra)",
    )
    p.add_argument(
        "--site",
        default=None,
        help="the site's name, shown by eval and ask (default: the folder's name)",
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
        "--subject",
        "--owner",
        dest="owner",
        action="append",
        default=[],
        help="a name of the person or company the site is about, in any script "
        "(repeatable); {subject} in refusal rules and ordering; kept in the store",
    )
    p.add_argument(
        "--embedder-url",
        default=None,
        help="base URL of an OpenAI-compatible endpoint for --embedder openai:<model> "
        "(e.g. http://127.0.0.1:8080/v1); kept in the store",
    )
    p.add_argument(
        "--embedder-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding that endpoint's key (its name is kept, never "
        "the key; default: %(default)s)",
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
    from guardlex.runner.errors import RunnerError
    from guardlex.runner.progress import ProgressBar

    if args.embedder is not None:
        args.embedder = check_embedder_name(args.embedder)

    def skipped(path: Path, reason: str) -> None:
        # links are never followed out of the folder: the operator hears of each one
        print(f"guardlex: warning: skipped {path}: {reason}", file=sys.stderr)

    bar = ProgressBar("reading", enabled=not args.quiet)
    site = load_folder(
        Path(args.path),
        default_locale=args.locale,
        progress=lambda n, total, path: bar.update(n, total, path),
        on_skip=skipped,
    )
    if args.owner:
        owners = {loc: tuple(args.owner) for loc in site.locales}
        for loc, names in site.owner_names.items():
            owners[loc] = tuple(dict.fromkeys([*args.owner, *names]))
        site = Site(site.chunks, site.records, owners)
    from guardlex.runner.site import index_meta, make_index_embedder

    embedder = make_index_embedder(
        args.embedder or DEFAULT_EMBEDDER, args.embedder_url, args.embedder_key_env, site
    )
    bar2 = ProgressBar("indexing", enabled=not args.quiet)
    try:
        store = build_store(
            site,
            args.store,
            embedder,
            progress=lambda n, total: bar2.update(n, total),
            meta=index_meta(
                args.site or Path(args.path).resolve().name, args.owner, site, embedder
            ),
        )
    except OSError as exc:
        raise RunnerError(f"{args.store}: cannot write the store: {exc.strerror or exc}") from exc
    from guardlex.runner.site import site_info

    info = site_info(store)
    print(
        f"{info.store}: site {info.name!r}, {info.chunks} chunks in {len(info.locales)} "
        f"locale(s) ({', '.join(info.locales)}), {info.records} records, subjects "
        f"{', '.join(info.subjects) or 'none'}, embedder {info.embedder}",
        file=sys.stdout,
    )
    return 0
