"""`guardlex ask QUESTION`: one turn of the reference runner, gated answer streamed."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ask",
        help="ask the reference RAG runner a question (sample site by default)",
        description=(
            "Route the question, refuse or answer from the store, and stream the answer "
            "through the sentence gate. Runs offline with the scripted model by default."
        ),
    )
    p.add_argument("question", metavar="QUESTION", help="the reader's question (not empty)")
    p.add_argument(
        "--previous",
        metavar="Q",
        default=None,
        help="the previous question (a follow-up is checked with it)",
    )
    p.add_argument(
        "--previous-answer",
        metavar="TEXT",
        default=None,
        help="the previous answer (an ordinal like 'the second one' resolves against its list)",
    )
    p.add_argument(
        "--locale",
        default=None,
        help="the reader's language when known (default: detected from the question)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (answer, code, trace, sources) instead",
    )
    p.add_argument(
        "--store",
        metavar="STORE",
        default=None,
        help="store built by `guardlex index`: a SQLite file or a postgresql:// URL "
        "(default: the sample site); its subjects, embedder and threshold come from it",
    )
    p.add_argument(
        "--packs",
        metavar="DIR",
        action="append",
        default=[],
        help="an extra pack directory (repeatable), merged after the shipped packs",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="embedding model: hashing-bow-256 or all-MiniLM-L6-v2 (default: the one the "
        "store was built with; another one is an error)",
    )
    p.add_argument(
        "--model",
        choices=("scripted", "openai"),
        default="scripted",
        help="scripted: deterministic, offline (default); openai: any "
        "OpenAI-compatible /chat/completions endpoint",
    )
    p.add_argument(
        "--base-url",
        default="http://127.0.0.1:8000/v1",
        help="endpoint for --model openai (default: %(default)s)",
    )
    p.add_argument(
        "--model-name",
        default="gpt-4o-mini",
        help="model name sent to the endpoint (default: %(default)s)",
    )
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable that holds the API key (default: %(default)s)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="similarity threshold (default: the store's calibrated one, else 0.35)",
    )
    p.add_argument(
        "--max-output-tokens",
        type=int,
        default=None,
        help="output limit per answer, reserved in full by the budget guard (default: 1024)",
    )
    p.add_argument(
        "--ledger",
        metavar="PATH",
        default=None,
        help="budget ledger file, shared by processes (default: the cache folder for "
        "--model openai, in memory for the scripted model)",
    )
    p.add_argument(
        "--new-ledger",
        action="store_true",
        help="create the ledger file if it does not exist (without this flag a missing "
        "ledger is an error: a deleted ledger must not reset the month's spend)",
    )
    p.add_argument(
        "--monthly-cap",
        type=int,
        default=2_000_000,
        help="monthly token cap of the budget guard (default: %(default)s)",
    )
    p.add_argument(
        "--client",
        default=None,
        help="rate-limit this turn under this client key (minute/hour/day windows; "
        "off by default on the command line)",
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    import os
    from collections.abc import Callable
    from typing import Any

    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import cache_dir, runner_for, sample_packs, sample_store
    from guardlex.runner.costs import RateLimiter
    from guardlex.runner.embeddings import DEFAULT_EMBEDDER, check_embedder_name
    from guardlex.runner.errors import EmptyQuestionError, RunnerError, StoreError
    from guardlex.runner.models import Model, OpenAIChatModel, check_endpoint
    from guardlex.runner.pipeline import (
        LEDGER_UNAVAILABLE,
        MODEL_ERROR,
        SETTLE_FAILED,
        USAGE_INVALID,
        USAGE_OVER_RESERVATION,
        Answer,
    )
    from guardlex.runner.retrieval import DEFAULT_THRESHOLD

    # User mistakes are errors before anything is built: never a silent fallback.
    if not args.question.strip():
        raise EmptyQuestionError("the question is empty")
    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise RunnerError("--threshold must be between 0 and 1")
    if args.max_output_tokens is not None and args.max_output_tokens < 1:
        raise RunnerError("--max-output-tokens must be at least 1")
    if args.monthly_cap < 0:
        raise RunnerError("--monthly-cap must be 0 or more")
    embedder = check_embedder_name(args.embedder) if args.embedder else None
    key: str | None = None
    if args.model == "openai":
        key = os.environ.get(args.api_key_env) or None
        check_endpoint(args.base_url, key)  # a missing key fails here, before any request
    from guardlex.runner.pg import PgBudgetLedger, PgRateLimiter, is_pg_url
    from guardlex.runner.site import (
        Threshold,
        choose_threshold,
        embedder_factory,
        open_site,
        site_packs,
    )

    for d in args.packs:
        if not os.path.isdir(d):
            raise RunnerError(f"--packs {d}: no such folder")
    packs = None
    embedder_spec: Any = embedder
    if args.store:
        store = open_site(args.store)
        if embedder is not None and store.embedder_name not in (None, embedder):
            raise StoreError(
                f"{store.path} was built with embedder {store.embedder_name!r}, not "
                f"{embedder!r}: drop --embedder or re-index with it"
            )
        packs = site_packs(store, args.packs)
        embedder_spec = embedder_factory(store, packs, embedder)
        threshold = choose_threshold(store, args.threshold)
    else:
        packs = sample_packs()
        if args.packs:
            from guardlex.rules import load_packs
            from guardlex.runner import _engine
            from guardlex.runner.build import owner_names
            from guardlex.runner.corpus import sample_site

            packs = _engine.PackView(
                load_packs(subject_names=owner_names(sample_site()), paths=tuple(args.packs))
            )
        store = sample_store(embedder or DEFAULT_EMBEDDER, packs=packs)
        threshold = (
            Threshold(args.threshold, "flag")
            if args.threshold is not None
            else Threshold(DEFAULT_THRESHOLD, "default")
        )
    model_factory: Callable[[], Model] | None = None  # the runner's scripted model
    if args.model == "openai":

        def openai_model() -> Model:
            return OpenAIChatModel(args.base_url, args.model_name, api_key=key)

        model_factory = openai_model

    # The scripted model costs nothing: its turns go to an in-memory ledger unless a
    # ledger file is named. A real model's turns are recorded in the cache folder.
    ledger_path = args.ledger
    if ledger_path is None and args.model != "scripted" and is_pg_url(args.store):
        ledger_path = args.store  # the budget lives in the site's own database
    if ledger_path is None and args.model != "scripted":
        try:
            cache_dir().mkdir(parents=True, exist_ok=True)
            ledger_path = str(cache_dir() / "ledger.sqlite")
        except OSError:
            ledger_path = None
    if (
        ledger_path is not None
        and not is_pg_url(ledger_path)
        and not args.new_ledger
        and not os.path.exists(ledger_path)
    ):
        raise RunnerError(
            f"no budget ledger at {ledger_path}: pass --new-ledger to start one (a ledger "
            "is never created silently, so a deleted one cannot reset the month's spend)"
        )
    limiter: Any = None
    if args.client is not None:
        rate_at = ledger_path or (args.store if is_pg_url(args.store) else None)
        if is_pg_url(rate_at):
            limiter = PgRateLimiter(str(rate_at))
        else:
            limiter = RateLimiter(rate_at or str(cache_dir() / "ledger.sqlite"))
    ledger: Any = None
    if is_pg_url(ledger_path):
        ledger = PgBudgetLedger(str(ledger_path), monthly_cap=args.monthly_cap)
    runner = runner_for(
        store,
        model=model_factory,
        ledger=ledger,
        ledger_path=ledger_path,
        monthly_cap=args.monthly_cap,
        rate_limiter=limiter,
        threshold=threshold.value,
        max_output_tokens=args.max_output_tokens,
        packs=packs,
        new_ledger=args.new_ledger,
    )
    if embedder_spec is not None:
        runner._embedder_spec = embedder_spec
    if threshold.source == "calibrated" and not args.json:
        print(f"guardlex: {threshold.describe()}", file=sys.stderr)
    answer: Answer | None = None
    for item in runner.stream(
        args.question,
        previous=args.previous,
        previous_answer=args.previous_answer,
        client=args.client,
        locale=args.locale,
    ):
        if isinstance(item, Answer):
            answer = item
        elif not args.json:
            sys.stdout.write(item)
            sys.stdout.flush()
    assert answer is not None
    if args.json:
        out = answer.to_dict()
        out["threshold_source"] = threshold.describe()
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write("\n")
        print(f"[{' '.join(answer.trace)}]", file=sys.stderr)
    # The reader got a fixed text; the operator gets one line saying what broke.
    if LEDGER_UNAVAILABLE in answer.trace:
        print(
            f"guardlex: warning: budget ledger unavailable, turn refused: {runner.ledger.error}",
            file=sys.stderr,
        )
    if limiter is not None and "RATE_LIMIT_UNAVAILABLE" in answer.trace:
        print(
            f"guardlex: warning: rate-limit counters unavailable, turn let through: "
            f"{limiter.error}",
            file=sys.stderr,
        )
    for code, what in (
        (SETTLE_FAILED, "budget ledger could not record the call"),
        (USAGE_OVER_RESERVATION, "the model reported more usage than was reserved"),
        (USAGE_INVALID, "the model reported usage that is not token counts"),
    ):
        if code in answer.trace:
            detail = f": {answer.error}" if code == SETTLE_FAILED and answer.error else ""
            print(f"guardlex: warning: {what}{detail}", file=sys.stderr)
    if answer.code == MODEL_ERROR:
        print(f"guardlex: error: {answer.error}", file=sys.stderr)
        return 1
    return 0
