"""Bounded load and faults against `guardlex serve` on 127.0.0.1 (seconds, not minutes;
the bigger version is benchmarks/bench_serve.py).

Many concurrent streams from one process: the budget is never overspent, the rate
limits hold, readers who leave cancel their model streams, memory stays flat, and a
model that hangs, drips, sends garbage or ignores max_tokens never makes a turn pass
its reservation or its deadline.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from guardlex.runner.aio import AsyncOpenAIChatModel
from guardlex.runner.costs import BudgetLedger, RateLimiter
from guardlex.runner.models import Prompt
from guardlex.runner.pipeline import Runner
from guardlex.serve.app import parse_networks

from .conftest import ANSWERABLE, REFUSED_Q, FakeModelServer, LiveServer, make_app

httpx = pytest.importorskip("httpx")

#: Every load test stops by itself: a fixed number of turns, under this many seconds.
TIME_BOUND = 60.0


async def _turn(
    client: Any,
    url: str,
    question: str,
    *,
    headers: dict[str, str] | None = None,
    leave_after_first: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {"events": [], "status": None}
    async with client.stream(
        "POST", url + "/api/ask", json={"question": question}, headers=headers or {}
    ) as resp:
        out["status"] = resp.status_code
        if resp.status_code != 200:
            out["error"] = json.loads(await resp.aread())
            return out
        name = "message"
        async for line in resp.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                out["events"].append((name, json.loads(line[5:])))
                if leave_after_first and name == "sentence":
                    return out  # leaving the block closes the connection
    return out


async def _many(url: str, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=len(jobs) + 5, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=30.0, limits=limits) as client:
        q = jobs
        return await asyncio.wait_for(
            asyncio.gather(*(_turn(client, url, **j) for j in q)), TIME_BOUND
        )


def _done(r: dict[str, Any]) -> dict[str, Any]:
    return next(d for e, d in r["events"] if e == "done")


def _openai_runner(store: Any, packs: Any, server: FakeModelServer, **kw: Any) -> Runner:
    model = AsyncOpenAIChatModel(server.base_url, "fake", deadline=kw.pop("deadline", 10.0))
    return Runner(store, packs, model=lambda: model, **kw)


def test_concurrent_streams_never_overspend_the_budget(
    serve_store, serve_packs, model_server: FakeModelServer
) -> None:
    model_server.mode = "slow"
    model_server.delay = 0.05
    # room for about 5 turns' reservations: most of 40 concurrent turns are refused
    probe = Runner(serve_store, serve_packs).ask(ANSWERABLE)
    bound = len(Prompt(ANSWERABLE, tuple(s.text for s in probe.sources), "en", 1024).render())
    cap = 5 * (bound + 1024) + 100
    ledger = BudgetLedger(":memory:", cap)
    runner = _openai_runner(serve_store, serve_packs, model_server, ledger=ledger)
    server = LiveServer(make_app(runner)).start()
    peak = [0]
    stop = [False]

    async def watch() -> None:
        while not stop[0]:
            spent, reserved = ledger.usage()
            peak[0] = max(peak[0], spent + reserved)
            await asyncio.sleep(0.005)

    async def go() -> list[dict[str, Any]]:
        w = asyncio.ensure_future(watch())
        try:
            return await _many(server.url, [{"question": ANSWERABLE}] * 40)
        finally:
            stop[0] = True
            await w

    try:
        results = asyncio.run(go())
    finally:
        server.stop()
    codes = [_done(r)["code"] for r in results]
    assert codes.count("ANSWERED") >= 1 and codes.count("BUDGET_EXHAUSTED") >= 30
    spent, reserved = ledger.usage()
    assert reserved == 0 and spent <= cap and peak[0] <= cap
    assert spent == sum(
        _done(r)["cost_tokens"] or 0 for r in results if _done(r)["code"] == "ANSWERED"
    )


def test_rate_limits_hold_under_concurrency(runner: Runner, tmp_path) -> None:
    # a fixed clock: the fixed one-minute window must not roll over while a slow, loaded
    # machine is still sending the 45 requests (that let 14 through for one client)
    limiter = RateLimiter(
        str(tmp_path / "rate.sqlite"), limits=(("minute", 60, 7),), clock=lambda: 1_000_020.0
    )
    app = make_app(runner, rate_limiter=limiter, trusted_proxies=parse_networks(["127.0.0.1"]))
    server = LiveServer(app).start()
    jobs = [
        {"question": REFUSED_Q, "headers": {"X-Forwarded-For": f"198.51.100.{i % 3}"}}
        for i in range(45)
    ]
    try:
        results = asyncio.run(_many(server.url, jobs))
    finally:
        server.stop()
    by_client: dict[str, list[int]] = {}
    for j, r in zip(jobs, results, strict=True):
        if r["status"] == 200 and "RATE_LIMIT_UNAVAILABLE" in _done(r)["trace"]:
            continue  # a busy counter database lets a turn through (fails open, flagged)
        by_client.setdefault(j["headers"]["X-Forwarded-For"], []).append(r["status"])
    for statuses in by_client.values():
        assert statuses.count(200) == 7


def test_readers_who_leave_cancel_their_model_streams(
    serve_store, serve_packs, model_server: FakeModelServer
) -> None:
    model_server.mode = "slow"
    model_server.delay = 0.2
    model_server.hold = 20.0
    ledger = BudgetLedger(":memory:", 10**8)
    runner = _openai_runner(serve_store, serve_packs, model_server, ledger=ledger)
    app = make_app(runner)
    server = LiveServer(app).start()
    n = 20
    try:
        results = asyncio.run(
            _many(server.url, [{"question": ANSWERABLE, "leave_after_first": True}] * n)
        )
        assert all(r["events"][-1][0] == "sentence" for r in results)
        assert model_server.wait_for("disconnects", n, timeout=15)
        end = time.monotonic() + 10
        while (app.state.guardlex.active or ledger.usage()[1]) and time.monotonic() < end:
            time.sleep(0.05)
        assert app.state.guardlex.active == 0
        spent, reserved = ledger.usage()
        assert reserved == 0 and spent > 0
        assert model_server.completed == 0
    finally:
        server.stop()


def test_memory_stays_flat_over_many_turns(runner: Runner) -> None:
    psutil = pytest.importorskip("psutil")
    app = make_app(runner)
    server = LiveServer(app).start()
    proc = psutil.Process()
    questions = [ANSWERABLE, REFUSED_Q, "Tell me about her career", "What is the hit rate?"]
    try:
        asyncio.run(_many(server.url, [{"question": q} for q in questions * 10]))  # warm
        before = proc.memory_info().rss
        for _ in range(4):
            asyncio.run(_many(server.url, [{"question": q} for q in questions * 15]))
        after = proc.memory_info().rss
    finally:
        server.stop()
    # 240 more turns: growth would be linear in turns if anything were kept per turn
    assert after - before < 25 * 1024 * 1024, (before, after)
    assert len(app.state.guardlex.conversations) <= 280


@pytest.mark.parametrize("mode", ["hang", "drip", "garbage", "flood"])
def test_faulty_models_stay_inside_reservation_and_deadline(
    serve_store, serve_packs, model_server: FakeModelServer, mode: str
) -> None:
    model_server.mode = mode
    model_server.delay = 0.05
    deadline = 1.5
    ledger = BudgetLedger(":memory:", 10**8)
    max_out = 400
    runner = _openai_runner(
        serve_store,
        serve_packs,
        model_server,
        ledger=ledger,
        deadline=deadline,
        max_output_tokens=max_out,
    )
    server = LiveServer(make_app(runner)).start()
    t0 = time.monotonic()
    try:
        results = asyncio.run(_many(server.url, [{"question": ANSWERABLE}] * 8))
    finally:
        took = time.monotonic() - t0
        server.stop()
    probe = Runner(serve_store, serve_packs).ask(ANSWERABLE)
    prompt = Prompt(ANSWERABLE, tuple(s.text for s in probe.sources), "en", max_out).render()
    reservation = len(prompt.encode()) + max_out
    for r in results:
        done = _done(r)
        assert done["code"] in ("MODEL_ERROR", "ANSWERED", "TRUNCATED", "GATE_STOP"), done
        assert done["cost_tokens"] <= reservation
    assert took < deadline + 8  # every turn ended at its deadline, not the server's 30 s
    spent, reserved = ledger.usage()
    assert reserved == 0 and spent <= 8 * reservation
    if mode == "flood":
        assert all("OUTPUT_CAPPED" in _done(r)["trace"] for r in results)
