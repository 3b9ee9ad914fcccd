"""Budget guard (atomic, fails closed) and rate limiter (fails open)."""

from __future__ import annotations

import functools
import multiprocessing
import threading
from pathlib import Path

import pytest

from guardlex.runner.costs import BudgetLedger, RateLimiter, utf8_tokens


def test_reservation_is_prompt_bytes_plus_full_output_limit(tmp_path: Path) -> None:
    ledger = BudgetLedger(tmp_path / "l.sqlite", monthly_cap=10_000, create=True)
    prompt = "پرسش درباره‌ی هزینه"  # Persian: 2 bytes per letter in UTF-8
    d = ledger.reserve(prompt, max_output_tokens=300)
    assert d.allowed and d.reservation is not None
    assert d.reservation.amount == len(prompt.encode("utf-8")) + 300
    assert utf8_tokens(prompt) > len(prompt)  # bytes, not characters
    assert ledger.usage() == (0, d.reservation.amount)
    assert ledger.settle(d.reservation, 120)
    assert ledger.usage() == (120, 0)
    assert not ledger.settle(d.reservation, 120)  # settling twice records nothing


def test_exhausted_when_upper_bound_does_not_fit(tmp_path: Path) -> None:
    ledger = BudgetLedger(tmp_path / "l.sqlite", monthly_cap=1000, create=True)
    first = ledger.reserve("x" * 100, 800)
    assert first.allowed
    # 900 reserved; another 100-byte prompt with a 1-token limit would make 1001.
    second = ledger.reserve("y" * 100, 1)
    assert second.code == "EXHAUSTED" and not second.allowed
    assert ledger.settle(first.reservation, 50)
    assert ledger.reserve("y" * 100, 1).allowed


def test_unreachable_ledger_fails_closed(tmp_path: Path) -> None:
    # A directory where the ledger file should be: SQLite cannot open it.
    ledger = BudgetLedger(tmp_path, monthly_cap=10**9, create=True)
    d = ledger.reserve("hello", 10)
    assert d.code == "UNAVAILABLE" and not d.allowed


def test_ledger_removed_under_a_running_service_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    ledger = BudgetLedger(path, monthly_cap=10**9, create=True)
    assert ledger.reserve("a", 1).allowed
    path.unlink()
    path.mkdir()  # the file is gone and its name is now unusable
    assert ledger.reserve("a", 1).code == "UNAVAILABLE"


def test_deleting_the_ledger_does_not_reset_the_month(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    ledger = BudgetLedger(path, monthly_cap=1000, create=True)
    d = ledger.reserve_tokens(900)
    assert ledger.settle(d.reservation, 900)
    assert ledger.reserve_tokens(200).code == "EXHAUSTED"
    path.unlink()
    # the running service: never re-created behind its back, every turn refused
    assert ledger.reserve_tokens(200).code == "UNAVAILABLE"
    assert not path.exists()
    # a restart: a missing ledger is not a new month either
    restarted = BudgetLedger(path, monthly_cap=1000)
    d2 = restarted.reserve_tokens(10)
    assert d2.code == "UNAVAILABLE" and not path.exists()
    assert restarted.error is not None and "--new-ledger" in restarted.error
    # the rate limiter may create its file, but that file is not a ledger
    assert RateLimiter(path).hit("k").allowed
    assert BudgetLedger(path, monthly_cap=1000).reserve_tokens(10).code == "UNAVAILABLE"
    # only an operator's explicit decision starts a new ledger
    fresh = BudgetLedger(path, monthly_cap=1000, create=True)
    assert fresh.reserve_tokens(10).allowed


def test_a_locked_ledger_fails_closed_quickly(tmp_path: Path) -> None:
    import sqlite3
    import time

    from guardlex.runner.costs import LEDGER_BUSY_TIMEOUT

    path = tmp_path / "ledger.sqlite"
    ledger = BudgetLedger(path, monthly_cap=10**6, create=True)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the ledger
    try:
        t0 = time.monotonic()
        d = ledger.reserve_tokens(10)
        waited = time.monotonic() - t0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert d.code == "UNAVAILABLE"
    assert ledger.error is not None and "locked" in ledger.error
    assert LEDGER_BUSY_TIMEOUT <= 2.0
    assert waited < 15  # not the 30 s of 0.1 (a loose bound: this is no benchmark)
    assert ledger.reserve_tokens(10).allowed  # released: back to normal


def test_settle_records_at_most_the_reservation_and_rejects_bad_costs(tmp_path: Path) -> None:
    ledger = BudgetLedger(":memory:", monthly_cap=10_000)
    for bad, recorded in ((10**9, 500), (-7, 500), ("12", 500), (3.5, 500), (True, 500), (42, 42)):
        d = ledger.reserve_tokens(500)
        before = ledger.usage()[0]
        assert ledger.settle(d.reservation, bad)  # type: ignore[arg-type]
        assert ledger.usage() == (before + recorded, 0)
    spent, reserved = ledger.usage()
    assert spent <= 10_000 and reserved == 0


CAP = 10_000
AMOUNT = 700  # 14 reservations fit (9,800); the 15th would overspend


def _worker(path: str, attempts: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    ledger = BudgetLedger(path, monthly_cap=CAP)
    ok = 0
    for _ in range(attempts):
        if ledger.reserve_tokens(AMOUNT).allowed:
            ok += 1
    out.put(ok)


def test_concurrent_threads_and_processes_cannot_jointly_overspend(tmp_path: Path) -> None:
    path = str(tmp_path / "shared-ledger.sqlite")
    BudgetLedger(path, monthly_cap=CAP, create=True)  # create the ledger once
    # fork: the children need not re-import this test module (processes start before
    # any thread, and each opens its own SQLite connection).
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, 4, queue)) for _ in range(6)]
    for p in procs:
        p.start()
    thread_ok: list[int] = []
    lock = threading.Lock()

    def thread_worker() -> None:
        ledger = BudgetLedger(path, monthly_cap=CAP)
        n = sum(1 for _ in range(2) if ledger.reserve_tokens(AMOUNT).allowed)
        with lock:
            thread_ok.append(n)

    threads = [threading.Thread(target=thread_worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    proc_ok = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    granted = sum(thread_ok) + sum(proc_ok)
    # 56 attempts of 700 against a cap of 10,000: exactly 14 may pass, never 15.
    assert granted == CAP // AMOUNT
    spent, reserved = BudgetLedger(path, monthly_cap=CAP).usage()
    assert spent + reserved == granted * AMOUNT <= CAP


def test_rate_limiter_windows_with_a_fake_clock(tmp_path: Path) -> None:
    now = [1_000_000.0]
    limiter = RateLimiter(
        tmp_path / "r.sqlite",
        limits=(("minute", 60, 2), ("hour", 3600, 3), ("day", 86400, 100)),
        clock=lambda: now[0],
    )
    assert limiter.hit("1.2.3.4").allowed
    assert limiter.hit("1.2.3.4").allowed
    third = limiter.hit("1.2.3.4")
    assert third.code == "LIMITED" and third.window == "minute"
    assert limiter.hit("5.6.7.8").allowed  # per client key
    now[0] += 61
    assert limiter.hit("1.2.3.4").allowed  # a new minute, third request this hour
    now[0] += 61
    assert limiter.hit("1.2.3.4").window == "hour"


def test_rate_limiter_fails_open(tmp_path: Path) -> None:
    limiter = RateLimiter(tmp_path)  # a directory: unusable
    d = limiter.hit("1.2.3.4")
    assert d.code == "UNAVAILABLE" and d.allowed


def test_ledger_and_counters_can_live_in_the_store_file(tmp_path: Path, fake_packs) -> None:
    from guardlex.runner.build import build_store

    from .conftest import TINY_SITE

    path = tmp_path / "store.sqlite"
    store = build_store(TINY_SITE, path, packs=fake_packs)
    ledger = BudgetLedger(store.path, monthly_cap=1000, create=True)
    assert ledger.reserve("q", 10).allowed
    assert RateLimiter(store.path).hit("k").allowed
    assert store.chunk_count() == len(TINY_SITE.chunks)  # the store is untouched


# ------------------------------------------------------------ the attack, reproduced

ATTACK_CAP = 30_000
ATTACK_OUTPUT = 300  # max_tokens sent, and the output bound reserved


def _greedy(mode: str, h, body) -> None:  # type: ignore[no-untyped-def]
    """The providers the cap must hold against. ``ignores-max-tokens`` streams 58 KB of
    well-formed answer whatever ``max_tokens`` says; ``inflated-usage`` sends a short
    answer and then reports a million tokens of each kind."""
    from .test_runner_models import sse_event, sse_head

    sse_head(h)
    n = 2000 if mode == "ignores-max-tokens" else 2
    for _ in range(n):
        sse_event(h, {"choices": [{"delta": {"content": "The gate held sentences [1]. "}}]})
    usage = {"prompt_tokens": 10**6, "completion_tokens": 10**6}
    sse_event(h, {"choices": [], "usage": usage})
    sse_event(h, "[DONE]")


def _attack_worker(url: str, path: str, turns: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from guardlex.runner import _engine
    from guardlex.runner.build import build_store
    from guardlex.runner.models import OpenAIChatModel
    from guardlex.runner.pipeline import Runner

    from .conftest import TINY_SITE, FakePacks

    packs = _engine.PackView(FakePacks())
    store = build_store(TINY_SITE, ":memory:", packs=packs)
    runner = Runner(
        store,
        packs,
        model=lambda: OpenAIChatModel(url, "m", timeout=20),
        ledger=BudgetLedger(path, monthly_cap=ATTACK_CAP),
        max_output_tokens=ATTACK_OUTPUT,
    )
    codes = []
    for _ in range(turns):
        a = runner.ask("How many test answers did the sentence gate stop?")
        codes.append((a.code, a.trace, a.cost_tokens))
    out.put(codes)


@pytest.mark.parametrize("mode", ["ignores-max-tokens", "inflated-usage"])
def test_a_greedy_provider_cannot_push_spend_past_the_cap(tmp_path: Path, mode: str) -> None:
    """Eight processes share one ledger against a provider that overspends (0.1: 1,014,264
    spent on a 100,000 cap). Spend never passes the cap, and every turn is settled."""
    from .test_runner_models import _RawServer

    path = str(tmp_path / "ledger.sqlite")
    BudgetLedger(path, monthly_cap=ATTACK_CAP, create=True)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    with _RawServer(functools.partial(_greedy, mode)) as srv:
        queue = ctx.Queue()
        procs = [
            ctx.Process(target=_attack_worker, args=(srv.url, path, 4, queue)) for _ in range(8)
        ]
        for p in procs:
            p.start()
        results = [queue.get(timeout=300) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
    turns = [t for r in results for t in r]
    answered = [t for t in turns if t[0] != "BUDGET_EXHAUSTED"]
    refused = [t for t in turns if t[0] == "BUDGET_EXHAUSTED"]
    assert answered and refused  # the cap was reached
    # the attack happened and was flagged
    flag = "OUTPUT_CAPPED" if mode == "ignores-max-tokens" else "USAGE_OVER_RESERVATION"
    assert all(flag in t[1] for t in answered)
    spent, reserved = BudgetLedger(path, monthly_cap=ATTACK_CAP).usage()
    assert reserved == 0  # every reservation was settled
    assert spent == sum(t[2] for t in answered) <= ATTACK_CAP
    if mode == "ignores-max-tokens":
        assert srv.disconnects >= 1  # cut off: it could not send its 2,000 events
