"""`guardlex calibrate`: the threshold for a store's embedder and corpus, with a plot.

Exit status: 0 done, 1 no threshold meets the policy, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "calibrate",
        help="choose the similarity threshold for a store's embedder from a golden set",
        description=(
            "Run the answerable and no-evidence questions of a golden set through the "
            "store's routing and retrieval (no model is called), print both "
            "distributions of the best bounded value, a table of thresholds with the "
            "answerable questions kept and the no-evidence questions stopped, and a "
            "recommended value under a stated policy. --apply stores it in the store, "
            "with the embedder and corpus it belongs to; eval and ask then use it."
        ),
    )
    p.add_argument(
        "--store", metavar="STORE", required=True, help="SQLite file or postgresql:// URL"
    )
    p.add_argument(
        "--golden",
        metavar="DIR",
        required=True,
        help="golden files (answerable.yaml, no_evidence.yaml)",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="calibrate another embedder on the store's chunks (re-embedded in memory; "
        "default: the store's own)",
    )
    p.add_argument(
        "--packs",
        metavar="DIR",
        action="append",
        default=[],
        help="extra pack directory (repeatable)",
    )
    p.add_argument("--locale", default=None, help="only this locale's questions")
    p.add_argument(
        "--keep",
        type=float,
        default=1.0,
        help="share of answerable questions the threshold must keep (default: 1.0 = all)",
    )
    p.add_argument(
        "--plot", metavar="FILE.png", default=None, help="write the plot (needs guardlex[plot])"
    )
    p.add_argument(
        "--record",
        metavar="FILE.json",
        default=None,
        help="write the JSON record (default: next to --plot, else guardlex-calibration.json)",
    )
    p.add_argument("--json", action="store_true", help="print the JSON record instead of the text")
    p.add_argument(
        "--apply",
        action="store_true",
        help="store the recommended threshold in the store (for its embedder and corpus)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import build_store
    from guardlex.runner.calibrate import calibrate, plot, render, write_record
    from guardlex.runner.corpus import Site
    from guardlex.runner.embeddings import check_embedder_name
    from guardlex.runner.errors import RunnerError
    from guardlex.runner.pipeline import Runner
    from guardlex.runner.site import (
        apply_threshold,
        choose_threshold,
        embedder_factory,
        open_site,
        site_packs,
    )

    golden = Path(args.golden)
    if not golden.is_dir():
        raise RunnerError(f"{golden}: no such folder of golden files")
    if not 0.0 < args.keep <= 1.0:
        raise RunnerError("--keep must be in (0, 1]")
    for d in args.packs:
        if not os.path.isdir(d):
            raise RunnerError(f"--packs {d}: no such folder")
    if args.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise RunnerError("--plot needs matplotlib: pip install 'guardlex[plot]'") from None
    store = open_site(args.store)
    packs = site_packs(store, args.packs)
    name = check_embedder_name(args.embedder) if args.embedder else store.embedder_name
    corpus = store.meta("corpus") or ""
    if name != store.embedder_name:
        if args.apply:
            raise RunnerError(
                f"--apply stores a threshold for the store's own embedder "
                f"({store.embedder_name}); re-index with --embedder {name} to apply one for it"
            )
        # the store's chunks, re-embedded in memory with the other embedder
        n = store.chunk_count()
        chunks = tuple(c for c, _ in store.chunks(range(1, n + 1)).values())
        owners = {loc: store.owner_names(loc) for loc in store.locales()}
        from guardlex.runner.site import make_index_embedder

        site = Site(chunks, tuple(store.records()), owners)
        emb = make_index_embedder(str(name), None, "OPENAI_API_KEY", site)
        mem = build_store(site, ":memory:", emb, packs=packs)
        runner = Runner(mem, packs, embedder=lambda: emb)
    else:
        runner = Runner(store, packs, embedder=embedder_factory(store, packs))
    runner.threshold = choose_threshold(store, None).value
    cal = calibrate(runner, golden, keep=args.keep, locale=args.locale, corpus=corpus)
    if not cal.answerable or not cal.no_evidence:
        raise RunnerError(
            f"{golden}: calibration needs answerable and no_evidence cases that reach "
            f"retrieval (found {len(cal.answerable)} and {len(cal.no_evidence)})"
        )
    record_path = Path(
        args.record
        or (str(Path(args.plot).with_suffix(".json")) if args.plot else "guardlex-calibration.json")
    )
    data = write_record(cal, record_path)
    if args.plot:
        plot(cal, Path(args.plot))
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(render(cal))
        print(f"record: {record_path}" + (f"   plot: {args.plot}" if args.plot else ""))
    if cal.recommended is None:
        return 1
    if args.apply:
        row = cal.counts(cal.recommended)
        apply_threshold(
            store,
            {
                "value": cal.recommended,
                "embedder": cal.embedder,
                "corpus": corpus,
                "golden": str(golden),
                "at": data["at"],
                "policy": cal.policy,
                "kept": [row.kept, len(cal.answerable)],
                "stopped": [row.stopped, len(cal.no_evidence)],
            },
        )
        print(
            f"applied: threshold {cal.recommended} stored in {store.path} for embedder "
            f"{cal.embedder}, corpus {corpus}",
            file=sys.stderr if args.json else sys.stdout,
        )
    return 0
