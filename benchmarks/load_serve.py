"""The bigger version of tests/serve/test_load.py: many concurrent streams against
`guardlex serve` on 127.0.0.1, from one process, each phase a fixed count under a time
bound (the script stops by itself).

Usage: ``python benchmarks/load_serve.py [--streams 400] [--faults 60]``

Phases, each checked (exit status 1 on any violation):

1. budget: ``--streams`` concurrent turns against a cap that fits about 2% of them;
   the ledger's spent + reserved is sampled all along and never passes the cap;
2. disconnects: ``--streams`` readers leave after their first sentence; the fake model
   server sees every stream closed, none finished, and no reservation stays held;
3. rate limits: 20 client addresses (X-Forwarded-For behind a trusted proxy) send 3x
   their minute limit at once; each gets exactly its limit;
4. faults: ``--faults`` turns each against a model that hangs, drips, sends garbage or
   ignores max_tokens; none passes its reservation or its deadline;
5. memory: the server's resident memory after a warm-up and after 10x as many turns.

The site and packs are the tests' stand-ins (tests/serve/conftest.py), so what is
measured is the server, the async runner and the ledger, not the rules.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PHASE_BOUND = 180.0


def _fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_serve_fixtures", ROOT / "tests" / "serve" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


async def _turn(client: Any, url: str, q: str, headers: dict[str, str], leave: bool) -> Any:
    t0 = time.perf_counter()
    out: dict[str, Any] = {"status": None, "events": []}
    async with client.stream("POST", url + "/api/ask", json={"question": q}, headers=headers) as r:
        out["status"] = r.status_code
        if r.status_code != 200:
            await r.aread()
            return out
        name = ""
        async for line in r.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                out["events"].append((name, json.loads(line[5:])))
                if leave and name == "sentence":
                    break
    out["seconds"] = time.perf_counter() - t0
    return out


async def _many(url: str, jobs: list[tuple[str, dict[str, str], bool]]) -> list[Any]:
    import httpx

    limits = httpx.Limits(max_connections=len(jobs) + 8, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as client:
        return await asyncio.wait_for(
            asyncio.gather(*(_turn(client, url, q, h, leave) for q, h, leave in jobs)),
            PHASE_BOUND,
        )


def _done(r: Any) -> dict[str, Any]:
    return next((d for e, d in r["events"] if e == "done"), {})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=400)
    ap.add_argument("--faults", type=int, default=60)
    args = ap.parse_args(argv)
    fx = _fixtures()
    import psutil

    from guardlex.runner import _engine
    from guardlex.runner.aio import AsyncOpenAIChatModel
    from guardlex.runner.build import build_store
    from guardlex.runner.costs import BudgetLedger, RateLimiter
    from guardlex.runner.models import Prompt
    from guardlex.runner.pipeline import Runner
    from guardlex.serve.app import parse_networks

    packs = _engine.PackView(fx.ServePacks())
    store = build_store(fx.TINY_SITE, ":memory:", packs=packs)
    model_server = fx.FakeModelServer().start()
    failures: list[str] = []
    q = fx.ANSWERABLE
    probe = Runner(store, packs).ask(q)

    def reservation(max_out: int) -> int:
        text = Prompt(q, tuple(s.text for s in probe.sources), "en", max_out).render()
        return len(text.encode()) + max_out

    def serve(runner: Any, **kw: Any) -> Any:
        return fx.LiveServer(fx.make_app(runner, max_streams=100_000, **kw)).start()

    def openai_runner(ledger: Any, deadline: float = 30.0, max_out: int = 1024) -> Any:
        model = AsyncOpenAIChatModel(
            model_server.base_url, "fake", deadline=deadline, max_connections=100_000
        )
        return Runner(store, packs, model=lambda: model, ledger=ledger, max_output_tokens=max_out)

    def check(ok: bool, what: str) -> None:
        print(("  ok   " if ok else "  FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    try:
        # 1. budget
        n = args.streams
        model_server.mode, model_server.delay, model_server.hold = "slow", 0.05, 0.0
        cap = max(2, n // 50) * reservation(1024)
        ledger = BudgetLedger(":memory:", cap)
        server = serve(openai_runner(ledger))
        peak = [0]
        stop = [False]

        async def budget() -> list[Any]:
            async def watch() -> None:
                while not stop[0]:
                    s, r = ledger.usage()
                    peak[0] = max(peak[0], s + r)
                    await asyncio.sleep(0.002)

            w = asyncio.ensure_future(watch())
            try:
                return await _many(server.url, [(q, {}, False)] * n)
            finally:
                stop[0] = True
                await w

        t0 = time.perf_counter()
        res = asyncio.run(budget())
        server.stop()
        codes = [_done(r).get("code") for r in res]
        spent, reserved = ledger.usage()
        print(
            f"budget: {n} streams in {time.perf_counter() - t0:.1f} s, "
            f"{codes.count('ANSWERED')} answered, {codes.count('BUDGET_EXHAUSTED')} refused "
            f"by the budget; cap {cap}, peak spent+reserved {peak[0]}, spent {spent}"
        )
        check(peak[0] <= cap and spent <= cap and reserved == 0, "budget never overspent")

        # 2. disconnects
        model_server.mode, model_server.delay, model_server.hold = "slow", 0.2, 60.0
        before = model_server.disconnects
        ledger = BudgetLedger(":memory:", 10**12)
        server = serve(openai_runner(ledger))
        t0 = time.perf_counter()
        res = asyncio.run(_many(server.url, [(q, {}, True)] * n))
        model_server.wait_for("disconnects", before + n, timeout=60)
        end = time.monotonic() + 30
        while ledger.usage()[1] and time.monotonic() < end:
            time.sleep(0.05)
        active = server.app.state.guardlex.active
        server.stop()
        closed = model_server.disconnects - before
        print(
            f"disconnects: {n} readers left after their first sentence; the model server saw "
            f"{closed} streams closed in {time.perf_counter() - t0:.1f} s; "
            f"reserved left {ledger.usage()[1]}"
        )
        check(closed == n and active == 0 and ledger.usage()[1] == 0, "disconnects cancel")
        model_server.hold = 0.0

        # 3. rate limits
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            limit, clients = 10, 20
            limiter = RateLimiter(f"{tmp}/rate.sqlite", limits=(("minute", 60, limit),))
            server = serve(
                Runner(store, packs),
                rate_limiter=limiter,
                trusted_proxies=parse_networks(["127.0.0.1"]),
            )
            jobs = [
                (fx.REFUSED_Q, {"X-Forwarded-For": f"203.0.113.{i % clients}"}, False)
                for i in range(3 * limit * clients)
            ]
            res = asyncio.run(_many(server.url, jobs))
            server.stop()
        per: dict[str, list[int]] = {}
        failed_open = 0
        for (_q, h, _l), r in zip(jobs, res, strict=True):
            # a counter the database could not update lets the turn through (fails open,
            # by design) and says so in the trace: those are not counted against the limit
            if "RATE_LIMIT_UNAVAILABLE" in _done(r).get("trace", ()):
                failed_open += 1
                continue
            per.setdefault(h["X-Forwarded-For"], []).append(r["status"])
        oks = sorted({v.count(200) for v in per.values()})
        print(
            f"rate limits: {len(jobs)} requests from {clients} clients; 200s per client {oks}; "
            f"{failed_open} let through because the counters were busy (fail open, flagged)"
        )
        check(oks == [limit], f"each client got exactly {limit} counted")

        # 4. faults
        deadline, max_out = 2.0, 400
        bound = reservation(max_out)
        for mode in ("hang", "drip", "garbage", "flood"):
            model_server.mode, model_server.delay = mode, 0.05
            ledger = BudgetLedger(":memory:", 10**12)
            server = serve(openai_runner(ledger, deadline=deadline, max_out=max_out))
            res = asyncio.run(_many(server.url, [(q, {}, False)] * args.faults))
            server.stop()
            costs = [_done(r).get("cost_tokens") or 0 for r in res]
            slowest = max(r.get("seconds", 0.0) for r in res)
            print(
                f"faults/{mode}: {args.faults} turns, slowest {slowest:.2f} s "
                f"(deadline {deadline} s), largest cost {max(costs)} (reservation {bound})"
            )
            check(
                max(costs) <= bound and ledger.usage()[1] == 0 and slowest < deadline + 10,
                f"{mode}: inside reservation and deadline",
            )

        # 5. memory
        runner = Runner(store, packs)
        server = serve(runner)
        proc = psutil.Process()
        qs = [q, fx.REFUSED_Q, "Tell me about her career", fx.OFF_TOPIC]
        asyncio.run(_many(server.url, [(x, {}, False) for x in qs * 25]))
        rss0 = proc.memory_info().rss / 2**20
        for _ in range(10):
            asyncio.run(_many(server.url, [(x, {}, False) for x in qs * 25]))
        rss1 = proc.memory_info().rss / 2**20
        server.stop()
        print(f"memory: {rss0:.0f} MB after 100 turns, {rss1:.0f} MB after 1,100")
        check(rss1 - rss0 < 40, "memory flat (under 40 MB growth over 1,000 turns)")
    finally:
        model_server.stop()
    print("FAILED: " + "; ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
