"""`guardlex eval`: run a golden set on the sample site or on the user's own store.

Exit status: 0 every set passed, 1 any regression (a miss in any set, recall below the
floor, must-not leakage, a set that could not run), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "eval",
        help="run the multilingual golden set and report; non-zero exit on any regression",
        description=(
            "Evaluate the packs, retrieval and gates on a golden set against the sample "
            "site, or against your own store (--store, with --golden), offline and "
            "deterministically. Each set is reported separately (never one blended "
            "score), per locale, with the site, the embedding model and set sizes. "
            "Exit status: 0 pass, 1 regression, 2 usage error."
        ),
    )
    p.add_argument(
        "--store",
        metavar="STORE",
        default=None,
        help="a store built by `guardlex index` (SQLite file or postgresql:// URL); its "
        "subject names, locales, embedder and calibrated threshold come from it. Needs "
        "--golden (the shipped golden set is about the sample site)",
    )
    p.add_argument(
        "--packs",
        metavar="DIR",
        action="append",
        default=[],
        help="an extra pack directory (repeatable), merged after the shipped packs",
    )
    p.add_argument(
        "--report",
        metavar="FILE",
        default=None,
        help="also write the versioned JSON report to FILE (the input of --baseline)",
    )
    p.add_argument("--junit", metavar="FILE", default=None, help="write JUnit XML to FILE")
    p.add_argument(
        "--baseline",
        metavar="FILE",
        default=None,
        help="a previous JSON report: print what changed since that run",
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
        help="similarity threshold to evaluate (default: the store's calibrated one, else 0.35)",
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
    from pathlib import Path

    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import runner_for, sample_store
    from guardlex.runner.embeddings import DEFAULT_EMBEDDER, check_embedder_name
    from guardlex.runner.errors import RunnerError
    from guardlex.runner.evaluate import (
        DEFAULT_MIN_RECALL,
        diff_baseline,
        evaluate,
        load_baseline,
        render,
        render_diff,
        render_json,
        render_junit,
    )
    from guardlex.runner.pipeline import Runner
    from guardlex.runner.progress import ProgressBar
    from guardlex.runner.retrieval import DEFAULT_THRESHOLD
    from guardlex.runner.site import (
        Threshold,
        choose_threshold,
        embedder_factory,
        open_site,
        site_info,
        site_packs,
    )

    if args.locale is not None:
        from guardlex.rules.loader import discover

        known = discover(tuple(args.packs))
        if args.locale not in known:
            from guardlex.errors import UnknownLocaleError

            raise UnknownLocaleError(
                f"unknown locale {args.locale!r}; choose one of {', '.join(sorted(known))}"
            )
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise RunnerError("--threshold must be between 0 and 1")
    golden = None
    if args.golden is not None:
        golden = Path(args.golden)
        if not golden.is_dir():
            raise RunnerError(f"{golden}: no such folder of golden files")
    for d in args.packs:
        if not Path(d).is_dir():
            raise RunnerError(f"--packs {d}: no such folder")
    baseline = load_baseline(Path(args.baseline)) if args.baseline else None
    if args.embedder is not None:
        args.embedder = check_embedder_name(args.embedder)

    if args.store is not None:
        if golden is None:
            raise RunnerError(
                "--store needs --golden DIR: the shipped golden set is about the sample site"
            )
        store = open_site(args.store)
        packs = site_packs(store, args.packs)
        threshold = choose_threshold(store, args.threshold)
        runner = Runner(
            store,
            packs,
            embedder=embedder_factory(store, packs, args.embedder),
            threshold=threshold.value,
        )
        site = site_info(store).to_dict()
    else:
        from guardlex.rules import load_packs
        from guardlex.runner import _engine
        from guardlex.runner.build import owner_names
        from guardlex.runner.corpus import sample_site

        packs = _engine.PackView(
            load_packs(subject_names=owner_names(sample_site()), paths=tuple(args.packs))
        )
        bar = ProgressBar("building the sample store", enabled=not args.quiet)
        store = sample_store(
            args.embedder or DEFAULT_EMBEDDER,
            cache=not args.no_cache,
            packs=packs,
            progress=lambda n, total: bar.update(n, total),
        )
        bar.finish(f"{store.chunk_count()} chunks")
        threshold = (
            Threshold(args.threshold, "flag")
            if args.threshold is not None
            else Threshold(DEFAULT_THRESHOLD, "default")
        )
        runner = runner_for(store, threshold=threshold.value, packs=packs)
        site = {}
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
        site=site,
        threshold_source=threshold.describe(),
    )
    diff = diff_baseline(report, baseline) if baseline is not None else None
    if args.json:
        if diff is None:
            print(render_json(report))
        else:
            import json

            print(
                json.dumps(
                    {**report.to_dict(), "baseline_diff": diff}, ensure_ascii=False, indent=2
                )
            )
    else:
        print(render(report, args.max_misses))
        if diff is not None:
            print()
            print(render_diff(diff))
    if args.report:
        Path(args.report).write_text(render_json(report) + "\n", encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(render_junit(report), encoding="utf-8")
    return 0 if report.ok else 1
