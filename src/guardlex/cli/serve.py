"""`guardlex serve --store STORE`: the assistant over HTTP, with a web page at /."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the assistant over HTTP: streamed, gated answers and a web page",
        description=(
            "POST /api/ask streams the gated answer as server-sent events, GET / is a chat "
            "page, GET /api/health says the server is up. Needs the 'serve' extra: "
            "pip install 'guardlex[serve]'. See docs/serve.md."
        ),
    )
    p.add_argument(
        "--store",
        metavar="STORE",
        required=True,
        help="store built by `guardlex index`: a SQLite file or a postgresql:// URL; its "
        "subjects, locales, embedder and calibrated threshold come from it",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    p.add_argument("--port", type=int, default=8080, help="port (default: %(default)s)")
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
        help="embedding model (default: the one the store was built with)",
    )
    p.add_argument(
        "--model",
        choices=("scripted", "openai"),
        default="scripted",
        help="scripted: deterministic, offline (default); openai: an OpenAI-compatible "
        "/chat/completions endpoint, read asynchronously",
    )
    p.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="for --model openai")
    p.add_argument("--model-name", default="gpt-4o-mini", help="model name for --model openai")
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (default: %(default)s)",
    )
    p.add_argument(
        "--http",
        choices=("stdlib", "httpx"),
        default="stdlib",
        help="the async client's transport for --model openai: stdlib (asyncio streams, "
        "one connection per answer; measured about 2x the turns/s of httpx) or httpx "
        "(connection pool, HTTPS_PROXY honoured) (default: %(default)s)",
    )
    p.add_argument(
        "--turn-deadline",
        type=float,
        default=60.0,
        help="seconds one answer's model stream may take in all (default: %(default)s)",
    )
    p.add_argument("--threshold", type=float, default=None, help="similarity threshold")
    p.add_argument(
        "--max-output-tokens", type=int, default=None, help="output limit per answer (1024)"
    )
    p.add_argument(
        "--ledger",
        metavar="PATH",
        default=None,
        help="budget ledger (SQLite file or postgresql:// URL); default: the store's "
        "database for a postgresql:// store, else the cache folder for --model openai, in "
        "memory for the scripted model",
    )
    p.add_argument(
        "--new-ledger", action="store_true", help="create the ledger file if it is missing"
    )
    p.add_argument("--monthly-cap", type=int, default=2_000_000, help="monthly token cap")
    p.add_argument(
        "--rate-limits",
        metavar="M,H,D",
        default="10,60,200",
        help="requests per client address per minute, hour and day (default: %(default)s)",
    )
    p.add_argument(
        "--no-rate-limit", action="store_true", help="turn the per-address rate limits off"
    )
    p.add_argument(
        "--rate-db",
        metavar="PATH",
        default=None,
        help="rate-limit counters (default: next to the ledger, or the store's database)",
    )
    p.add_argument(
        "--trusted-proxy",
        metavar="ADDR",
        action="append",
        default=[],
        help="address or network of a reverse proxy whose X-Forwarded-For is believed "
        "(repeatable); without one, the connection's address is the client",
    )
    p.add_argument(
        "--max-streams",
        type=int,
        default=256,
        help="answers streamed at once; more get 503 (default: %(default)s)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=16 * 1024,
        help="largest request body; more gets 413 (default: %(default)s)",
    )
    p.add_argument(
        "--no-operator",
        action="store_true",
        help="send readers no route, rule, evidence or trace codes (hides the operator panel)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="log level of the per-turn JSON logs on stderr (default: %(default)s)",
    )
    p.add_argument(
        "--no-warm-up",
        action="store_true",
        help="start at once; the first questions compile the rules they touch",
    )
    p.set_defaults(func=_run)


def _limits(spec: str) -> tuple[tuple[str, int, int], ...]:
    from guardlex.runner.errors import RunnerError

    try:
        m, h, d = (int(x) for x in spec.split(","))
    except ValueError:
        raise RunnerError(f"--rate-limits {spec!r}: three numbers, like 10,60,200") from None
    if min(m, h, d) < 1:
        raise RunnerError("--rate-limits: every limit must be at least 1")
    return (("minute", 60, m), ("hour", 3600, h), ("day", 86400, d))


def build(args: argparse.Namespace) -> tuple[object, object, object]:
    """The runner, the rate limiter and the settings for ``args`` (tests use this)."""
    import os
    from typing import Any

    from guardlex.runner._deps import require_numpy

    require_numpy()
    from guardlex.runner.build import cache_dir, runner_for
    from guardlex.runner.costs import RateLimiter
    from guardlex.runner.embeddings import check_embedder_name
    from guardlex.runner.errors import RunnerError, StoreError
    from guardlex.runner.models import check_endpoint
    from guardlex.runner.pg import PgBudgetLedger, PgRateLimiter, is_pg_url
    from guardlex.runner.site import choose_threshold, embedder_factory, open_site, site_packs
    from guardlex.serve.app import ServeSettings, parse_networks

    if args.threshold is not None and not 0.0 <= args.threshold <= 1.0:
        raise RunnerError("--threshold must be between 0 and 1")
    if args.max_output_tokens is not None and args.max_output_tokens < 1:
        raise RunnerError("--max-output-tokens must be at least 1")
    if args.monthly_cap < 0:
        raise RunnerError("--monthly-cap must be 0 or more")
    if not 0 < args.port < 65536:
        raise RunnerError("--port must be from 1 to 65535")
    if args.max_streams < 1 or args.max_body_bytes < 256:
        raise RunnerError("--max-streams must be at least 1, --max-body-bytes at least 256")
    if args.turn_deadline <= 0:
        raise RunnerError("--turn-deadline must be more than 0")
    try:
        trusted = parse_networks(args.trusted_proxy)
    except ValueError as exc:
        raise RunnerError(str(exc)) from None
    limits = _limits(args.rate_limits)
    for d in args.packs:
        if not os.path.isdir(d):
            raise RunnerError(f"--packs {d}: no such folder")
    embedder = check_embedder_name(args.embedder) if args.embedder else None
    key: str | None = None
    if args.model == "openai":
        key = os.environ.get(args.api_key_env) or None
        check_endpoint(args.base_url, key)
    store = open_site(args.store)
    if embedder is not None and store.embedder_name not in (None, embedder):
        raise StoreError(
            f"{args.store} was built with embedder {store.embedder_name!r}, not {embedder!r}"
        )
    packs = site_packs(store, args.packs)
    threshold = choose_threshold(store, args.threshold)

    model_factory: Any = None
    if args.model == "openai":
        from guardlex.runner.aio import AsyncOpenAIChatModel

        model = AsyncOpenAIChatModel(
            args.base_url,
            args.model_name,
            api_key=key,
            deadline=args.turn_deadline,
            max_connections=args.max_streams,
            http=args.http,
        )

        def model_factory() -> Any:
            return model

    ledger_path = args.ledger
    if ledger_path is None and args.model != "scripted" and is_pg_url(args.store):
        ledger_path = args.store
    if ledger_path is None and args.model != "scripted":
        cache_dir().mkdir(parents=True, exist_ok=True)
        ledger_path = str(cache_dir() / "ledger.sqlite")
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
    ledger: Any = None
    if is_pg_url(ledger_path):
        ledger = PgBudgetLedger(str(ledger_path), monthly_cap=args.monthly_cap)
    limiter: Any = None
    if not args.no_rate_limit:
        rate_at = args.rate_db or (args.store if is_pg_url(args.store) else None)
        if rate_at is None:
            rate_at = (
                str(ledger_path) + ".rate"
                if ledger_path and not is_pg_url(ledger_path)
                else ":memory:"
            )
        if is_pg_url(rate_at):
            limiter = PgRateLimiter(str(rate_at), limits=limits)
        else:
            limiter = RateLimiter(rate_at, limits=limits)
    runner = runner_for(
        store,
        model=model_factory,
        ledger=ledger,
        ledger_path=ledger_path,
        monthly_cap=args.monthly_cap,
        threshold=threshold.value,
        max_output_tokens=args.max_output_tokens,
        packs=packs,
        new_ledger=args.new_ledger,
    )
    runner._embedder_spec = embedder_factory(store, packs, embedder)
    settings = ServeSettings(
        trusted_proxies=trusted,
        max_body_bytes=args.max_body_bytes,
        max_streams=args.max_streams,
        operator=not args.no_operator,
        secrets=(key,) if key else (),
    )
    return runner, limiter, settings


def _run(args: argparse.Namespace) -> int:
    import logging

    try:
        import uvicorn
    except ImportError:
        from guardlex.runner.errors import RunnerError

        raise RunnerError(
            "guardlex serve needs the serve extra: pip install 'guardlex[serve]'"
        ) from None
    from guardlex.serve.app import create_app

    runner, limiter, settings = build(args)
    logging.basicConfig(level=args.log_level.upper(), format="%(name)s %(message)s")
    if not args.no_warm_up:
        print("guardlex serve: warming up (compiling the rules)…", file=sys.stderr)
        runner.warm_up()  # type: ignore[attr-defined]
    app = create_app(runner, rate_limiter=limiter, settings=settings)  # type: ignore[arg-type]
    from guardlex.runner.models import is_loopback

    if not is_loopback(f"http://{args.host}/") and not args.trusted_proxy:
        print(
            f"guardlex serve: listening on {args.host}, not loopback: readers connect "
            "directly (rate limits key on their addresses); behind a reverse proxy, pass "
            "--trusted-proxy ADDR",
            file=sys.stderr,
        )
    print(f"guardlex serve: http://{args.host}:{args.port}/", file=sys.stderr)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=False,
        proxy_headers=False,  # the client address is decided by --trusted-proxy only
        server_header=False,
    )
    return 0
