"""The production backend: PostgreSQL with pgvector, behind the same interfaces as the
embedded SQLite store (:class:`guardlex.runner.store.Store`), the budget ledger and the
rate limiter (:mod:`guardlex.runner.costs`).

Selected by a URL (``postgresql://user@host:5432/db``). One database holds one site:

- ``gl_chunks``: text, the keyword tokens (normalised, Chinese segmented with jieba) and
  the dense vector (``vector(dim)``; one HNSW graph per locale, cosine distance).
- ``gl_terms``: a ``tsvector`` made from exactly those tokens (``array_to_tsvector``: the
  tokens are already normalised and segmented, so no text-search parser re-splits them),
  with a GIN index, in a narrow table so that ranking reads few pages.
- ``gl_records``, ``gl_owner``, ``gl_meta``: records, subject names, site metadata.
- ``gl_budget_ledger``, ``gl_budget_reservations``, ``gl_rate_counters``: the cost
  controls, shared by every process on every host that uses the database.
- ``gl_schema_version``: the applied migrations, one row each; migrations run in order
  under an advisory lock, so two processes starting at once migrate once.

Failures: a database that cannot be reached makes the budget refuse (fails closed) and
the rate limiter let requests through (fails open), as the SQLite versions do. The
driver is psycopg 3 (``pip install 'guardlex[postgres]'``); vectors travel as pgvector's
text form, so the ``pgvector`` Python package is not needed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from guardlex.runner._deps import require_numpy
from guardlex.runner.corpus import Chunk, Record, Site
from guardlex.runner.costs import (
    DEFAULT_LIMITS,
    BudgetDecision,
    RateDecision,
    Reservation,
    current_month,
    utf8_tokens,
)
from guardlex.runner.errors import LedgerUnavailableError, MissingDependencyError, StoreError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from guardlex.runner.embeddings import Embedder

#: The newest migration this code knows.
PG_SCHEMA_VERSION = 1
#: Advisory-lock key for migrations (any constant; the first 8 bytes of a hash).
_LOCK_KEY = int.from_bytes(hashlib.sha256(b"guardlex-migrations").digest()[:8], "big") >> 1
CONNECT_TIMEOUT_S = 5
#: HNSW search breadth: at least the candidates retrieval asks for (64), with margin.
EF_SEARCH = 128
#: ``maintenance_work_mem`` for the HNSW build (this transaction only).
HNSW_BUILD_MEMORY = "512MB"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE EXTENSION IF NOT EXISTS vector",
        "CREATE TABLE gl_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE gl_chunks (
            rowid BIGINT PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            doc_id TEXT NOT NULL,
            locale TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            date TEXT,
            text TEXT NOT NULL,
            tokens TEXT NOT NULL,
            vec vector
        )""",
        "CREATE INDEX gl_chunks_locale ON gl_chunks (locale)",
        # The keyword side in a narrow table of its own: ranking reads every matching
        # row's tsvector, and next to the text and the vector that is 3-4 times the pages.
        """CREATE TABLE gl_terms (
            rowid BIGINT PRIMARY KEY, locale TEXT NOT NULL, tsv TSVECTOR NOT NULL
        )""",
        "CREATE INDEX gl_terms_tsv ON gl_terms USING gin (tsv)",
        "CREATE INDEX gl_terms_locale ON gl_terms (locale)",
        """CREATE TABLE gl_records (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, start TEXT, "end" TEXT,
            current BOOLEAN NOT NULL, title JSONB NOT NULL, summary JSONB NOT NULL
        )""",
        "CREATE TABLE gl_owner (locale TEXT NOT NULL, name TEXT NOT NULL, pos INTEGER)",
        """CREATE TABLE gl_budget_ledger (
            month TEXT PRIMARY KEY,
            spent BIGINT NOT NULL DEFAULT 0,
            reserved BIGINT NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE gl_budget_reservations (
            id TEXT PRIMARY KEY, month TEXT NOT NULL, amount BIGINT NOT NULL,
            actual BIGINT, created DOUBLE PRECISION NOT NULL, settled DOUBLE PRECISION
        )""",
        """CREATE TABLE gl_rate_counters (
            key TEXT NOT NULL, win TEXT NOT NULL, bucket BIGINT NOT NULL,
            count INTEGER NOT NULL, PRIMARY KEY (key, win)
        )""",
    ),
}


def is_pg_url(spec: object) -> bool:
    """True for ``postgresql://`` and ``postgres://`` URLs."""
    return isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    head, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    cred, _, host = rest.rpartition("@")
    user = cred.split(":", 1)[0]
    return f"{head}://{user}{':***' if ':' in cred else ''}@{host}"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise MissingDependencyError(
            "the PostgreSQL backend needs its extra: pip install 'guardlex[postgres]'"
        ) from exc
    return psycopg


def _vec_text(vec: Any) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"


class Pool:
    """A small thread-safe pool of autocommit connections to one database.

    Connections are opened on demand (at most ``size`` at once; further callers wait)
    and a connection that raised a connection-level error is closed, not reused. The
    migrations run on the first connection that succeeds.
    """

    def __init__(self, url: str, size: int = 4, connect_timeout: int = CONNECT_TIMEOUT_S) -> None:
        self.url = url
        self.size = size
        self._timeout = connect_timeout
        self._idle: list[Any] = []
        self._count = 0
        self._cond = threading.Condition()
        self._migrated = False

    def _connect(self) -> Any:
        psycopg = _psycopg()
        conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self._timeout)
        if not self._migrated:
            migrate(conn)
            self._migrated = True
        conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        return conn

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        psycopg = _psycopg()
        with self._cond:
            while not self._idle and self._count >= self.size:
                self._cond.wait(timeout=30)
            conn = self._idle.pop() if self._idle else None
            if conn is None:
                self._count += 1
        if conn is None:
            try:
                conn = self._connect()
            except BaseException:
                with self._cond:
                    self._count -= 1
                    self._cond.notify()
                raise
        broken = False
        try:
            yield conn
        except psycopg.OperationalError:
            broken = True
            raise
        finally:
            if broken or conn.closed or conn.info.transaction_status != 0:  # 0 = IDLE
                with contextlib.suppress(Exception):
                    conn.close()
                with self._cond:
                    self._count -= 1
                    self._cond.notify()
            else:
                with self._cond:
                    self._idle.append(conn)
                    self._cond.notify()

    def close(self) -> None:
        with self._cond:
            for conn in self._idle:
                with contextlib.suppress(Exception):
                    conn.close()
            self._count -= len(self._idle)
            self._idle.clear()


def migrate(conn: Any) -> int:
    """Apply the migrations this database lacks; return its schema version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS gl_schema_version ("
            "version INTEGER PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT max(version) FROM gl_schema_version").fetchone()
        current = int(row[0] or 0)
        if current > PG_SCHEMA_VERSION:
            raise StoreError(
                f"database schema version {current} is newer than this guardlex "
                f"({PG_SCHEMA_VERSION}); upgrade guardlex"
            )
        for version in range(current + 1, PG_SCHEMA_VERSION + 1):
            for stmt in MIGRATIONS[version]:
                conn.execute(stmt)
            conn.execute("INSERT INTO gl_schema_version(version) VALUES (%s)", (version,))
    return PG_SCHEMA_VERSION


def schema_version(url: str) -> int:
    """The applied schema version of the database at ``url`` (migrating it first)."""
    pool = Pool(url, size=1)
    try:
        with pool.connection() as conn:
            row = conn.execute("SELECT max(version) FROM gl_schema_version").fetchone()
            return int(row[0])
    finally:
        pool.close()


# ---------------------------------------------------------------- the store


class PgStore:
    """Chunks, vectors, records, subject names and metadata in PostgreSQL + pgvector.

    Same methods as the SQLite :class:`~guardlex.runner.store.Store`; retrieval cannot
    tell them apart except by speed and by HNSW being approximate on large corpora.
    """

    backend = "postgresql"

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self.path = redact(pool.url)
        self._sizes: dict[str, int] | None = None

    @classmethod
    def open(cls, url: str, *, create: bool = True, pool_size: int = 4) -> PgStore:
        psycopg = _psycopg()
        pool = Pool(url, size=pool_size)
        try:
            with pool.connection() as conn:
                if not create:
                    row = conn.execute("SELECT value FROM gl_meta WHERE key = 'chunks'").fetchone()
                    if row is None:
                        raise StoreError(
                            f"{redact(url)}: no site indexed in this database; build one with "
                            "`guardlex index PATH --store URL`"
                        )
        except psycopg.Error as exc:
            pool.close()
            raise StoreError(f"{redact(url)}: cannot open the database ({_oneline(exc)})") from exc
        return cls(pool)

    def close(self) -> None:
        self._pool.close()

    def _one(self, query: Any, params: Sequence[Any] = ()) -> Any:
        with self._pool.connection() as conn:
            return conn.execute(query, params).fetchone()

    def _all(self, query: Any, params: Sequence[Any] = ()) -> list[Any]:
        with self._pool.connection() as conn:
            return list(conn.execute(query, params).fetchall())

    def meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM gl_meta WHERE key = %s", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO gl_meta VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value),
            )

    @property
    def embedder_name(self) -> str | None:
        return self.meta("embedder")

    def chunk_count(self) -> int:
        return int(self._one("SELECT count(*) FROM gl_chunks")[0])

    # ------------------------------------------------------------ building
    def build(
        self,
        site: Site,
        embedder: Embedder,
        tokenize: Callable[[str], Sequence[str]],
        progress: Callable[[int, int], None] | None = None,
        batch: int = 512,
        fingerprint: str = "",
        meta: dict[str, str] | None = None,
    ) -> None:
        """Replace the database's site with ``site`` in one transaction (readers keep the
        old site until it commits); the HNSW index is built after the rows are loaded."""
        from guardlex.runner.store import corpus_fingerprint, embed_batches

        np_ = require_numpy()
        sql = _psycopg().sql
        chunks = sorted(site.chunks, key=lambda c: (c.locale, c.id))
        total = len(chunks)
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("LOCK TABLE gl_chunks IN ACCESS EXCLUSIVE MODE")
            old = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'gl_chunks' "
                "AND indexname LIKE 'gl\\_chunks\\_vec%%'"
            ).fetchall()
            for (name,) in old:
                conn.execute(f'DROP INDEX IF EXISTS "{name}"')
            conn.execute("TRUNCATE gl_chunks, gl_terms, gl_records, gl_owner, gl_meta")
            conn.execute("DROP INDEX IF EXISTS gl_terms_tsv")
            conn.execute(f"ALTER TABLE gl_chunks ALTER COLUMN vec TYPE vector({int(embedder.dim)})")
            titles: dict[str, list[str]] = {}
            with conn.cursor().copy(
                "COPY gl_chunks (rowid, id, doc_id, locale, kind, title, date, text, tokens, vec)"
                " FROM STDIN"
            ) as copy:
                for start, part, text_toks, vecs in embed_batches(
                    chunks, embedder, tokenize, batch
                ):
                    vecs = np_.asarray(vecs, dtype=np_.float32)
                    for i, ch in enumerate(part):
                        if ch.title not in titles:
                            titles[ch.title] = list(tokenize(ch.title))
                        toks = " ".join(titles[ch.title] + text_toks[i])
                        copy.write_row(
                            (
                                start + i + 1,
                                ch.id,
                                ch.doc_id,
                                ch.locale,
                                ch.kind,
                                ch.title,
                                ch.date,
                                ch.text,
                                toks,
                                _vec_text(vecs[i]),
                            )
                        )
                    if progress is not None:
                        progress(start + len(part), total)
            conn.execute(
                "INSERT INTO gl_terms SELECT rowid, locale, "
                "array_to_tsvector(array_remove(string_to_array(tokens, ' '), '')) FROM gl_chunks"
            )
            conn.execute("CREATE INDEX gl_terms_tsv ON gl_terms USING gin (tsv)")
            # One HNSW graph per locale (a partial index): retrieval searches the reader's
            # locale, and a filtered scan of one graph over all locales visits about ten
            # times the nodes (measured: 50 ms against 2 ms at 100,000 chunks). The graph
            # is built in memory when it fits, much faster than on disk.
            conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
            for i, loc in enumerate(sorted({ch.locale for ch in chunks})):
                conn.execute(
                    sql.SQL(
                        "CREATE INDEX {} ON gl_chunks USING hnsw (vec vector_cosine_ops) "
                        "WHERE locale = {}"
                    ).format(sql.Identifier(f"gl_chunks_vec_{i}"), sql.Literal(loc))
                )
            for r in site.records:
                conn.execute(
                    "INSERT INTO gl_records VALUES (%s,%s,%s,%s,%s,%s,%s)",
                    (
                        r.id,
                        r.kind,
                        r.start,
                        r.end,
                        bool(r.current),
                        json.dumps(dict(r.title), ensure_ascii=False),
                        json.dumps(dict(r.summary), ensure_ascii=False),
                    ),
                )
            for loc, names in site.owner_names.items():
                for pos, name in enumerate(names):
                    conn.execute("INSERT INTO gl_owner VALUES (%s,%s,%s)", (loc, name, pos))
            values = {
                "store_schema": str(PG_SCHEMA_VERSION),
                "embedder": embedder.name,
                "dim": str(embedder.dim),
                "chunks": str(total),
                "fingerprint": fingerprint,
                "corpus": corpus_fingerprint(chunks),
                **(meta or {}),
            }
            for k, v in values.items():
                conn.execute("INSERT INTO gl_meta VALUES (%s, %s)", (k, v))
            conn.execute("ANALYZE gl_chunks")
            conn.execute("ANALYZE gl_terms")
        self._sizes = None

    # ------------------------------------------------------------ reading
    def _locale_sizes(self) -> dict[str, int]:
        if self._sizes is None:
            rows = self._all("SELECT locale, count(*) FROM gl_chunks GROUP BY locale")
            self._sizes = {str(r[0]): int(r[1]) for r in rows}
        return self._sizes

    def has_locale(self, locale: str | None) -> bool:
        return locale in self._locale_sizes()

    def locale_size(self, locale: str | None) -> int:
        sizes = self._locale_sizes()
        if locale is None:
            return sum(sizes.values())
        return sizes.get(locale, 0)

    def dense_top(self, qvec: np.ndarray, locale: str | None, n: int) -> list[tuple[int, float]]:
        """The ``n`` chunks of ``locale`` (all when None) nearest by cosine (HNSW)."""
        if n <= 0 or not self._locale_sizes():
            return []
        sql = _psycopg().sql
        v = _vec_text(qvec)
        # The locale as a literal, so the planner always picks that locale's partial
        # index (a generic plan of a prepared statement could not). All locales (the
        # reader's locale has no chunks): an exact scan.
        where = sql.SQL("WHERE locale = {} ").format(sql.Literal(locale)) if locale else sql.SQL("")
        query = sql.SQL(
            "SELECT rowid, 1 - (vec <=> %s::vector) FROM gl_chunks {}"
            "ORDER BY vec <=> %s::vector LIMIT %s"
        ).format(where)
        rows = self._all(query, [v, v, n])
        out = [(int(r[0]), float(r[1])) for r in rows]
        out.sort(key=lambda t: (-t[1], t[0]))  # iterative scans may return rows out of order
        return out

    def cosines(self, qvec: np.ndarray, rowids: Iterable[int]) -> dict[int, float]:
        ids = list(rowids)
        if not ids:
            return {}
        rows = self._all(
            "SELECT rowid, 1 - (vec <=> %s::vector) FROM gl_chunks WHERE rowid = ANY(%s)",
            (_vec_text(qvec), ids),
        )
        return {int(r[0]): float(r[1]) for r in rows}

    def keyword_candidates(
        self, tokens: Sequence[str], locale: str | None, n: int
    ) -> list[tuple[int, float]]:
        """Chunks whose tokens contain any of ``tokens``, best ``ts_rank`` first.

        The score is the negated rank, so that lower is better as with SQLite's BM25.
        """
        toks = [t for t in dict.fromkeys(tokens) if t]
        if not toks:
            return []
        query = " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in toks)
        where = "AND locale = %s " if locale is not None else ""
        params: list[Any] = [query, query, *([locale] if locale is not None else []), n]
        psycopg = _psycopg()
        try:
            rows = self._all(
                "SELECT rowid, -ts_rank(tsv, %s::tsquery) AS score FROM gl_terms "
                f"WHERE tsv @@ %s::tsquery {where}ORDER BY score, rowid LIMIT %s",
                params,
            )
        except psycopg.Error as exc:
            raise StoreError(f"keyword search failed: {_oneline(exc)}") from exc
        return [(int(r[0]), float(r[1])) for r in rows]

    def chunks(self, rowids: Iterable[int]) -> dict[int, tuple[Chunk, frozenset[str]]]:
        ids = list(dict.fromkeys(rowids))
        if not ids:
            return {}
        rows = self._all(
            "SELECT rowid, id, doc_id, locale, kind, title, date, text, tokens "
            "FROM gl_chunks WHERE rowid = ANY(%s)",
            (ids,),
        )
        return {int(r[0]): (Chunk(*r[1:8]), frozenset(r[8].split())) for r in rows}

    def chunk_by_id(self, chunk_id: str) -> Chunk | None:
        row = self._one(
            "SELECT id, doc_id, locale, kind, title, date, text FROM gl_chunks WHERE id = %s",
            (chunk_id,),
        )
        return None if row is None else Chunk(*row)

    def records(self) -> list[Record]:
        rows = self._all(
            'SELECT id, kind, start, "end", current, title, summary FROM gl_records ORDER BY id'
        )
        return [Record(r[0], r[1], r[2], r[3], bool(r[4]), r[5], r[6]) for r in rows]

    def owner_names(self, locale: str | None = None) -> tuple[str, ...]:
        if locale is None:
            rows = self._all("SELECT name FROM gl_owner ORDER BY locale, pos")
        else:
            rows = self._all("SELECT name FROM gl_owner WHERE locale = %s ORDER BY pos", (locale,))
        return tuple(dict.fromkeys(r[0] for r in rows))

    def titles(self, locale: str | None) -> list[str]:
        rows = self._all(
            "SELECT DISTINCT title FROM gl_chunks WHERE locale = %s ORDER BY title", (locale,)
        )
        return [r[0] for r in rows]

    def locales(self) -> list[str]:
        return sorted(self._locale_sizes())


def _tokens(value: object) -> int | None:
    """``value`` as a token count (an int in [0, 2**53]), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**53:
        return None
    return value


def _oneline(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# ---------------------------------------------------------------- cost controls


class PgBudgetLedger:
    """The monthly token ledger in PostgreSQL, shared by every process and host.

    The reservation is one statement: an ``UPDATE ... WHERE spent + reserved + amount
    <= cap`` that also writes the reservation row (a data-modifying CTE). Concurrent
    updates of the month's row queue on its row lock and each re-checks the condition
    against the row as the previous one left it, so no interleaving can overspend.
    Any database error refuses the turn (``UNAVAILABLE``, fail closed).
    """

    def __init__(
        self,
        url: str,
        monthly_cap: int,
        clock: Callable[[], float] = time.time,
        pool: Pool | None = None,
        pool_size: int = 4,
        *,
        create: bool = True,
    ) -> None:
        """``create`` is accepted for symmetry with the SQLite ledger: the tables are
        made by the database's migrations, and a dropped table is an error (refused)."""
        if _tokens(monthly_cap) is None:
            raise ValueError("monthly_cap must be an int from 0 to 2**53")
        self.monthly_cap = monthly_cap
        self._clock = clock
        self.path = redact(url)
        self._pool = pool or Pool(url, size=pool_size)
        self.error: str | None = None

    def _fail(self, exc: BaseException) -> None:
        self.error = f"{self.path}: {_oneline(exc)}"

    def reserve(self, prompt: str, max_output_tokens: int) -> BudgetDecision:
        amount = utf8_tokens(prompt) + max(0, int(max_output_tokens))
        return self.reserve_tokens(amount)

    def reserve_tokens(self, amount: int) -> BudgetDecision:
        if _tokens(amount) is None:
            raise ValueError(f"a reservation must be an int from 0 to 2**53, not {amount!r}")
        month = current_month(self._clock())
        rid = uuid.uuid4().hex
        try:
            with self._pool.connection() as conn:
                conn.execute(
                    "INSERT INTO gl_budget_ledger(month) VALUES (%s) ON CONFLICT DO NOTHING",
                    (month,),
                )
                row = conn.execute(
                    "WITH r AS (UPDATE gl_budget_ledger SET reserved = reserved + %(a)s "
                    "WHERE month = %(m)s AND spent + reserved + %(a)s <= %(cap)s "
                    "RETURNING spent, reserved) "
                    "INSERT INTO gl_budget_reservations(id, month, amount, created) "
                    "SELECT %(id)s, %(m)s, %(a)s, %(t)s FROM r "
                    "RETURNING (SELECT spent + reserved FROM r)",
                    {
                        "a": amount,
                        "m": month,
                        "cap": self.monthly_cap,
                        "id": rid,
                        "t": self._clock(),
                    },
                ).fetchone()
                if row is None:
                    used = conn.execute(
                        "SELECT spent + reserved FROM gl_budget_ledger WHERE month = %s",
                        (month,),
                    ).fetchone()
                    return BudgetDecision("EXHAUSTED", None, int(used[0]), self.monthly_cap)
        except Exception as exc:  # unreachable, broken, anything: the spend is unknown
            self._fail(exc)
            return BudgetDecision("UNAVAILABLE", None, -1, self.monthly_cap)
        return BudgetDecision("OK", Reservation(rid, month, amount), int(row[0]), self.monthly_cap)

    def settle(self, reservation: Reservation, actual_tokens: int) -> bool:
        """Record the actual cost and release the reservation (once; False otherwise).

        At most the reservation is recorded, and a cost that is not a token count records
        the whole reservation, as with the SQLite ledger. Never raises.
        """
        checked = _tokens(actual_tokens)
        actual = reservation.amount if checked is None else min(checked, reservation.amount)
        try:
            with self._pool.connection() as conn:
                row = conn.execute(
                    "WITH s AS (UPDATE gl_budget_reservations SET actual = %(x)s, settled = %(t)s"
                    " WHERE id = %(id)s AND settled IS NULL RETURNING month, amount) "
                    "UPDATE gl_budget_ledger l SET reserved = l.reserved - s.amount, "
                    "spent = l.spent + %(x)s FROM s WHERE l.month = s.month RETURNING 1",
                    {"x": actual, "t": self._clock(), "id": reservation.id},
                ).fetchone()
        except Exception as exc:
            self._fail(exc)
            return False
        return row is not None

    def usage(self, month: str | None = None) -> tuple[int, int]:
        m = month or current_month(self._clock())
        try:
            with self._pool.connection() as conn:
                row = conn.execute(
                    "SELECT spent, reserved FROM gl_budget_ledger WHERE month = %s", (m,)
                ).fetchone()
        except Exception as exc:
            raise LedgerUnavailableError(f"budget ledger unavailable: {_oneline(exc)}") from exc
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def close(self) -> None:
        self._pool.close()


class PgRateLimiter:
    """Fixed-window counters per client key in PostgreSQL (fails open).

    One transaction per request: the key's window rows are locked (``FOR UPDATE``), and
    either all are counted or, when one window is full, none.
    """

    def __init__(
        self,
        url: str,
        limits: tuple[tuple[str, int, int], ...] = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
        pool: Pool | None = None,
        pool_size: int = 4,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self.path = redact(url)
        self._pool = pool or Pool(url, size=pool_size)
        self.error: str | None = None

    def hit(self, key: str) -> RateDecision:
        now = self._clock()
        try:
            with self._pool.connection() as conn, conn.transaction():
                for name, _seconds, _allowed in self.limits:
                    conn.execute(
                        "INSERT INTO gl_rate_counters VALUES (%s, %s, -1, 0) "
                        "ON CONFLICT DO NOTHING",
                        (key, name),
                    )
                rows = conn.execute(
                    "SELECT win, bucket, count FROM gl_rate_counters WHERE key = %s FOR UPDATE",
                    (key,),
                ).fetchall()
                have = {r[0]: (int(r[1]), int(r[2])) for r in rows}
                updates = []
                for name, seconds, allowed in self.limits:
                    bucket = int(now // seconds)
                    b, count = have.get(name, (-1, 0))
                    count = count if b == bucket else 0
                    if count >= allowed:
                        return RateDecision("LIMITED", name)  # the transaction rolls back
                    updates.append((bucket, count + 1, key, name))
                conn.cursor().executemany(
                    "UPDATE gl_rate_counters SET bucket = %s, count = %s "
                    "WHERE key = %s AND win = %s",
                    updates,
                )
        except Exception as exc:  # a broken counter must not take the site down
            self.error = f"{self.path}: {_oneline(exc)}"
            return RateDecision("UNAVAILABLE")
        return RateDecision("OK")

    def close(self) -> None:
        self._pool.close()
