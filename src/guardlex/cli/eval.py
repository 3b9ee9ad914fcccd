"""`guardlex eval`: run the golden set on the sample site and print the report."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "eval",
        help="run the multilingual golden set and report; non-zero exit on any regression",
        description=(
            "Evaluate the packs, retrieval and gates on the golden set against the sample "
            "site, offline and deterministically. Each set is reported separately (never "
            "one blended score), per locale, with the embedding model and set sizes."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--golden",
        metavar="DIR",
        default=None,
        help="run the golden files in DIR (same format, any subset of the sets, e.g. "
        "held-out questions) instead of the shipped golden set",
    )
    p.add_argument("--locale", default=None, help="evaluate only the cases of this locale")
    p.add_argument(
        "--min-recall",
        type=float,
        default=None,
        help="recall@5 below this fails the run (default 0.8)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="similarity threshold to evaluate (default 0.35)",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="embedding model (default hashing-bow-256, the deterministic surrogate)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="build the sample store in memory instead of using the cache",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--max-misses",
        type=int,
        default=25,
        help="misses listed per set in the text report (default: %(default)s)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import runner_for, sample_packs, sample_store
    from guardlex.runner.embeddings import DEFAULT_EMBEDDER
    from guardlex.runner.errors import RunnerError
    from guardlex.runner.evaluate import DEFAULT_MIN_RECALL, evaluate, render, render_json
    from guardlex.runner.progress import ProgressBar

    if args.locale is not None:
        from guardlex.rules.loader import discover

        known = discover()
        if args.locale not in known:
            from guardlex.errors import UnknownLocaleError

            raise UnknownLocaleError(
                f"unknown locale {args.locale!r}; choose one of {', '.join(sorted(known))}"
            )
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise RunnerError("--threshold must be between 0 and 1")
    from pathlib import Path

    golden = None
    if args.golden is not None:
        golden = Path(args.golden)
        if not golden.is_dir():
            raise RunnerError(f"{golden}: no such folder of golden files")
    from guardlex.runner.embeddings import check_embedder_name

    if args.embedder is not None:
        args.embedder = check_embedder_name(args.embedder)
    packs = sample_packs()
    bar = ProgressBar("building the sample store", enabled=not args.quiet)
    store = sample_store(
        args.embedder or DEFAULT_EMBEDDER,
        cache=not args.no_cache,
        packs=packs,
        progress=lambda n, total: bar.update(n, total),
    )
    bar.finish(f"{store.chunk_count()} chunks")
    runner = runner_for(store, threshold=args.threshold, packs=packs)
    quiet = args.quiet

    def progress(name: str, done: int, total: int) -> None:
        if not quiet:
            print(f"eval: running {name} ({total} cases)", file=sys.stderr, flush=True)

    report = evaluate(
        runner,
        locale=args.locale,
        min_recall=DEFAULT_MIN_RECALL if args.min_recall is None else args.min_recall,
        progress=progress,
        root=golden,
    )
    print(render_json(report) if args.json else render(report, args.max_misses))
    return 0 if report.ok else 1
