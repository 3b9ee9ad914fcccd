"""Budget guard (atomic, fails closed) and rate limiter (fails open)."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from guardlex.runner.costs import BudgetLedger, RateLimiter, utf8_tokens


def test_reservation_is_prompt_bytes_plus_full_output_limit(tmp_path: Path) -> None:
    ledger = BudgetLedger(tmp_path / "l.sqlite", monthly_cap=10_000)
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
    ledger = BudgetLedger(tmp_path / "l.sqlite", monthly_cap=1000)
    first = ledger.reserve("x" * 100, 800)
    assert first.allowed
    # 900 reserved; another 100-byte prompt with a 1-token limit would make 1001.
    second = ledger.reserve("y" * 100, 1)
    assert second.code == "EXHAUSTED" and not second.allowed
    assert ledger.settle(first.reservation, 50)
    assert ledger.reserve("y" * 100, 1).allowed


def test_unreachable_ledger_fails_closed(tmp_path: Path) -> None:
    # A directory where the ledger file should be: SQLite cannot open it.
    ledger = BudgetLedger(tmp_path, monthly_cap=10**9)
    d = ledger.reserve("hello", 10)
    assert d.code == "UNAVAILABLE" and not d.allowed


def test_ledger_removed_under_a_running_service_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    ledger = BudgetLedger(path, monthly_cap=10**9)
    assert ledger.reserve("a", 1).allowed
    path.unlink()
    path.mkdir()  # the file is gone and its name is now unusable
    assert ledger.reserve("a", 1).code == "UNAVAILABLE"


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
    BudgetLedger(path, monthly_cap=CAP)  # create the schema once
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
    ledger = BudgetLedger(store.path, monthly_cap=1000)
    assert ledger.reserve("q", 10).allowed
    assert RateLimiter(store.path).hit("k").allowed
    assert store.chunk_count() == len(TINY_SITE.chunks)  # the store is untouched
