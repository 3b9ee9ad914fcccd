"""Cost controls: the monthly budget guard (fails closed) and rate limits (fail open).

The guard reserves an upper bound of a turn's cost *before* the model is called: the
prompt counted as one token per UTF-8 byte (a byte-level BPE token is a non-empty byte
sequence, so no text in any language has more tokens than bytes) plus the full output
limit. The reservation is one ``BEGIN IMMEDIATE`` transaction, so concurrent requests,
threads or processes, cannot jointly overspend. If the ledger cannot be read or written
the spend is unknown, and the only safe reading of an unknown spend under a hard cap is
"exhausted". Rate limits are the opposite: a broken counter must not take the site down.
"""

from __future__ import annotations

import datetime as _dt
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from guardlex.runner.errors import LedgerUnavailableError

_LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS budget_ledger (
    month TEXT PRIMARY KEY, spent INTEGER NOT NULL DEFAULT 0, reserved INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS budget_reservations (
    id TEXT PRIMARY KEY, month TEXT NOT NULL, amount INTEGER NOT NULL,
    actual INTEGER, created REAL NOT NULL, settled REAL
);
CREATE TABLE IF NOT EXISTS rate_counters (
    key TEXT NOT NULL, window TEXT NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (key, window)
);
"""


def utf8_tokens(text: str) -> int:
    """Upper bound of the tokens ``text`` can cost: its length in UTF-8 bytes."""
    return len(text.encode("utf-8"))


def describe_db_error(path: str, exc: BaseException) -> str:
    """One line naming the database file and the operating system's reason.

    SQLite says only "unable to open database file"; opening the file the ordinary way
    tells the operator why (no such directory, permission denied, read-only disk).
    """
    reason = " ".join(str(exc).split())
    if path != ":memory:":
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as os_exc:
            reason = f"{reason} ({os_exc.strerror or os_exc})"
        else:
            os.close(fd)
    return f"{path}: {reason}"


def current_month(now: float | None = None) -> str:
    """The ledger's month key, ``YYYY-MM`` in UTC."""
    t = _dt.datetime.fromtimestamp(time.time() if now is None else now, tz=_dt.timezone.utc)
    return t.strftime("%Y-%m")


class _Db:
    """A SQLite database opened per operation (file) or shared under a lock (memory)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._shared: sqlite3.Connection | None = None
        if self.path == ":memory:":
            self._shared = sqlite3.connect(
                ":memory:", check_same_thread=False, isolation_level=None
            )
            self._shared.executescript(_LEDGER_SCHEMA)
        else:
            with self.connect() as conn:
                conn.executescript(_LEDGER_SCHEMA)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        if self._shared is not None:
            with self._lock:
                yield self._shared
            return
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()


@dataclass(frozen=True)
class Reservation:
    """An upper bound held against the monthly cap until the call's actual cost is known."""

    id: str
    month: str
    amount: int


@dataclass(frozen=True)
class BudgetDecision:
    """Whether a turn may call the model. ``code`` is ``OK``, ``EXHAUSTED`` or ``UNAVAILABLE``."""

    code: str
    reservation: Reservation | None
    spent: int
    cap: int

    @property
    def allowed(self) -> bool:
        return self.code == "OK"


def _open_db(path: str) -> tuple[_Db | None, str | None]:
    """The database at ``path``, or None with the reason it could not be opened."""
    try:
        return _Db(path), None
    except sqlite3.Error as exc:
        return None, describe_db_error(path, exc)


class BudgetLedger:
    """The monthly token ledger in SQLite (a file shared by processes, or ``:memory:``)."""

    def __init__(
        self, path: str | Path, monthly_cap: int, clock: Callable[[], float] = time.time
    ) -> None:
        if monthly_cap < 0:
            raise ValueError("monthly_cap must be >= 0")
        self.monthly_cap = monthly_cap
        self._clock = clock
        self.path = str(path)
        #: Why the ledger last failed (path and OS error), for the operator's log.
        self.error: str | None
        # without a database every reservation is refused (fail closed)
        self._db, self.error = _open_db(self.path)

    def reserve(self, prompt: str, max_output_tokens: int) -> BudgetDecision:
        """Atomically reserve prompt bytes + the full output limit, or refuse.

        Never raises: an unreachable ledger gives ``UNAVAILABLE`` (fail closed).
        """
        amount = utf8_tokens(prompt) + max(0, int(max_output_tokens))
        return self.reserve_tokens(amount)

    def reserve_tokens(self, amount: int) -> BudgetDecision:
        month = current_month(self._clock())
        if self._db is None:
            return BudgetDecision("UNAVAILABLE", None, -1, self.monthly_cap)
        try:
            with self._db.connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(
                        "INSERT OR IGNORE INTO budget_ledger(month, spent, reserved) "
                        "VALUES (?, 0, 0)",
                        (month,),
                    )
                    spent, reserved = conn.execute(
                        "SELECT spent, reserved FROM budget_ledger WHERE month = ?", (month,)
                    ).fetchone()
                    if spent + reserved + amount > self.monthly_cap:
                        conn.execute("ROLLBACK")
                        return BudgetDecision("EXHAUSTED", None, spent + reserved, self.monthly_cap)
                    rid = uuid.uuid4().hex
                    conn.execute(
                        "UPDATE budget_ledger SET reserved = reserved + ? WHERE month = ?",
                        (amount, month),
                    )
                    conn.execute(
                        "INSERT INTO budget_reservations(id, month, amount, created) "
                        "VALUES (?,?,?,?)",
                        (rid, month, amount, self._clock()),
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            self.error = describe_db_error(self.path, exc)
            return BudgetDecision("UNAVAILABLE", None, -1, self.monthly_cap)
        return BudgetDecision(
            "OK", Reservation(rid, month, amount), spent + reserved + amount, self.monthly_cap
        )

    def settle(self, reservation: Reservation, actual_tokens: int) -> bool:
        """Record the actual cost of a call and release its reservation.

        Called after every call, including streams cut short. Returns False when the
        ledger could not be written (the record is lost, as a guardrail's ledger is not
        an invoice); the reservation then stays held, which errs on the safe side.
        """
        actual = max(0, int(actual_tokens))
        if self._db is None:
            return False
        try:
            with self._db.connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    row = conn.execute(
                        "SELECT settled FROM budget_reservations WHERE id = ?", (reservation.id,)
                    ).fetchone()
                    if row is None or row[0] is not None:
                        conn.execute("ROLLBACK")
                        return False
                    conn.execute(
                        "UPDATE budget_ledger SET reserved = reserved - ?, spent = spent + ? "
                        "WHERE month = ?",
                        (reservation.amount, actual, reservation.month),
                    )
                    conn.execute(
                        "UPDATE budget_reservations SET actual = ?, settled = ? WHERE id = ?",
                        (actual, self._clock(), reservation.id),
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error:
            return False
        return True

    def usage(self, month: str | None = None) -> tuple[int, int]:
        """(spent, reserved) for ``month`` (the current one by default)."""
        m = month or current_month(self._clock())
        if self._db is None:
            raise LedgerUnavailableError("budget ledger unavailable")
        try:
            with self._db.connect() as conn:
                row = conn.execute(
                    "SELECT spent, reserved FROM budget_ledger WHERE month = ?", (m,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise LedgerUnavailableError(f"budget ledger unavailable: {exc}") from exc
        return (0, 0) if row is None else (int(row[0]), int(row[1]))


#: Default limits per client key: (window name, seconds, allowed requests).
DEFAULT_LIMITS: tuple[tuple[str, int, int], ...] = (
    ("minute", 60, 10),
    ("hour", 3600, 60),
    ("day", 86400, 200),
)


@dataclass(frozen=True)
class RateDecision:
    """``OK``, ``LIMITED`` (with the window that is full) or ``UNAVAILABLE`` (let through)."""

    code: str
    window: str | None = None

    @property
    def allowed(self) -> bool:
        return self.code != "LIMITED"


class RateLimiter:
    """Fixed-window request counters per client key over a minute, an hour and a day.

    The key must be what the edge proxy saw (the client address), never a header the
    client writes. A counter that cannot be read lets the request through (fails open):
    the worst an open rate limit costs is a few extra requests, while the budget guard
    still holds the spend.
    """

    def __init__(
        self,
        path: str | Path,
        limits: tuple[tuple[str, int, int], ...] = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self.path = str(path)
        #: Why the counters last failed (path and OS error), for the operator's log.
        self.error: str | None
        self._db, self.error = _open_db(self.path)

    def hit(self, key: str) -> RateDecision:
        """Count one request for ``key``; refuse it when any window is full."""
        if self._db is None:
            return RateDecision("UNAVAILABLE")
        now = self._clock()
        try:
            with self._db.connect() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    full = None
                    updates = []
                    for name, seconds, allowed in self.limits:
                        bucket = int(now // seconds)
                        row = conn.execute(
                            "SELECT bucket, count FROM rate_counters WHERE key=? AND window=?",
                            (key, name),
                        ).fetchone()
                        count = row[1] if row is not None and row[0] == bucket else 0
                        if count >= allowed and full is None:
                            full = name
                        updates.append((key, name, bucket, count + 1))
                    if full is not None:
                        conn.execute("ROLLBACK")
                        return RateDecision("LIMITED", full)
                    conn.executemany(
                        "INSERT OR REPLACE INTO rate_counters(key, window, bucket, count) "
                        "VALUES (?,?,?,?)",
                        updates,
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            self.error = describe_db_error(self.path, exc)
            return RateDecision("UNAVAILABLE")
        return RateDecision("OK")
