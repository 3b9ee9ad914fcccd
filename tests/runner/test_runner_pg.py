"""The PostgreSQL backend: migrations, parity with SQLite, and the shared cost controls.

Every test here that touches a server carries the ``postgres`` marker; the server is
started once per session by ``conftest.pg_server`` and a failure to start FAILS them.
The budget tests run on both ledgers (SQLite file and PostgreSQL) through one fixture.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guardlex.runner import _engine
from guardlex.runner.build import build_store
from guardlex.runner.costs import BudgetLedger, RateLimiter
from guardlex.runner.errors import StoreError
from guardlex.runner.pg import (
    PG_SCHEMA_VERSION,
    PgBudgetLedger,
    PgRateLimiter,
    PgStore,
    is_pg_url,
    redact,
    schema_version,
)
from guardlex.runner.retrieval import Retriever
from guardlex.runner.store import Store, open_store

from .conftest import TINY_SITE

pg = pytest.mark.postgres
#: A port nothing listens on: connection refused at once.
DEAD_URL = "postgresql://postgres@127.0.0.1:9/none"


def test_urls_select_the_backend_and_passwords_never_show() -> None:
    assert is_pg_url("postgresql://u@h/db") and is_pg_url("postgres://h/db")
    assert not is_pg_url("store.sqlite") and not is_pg_url(":memory:")
    assert redact("postgresql://sam:s3cret@db.example:5432/site") == (
        "postgresql://sam:***@db.example:5432/site"
    )
    assert "s3cret" not in redact("postgresql://sam:s3cret@h/x")


def test_unreachable_database_is_one_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as info:
        open_store("postgresql://sam:s3cret@127.0.0.1:9/none")
    assert "s3cret" not in str(info.value) and "127.0.0.1:9" in str(info.value)


@pg
def test_migrations_are_versioned_and_idempotent(pg_server: Any) -> None:
    url = pg_server.new_database(migrated=False)
    assert schema_version(url) == PG_SCHEMA_VERSION
    assert schema_version(url) == PG_SCHEMA_VERSION  # second run applies nothing
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version FROM gl_schema_version ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, PG_SCHEMA_VERSION + 1))
        idx = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'gl_terms'")
        assert any("gin (tsv)" in r[0] for r in idx.fetchall())


@pg
def test_newer_schema_is_refused(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO gl_schema_version(version) VALUES (999)")
    with pytest.raises(StoreError, match="newer"):
        open_store(pg_url)


@pg
def test_round_trip_and_hnsw_index(pg_url: str, fake_packs) -> None:
    build_store(TINY_SITE, pg_url, packs=fake_packs).close()
    with pytest.raises(StoreError, match="no site indexed"):
        PgStore.open(pg_url.rsplit("/", 1)[0] + "/gl_template", create=False)
    store = open_store(pg_url)
    assert store.backend == "postgresql"
    assert store.chunk_count() == len(TINY_SITE.chunks)
    assert store.embedder_name == "hashing-bow-256"
    assert [r.id for r in store.records()] == sorted(r.id for r in TINY_SITE.records)
    assert store.owner_names("en") == ("Dana Reyes", "Dana")
    assert store.locales() == ["en", "es", "zh"]
    import psycopg

    with psycopg.connect(pg_url) as conn:
        idx = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'gl_chunks_vec_%' "
            "ORDER BY indexname"
        ).fetchall()
        # one HNSW graph per locale (a partial index), used by a search in that locale
        assert len(idx) == 3 and all("hnsw" in r[0] and "WHERE (locale =" in r[0] for r in idx)
    # rebuilding replaces the site, it never appends
    build_store(TINY_SITE, pg_url, packs=fake_packs).close()
    assert open_store(pg_url).chunk_count() == len(TINY_SITE.chunks)


@pg
def test_keyword_search_keeps_hindi_and_chinese_tokens_whole(pg_url: str, fake_packs) -> None:
    from guardlex.runner.corpus import Chunk, Site

    hi = "दाना ने विश्लेषण किया और परिणाम लिखे"
    site = Site(
        (
            Chunk("hi/a/1", "a", "hi", "article", "t", None, hi),
            Chunk("zh/a/1", "a", "zh", "article", "t", None, "语义缓存在相似度高于时复用答案"),
        )
    )
    store = build_store(site, pg_url, packs=fake_packs)
    toks = _engine.keywords(hi)
    assert store.keyword_candidates([toks[2]], "hi", 5)  # a word with matras, whole
    assert store.keyword_candidates(["语义", "缓存"], "zh", 5)
    assert store.keyword_candidates(["语"], "zh", 5) == []  # never a piece of a word
    for token in ['"', "'", "\\", "a:b", "!", "&", "|", "(", "x'y", "a:*"]:
        store.keyword_candidates([token, "语义"], "zh", 5)  # never read as tsquery syntax


QUESTIONS = [
    ("How did the semantic cache reuse answers?", "en"),
    ("sentence gate citation markers", "en"),
    ("¿Qué tasa de aciertos alcanzó la caché semántica?", "es"),
    ("语义缓存的命中率", "zh"),
    ("What did Dana build for pricing?", "en"),
    ("crane operator licence", "en"),
]


@pg
def test_retrieval_is_the_same_on_both_backends(pg_url: str, fake_packs) -> None:
    sqlite_store = build_store(TINY_SITE, ":memory:", packs=fake_packs)
    pg_store = build_store(TINY_SITE, pg_url, packs=fake_packs)
    for q, loc in QUESTIONS:
        a, b = (_retriever(s, fake_packs).search(q, loc) for s in (sqlite_store, pg_store))
        assert [h.chunk.id for h in a.hits] == [h.chunk.id for h in b.hits], q
        assert a.best == pytest.approx(b.best, abs=1e-5), q
        assert a.passed == b.passed


def _retriever(store: Any, packs: _engine.PackView) -> Retriever:
    from guardlex.runner.embeddings import make_embedder

    return Retriever(
        store,
        lambda: make_embedder("hashing-bow-256", _engine.keywords, packs.all_stopwords),
        _engine.keywords,
        packs.all_stopwords,
        _engine.has_han,
    )


# ---------------------------------------------------------------- cost controls

LedgerFactory = Callable[[int], Any]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pg)])
def ledger_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    path = str(tmp_path / "ledger.sqlite")
    _open_ledger(path, 1, create=True)
    return path


def _open_ledger(spec: str, cap: int, create: bool = False) -> Any:
    if is_pg_url(spec):
        return PgBudgetLedger(spec, monthly_cap=cap)
    try:
        return BudgetLedger(spec, monthly_cap=cap, create=create)  # type: ignore[call-arg]
    except TypeError:  # a ledger without the create flag creates its file itself
        return BudgetLedger(spec, monthly_cap=cap)


def test_budget_reserves_settles_and_refuses_at_the_cap(ledger_spec: str) -> None:
    ledger = _open_ledger(ledger_spec, 1000)
    d = ledger.reserve_tokens(600)
    assert d.allowed and d.spent == 600
    assert ledger.reserve_tokens(500).code == "EXHAUSTED"  # 600 + 500 > 1000
    assert ledger.settle(d.reservation, 250)
    assert not ledger.settle(d.reservation, 250)  # once only
    assert ledger.usage() == (250, 0)
    assert ledger.reserve_tokens(750).allowed  # 250 + 750 == cap: allowed
    assert ledger.reserve_tokens(1).code == "EXHAUSTED"


@pg
def test_settle_never_records_more_than_the_reservation(pg_url: str) -> None:
    ledger = PgBudgetLedger(pg_url, monthly_cap=1000)
    d = ledger.reserve_tokens(100)
    assert ledger.settle(d.reservation, 10**9)
    assert ledger.usage() == (100, 0)


CAP = 10_000
AMOUNT = 700


def _host(spec: str, threads: int, tries: int, out: Any) -> None:
    """One "host": its own ledger object (its own connection pool), several threads."""
    ledger = _open_ledger(spec, CAP)
    granted: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        n = 0
        for _ in range(tries):
            d = ledger.reserve_tokens(AMOUNT)
            if d.allowed:
                n += 1
        with lock:
            granted.append(n)

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put(sum(granted))


def test_two_hosts_with_their_own_pools_never_overspend(ledger_spec: str) -> None:
    """Two processes, each with its own pool and 6 threads, 60 attempts of 700 against a
    cap of 10,000: exactly 14 may pass, never 15."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    hosts = [ctx.Process(target=_host, args=(ledger_spec, 6, 5, queue)) for _ in range(2)]
    for p in hosts:
        p.start()
    granted = [queue.get(timeout=120) for _ in hosts]
    for p in hosts:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert sum(granted) == CAP // AMOUNT
    spent, reserved = _open_ledger(ledger_spec, CAP).usage()
    assert spent + reserved == sum(granted) * AMOUNT <= CAP


def test_unreachable_postgres_ledger_fails_closed_and_limiter_open() -> None:
    ledger = PgBudgetLedger(DEAD_URL, monthly_cap=10**6)
    d = ledger.reserve("a prompt", 100)
    assert d.code == "UNAVAILABLE" and not d.allowed
    assert ledger.error and "127.0.0.1:9" in ledger.error
    limiter = PgRateLimiter(DEAD_URL)
    r = limiter.hit("203.0.113.9")
    assert r.code == "UNAVAILABLE" and r.allowed


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pg)])
def limiter_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Any]:
    if request.param == "postgres":
        url = str(request.getfixturevalue("pg_url"))
        return lambda **kw: PgRateLimiter(url, **kw)
    path = str(tmp_path / "rate.sqlite")
    return lambda **kw: RateLimiter(path, **kw)


def test_rate_windows_are_shared_and_reset(limiter_factory: Callable[..., Any]) -> None:
    now = [1_000_000.0]
    limits = (("minute", 60, 3), ("hour", 3600, 5))
    a = limiter_factory(limits=limits, clock=lambda: now[0])
    b = limiter_factory(limits=limits, clock=lambda: now[0])  # another process's view
    assert [a.hit("k").code for _ in range(2)] + [b.hit("k").code] == ["OK"] * 3
    assert a.hit("k").code == "LIMITED" and b.hit("k").window == "minute"
    assert a.hit("other").code == "OK"  # per key
    now[0] += 61
    assert b.hit("k").code == "OK" and a.hit("k").code == "OK"
    d = a.hit("k")
    assert d.code == "LIMITED" and d.window == "hour"


@pg
def test_runner_on_postgres_answers_refuses_and_meters(pg_url: str, fake_packs) -> None:
    from guardlex.runner.pipeline import Runner

    store = build_store(TINY_SITE, pg_url, packs=fake_packs)
    ledger = PgBudgetLedger(pg_url, monthly_cap=10**6)
    runner = Runner(store, fake_packs, ledger=ledger, rate_limiter=PgRateLimiter(pg_url))
    a = runner.ask("How did the semantic cache reuse answers?", locale="en", client="c1")
    assert a.code == "ANSWERED" and a.sources
    assert runner.ask("What is her price?", client="c1").code == "REFUSED"
    spent, reserved = ledger.usage()
    assert spent > 0 and reserved == 0


def test_sqlite_store_still_opens_by_path(tmp_path: Path, fake_packs) -> None:
    path = tmp_path / "s.sqlite"
    build_store(TINY_SITE, path, packs=fake_packs).close()
    assert isinstance(open_store(str(path)), Store)


@pg
def test_ask_keeps_the_budget_in_the_sites_database(
    pg_url: str, fake_packs, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from guardlex.cli import main

    build_store(TINY_SITE, pg_url, packs=fake_packs).close()
    q = "How did the semantic cache reuse answers?"
    argv = ["ask", q, "--store", pg_url, "--ledger", pg_url, "--locale", "en", "--json"]
    assert main([*argv, "--monthly-cap", "10"]) == 0
    assert json.loads(capsys.readouterr().out)["code"] == "BUDGET_EXHAUSTED"
    assert main([*argv, "--client", "203.0.113.7"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["code"] == "ANSWERED" and "RATE_LIMIT_UNAVAILABLE" not in out["trace"]
    spent, reserved = PgBudgetLedger(pg_url, monthly_cap=1).usage()
    assert spent == out["cost_tokens"] > 0 and reserved == 0
    import psycopg

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT key, count FROM gl_rate_counters ORDER BY win").fetchall()
    assert rows and all(r == ("203.0.113.7", 1) for r in rows)
