"""Cost controls: the monthly budget guard (fails closed) and rate limits (fail open).

The guard reserves an upper bound of a turn's cost *before* the model is called: the
prompt counted as one token per UTF-8 byte (a byte-level BPE token is a non-empty byte
sequence, so no text in any language has more tokens than bytes) plus the full output
limit. The reservation is one ``BEGIN IMMEDIATE`` transaction, so concurrent requests,
threads or processes, cannot jointly overspend. If the ledger cannot be read or written
the spend is unknown, and the only safe reading of an unknown spend under a hard cap is
"exhausted". Rate limits are the opposite: a broken counter must not take the site down.

The reservation is also a cap on what a call may *record*: the runner cuts the model's
stream at the reserved output bound (counted in the same UTF-8 bytes), and
:meth:`BudgetLedger.settle` never records more than the reservation, so a provider that
ignores ``max_tokens`` or reports inflated usage cannot push the month past the cap.

A ledger is created only when asked (``create=True``; ``guardlex ask --new-ledger``).
Opening a ledger file that does not exist fails closed, and every operation opens the
file without creating it: a ledger deleted by accident, by a cache cleaner or by an
attacker would otherwise come back empty and reset the month's spend.
"""

from __future__ import annotations

import contextlib
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
CREATE TABLE IF NOT EXISTS budget_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

_RATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_counters (
    key TEXT NOT NULL, window TEXT NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (key, window)
);
"""

#: Seconds an operation waits for a ledger another process holds locked, then the turn
#: is refused (fail closed, ``LEDGER_UNAVAILABLE``). Reservations hold the lock for
#: milliseconds, so a longer wait means something is wrong.
LEDGER_BUSY_TIMEOUT = 2.0

#: Largest token count a ledger accepts from a caller (2**53: exact in any JSON reader).
MAX_TOKENS_VALUE = 2**53


class MissingLedgerError(LedgerUnavailableError):
    """The ledger file does not exist (never created, or deleted): spend is unknown."""


def utf8_tokens(text: str) -> int:
    """Upper bound of the tokens ``text`` can cost: its length in UTF-8 bytes.

    A lone surrogate (not encodable as UTF-8) counts its three ``surrogatepass`` bytes,
    so any ``str`` has a count and the bound still holds.
    """
    return len(text.encode("utf-8", "surrogatepass"))


def describe_db_error(path: str, exc: BaseException) -> str:
    """One line naming the database file and the operating system's reason.

    SQLite says only "unable to open database file"; opening the file the ordinary way
    tells the operator why (no such directory, permission denied, read-only disk).
    """
    reason = " ".join(str(exc).split())
    if isinstance(exc, MissingLedgerError):
        return reason
    if path != ":memory:":
        try:
            # never O_CREAT: a missing ledger must stay missing (see the module's doc)
            fd = os.open(path, os.O_RDWR)
        except OSError as os_exc:
            reason = f"{reason} ({os_exc.strerror or os_exc})"
        else:
            os.close(fd)
    return f"{path}: {reason}"


def current_month(now: float | None = None) -> str:
    """The ledger's month key, ``YYYY-MM`` in UTC."""
    t = _dt.datetime.fromtimestamp(time.time() if now is None else now, tz=_dt.timezone.utc)
    return t.strftime("%Y-%m")


def valid_tokens(value: object) -> int | None:
    """``value`` as a token count, or None unless it is an int in ``[0, 2**53]``.

    Booleans, floats, strings and negative or absurd numbers are not token counts.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if value < 0 or value > MAX_TOKENS_VALUE:
        return None
    return value


class _Db:
    """A SQLite database opened per operation (file) or shared under a lock (memory).

    A file is opened read-write *without* creating it on every operation; only
    construction with ``create=True`` may make a new file (and ``schema`` its tables).
    ``required`` names a table the file must already have when it is not created now.
    """

    def __init__(
        self, path: str | Path, schema: str, *, create: bool, required: str | None = None
    ) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._shared: sqlite3.Connection | None = None
        if self.path == ":memory:":
            self._shared = sqlite3.connect(
                ":memory:", check_same_thread=False, isolation_level=None
            )
            self._shared.executescript(schema)
            return
        exists = os.path.exists(self.path)
        if not exists and not create:
            raise MissingLedgerError(
                f"{self.path}: no budget ledger here (never created, or deleted: the "
                "month's spend is unknown, so turns are refused); create it on purpose "
                "with `guardlex ask --new-ledger` or BudgetLedger(..., create=True)"
            )
        if create:
            with self.connect(mode="rwc") as conn:
                conn.executescript(schema)
            return
        with self.connect() as conn:
            if required is not None:
                row = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (required,)
                ).fetchone()
                if row is None:
                    raise MissingLedgerError(
                        f"{self.path}: the file holds no budget ledger (a new or replaced "
                        "file: the month's spend is unknown, so turns are refused); create "
                        "one on purpose with `guardlex ask --new-ledger` or "
                        "BudgetLedger(..., create=True)"
                    )
            conn.executescript(schema)

    @contextmanager
    def connect(self, mode: str = "rw") -> Iterator[sqlite3.Connection]:
        if self._shared is not None:
            with self._lock:
                yield self._shared
            return
        uri = f"{Path(os.path.abspath(self.path)).as_uri()}?mode={mode}"
        # One operation at a time per process: threads of one server (the async server
        # runs ledger and rate-limit calls in worker threads) queue here instead of
        # starving each other on SQLite's file lock past the busy timeout, which made
        # 3-5% of concurrent rate-limit hits fail open. Other processes still share the
        # file under SQLite's own locking.
        with self._lock:
            conn = sqlite3.connect(uri, uri=True, timeout=LEDGER_BUSY_TIMEOUT, isolation_level=None)
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


def _open_db(
    path: str, schema: str, *, create: bool, required: str | None = None
) -> tuple[_Db | None, str | None]:
    """The database at ``path``, or None with the reason it could not be opened."""
    try:
        return _Db(path, schema, create=create, required=required), None
    except (sqlite3.Error, MissingLedgerError) as exc:
        return None, describe_db_error(path, exc)


class BudgetLedger:
    """The monthly token ledger in SQLite (a file shared by processes, or ``:memory:``)."""

    def __init__(
        self,
        path: str | Path,
        monthly_cap: int,
        clock: Callable[[], float] = time.time,
        *,
        create: bool = False,
    ) -> None:
        """Open the ledger at ``path`` (``":memory:"`` for a private one).

        ``create=True`` makes the file (and its tables) when it does not exist yet; without
        it a missing file, or a file without ledger tables, refuses every turn. Decide to
        create a ledger once, when the service is set up, never on every start.
        """
        if valid_tokens(monthly_cap) is None:
            raise ValueError("monthly_cap must be an int from 0 to 2**53")
        self.monthly_cap = monthly_cap
        self._clock = clock
        self.path = str(path)
        #: Why the ledger last failed (path and OS error), for the operator's log.
        self.error: str | None
        # without a database every reservation is refused (fail closed)
        self._db, self.error = _open_db(
            self.path, _LEDGER_SCHEMA, create=create, required="budget_ledger"
        )
        if self._db is not None and create:
            self._stamp()

    def _stamp(self) -> None:
        """Record when this ledger was created (for the operator; not a check)."""
        assert self._db is not None
        with contextlib.suppress(sqlite3.Error), self._db.connect() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO budget_meta(key, value) VALUES ('created', ?)",
                (_dt.datetime.fromtimestamp(self._clock(), tz=_dt.timezone.utc).isoformat(),),
            )

    def reserve(self, prompt: str, max_output_tokens: int) -> BudgetDecision:
        """Atomically reserve prompt bytes + the full output limit, or refuse.

        Never raises: an unreachable ledger gives ``UNAVAILABLE`` (fail closed).
        """
        amount = utf8_tokens(prompt) + max(0, int(max_output_tokens))
        return self.reserve_tokens(amount)

    def reserve_tokens(self, amount: int) -> BudgetDecision:
        if valid_tokens(amount) is None:
            raise ValueError(f"a reservation must be an int from 0 to 2**53, not {amount!r}")
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

        Called after every call, including streams cut short. At most the reservation is
        recorded (the cap holds whatever the provider reports; the caller flags the
        difference), and a cost that is not a token count (negative, not an int) records
        the whole reservation. Returns False when the ledger could not be written (the
        record is lost, as a guardrail's ledger is not an invoice; ``error`` says why);
        the reservation then stays held, which errs on the safe side. Never raises.
        """
        checked = valid_tokens(actual_tokens)
        actual = reservation.amount if checked is None else min(checked, reservation.amount)
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
        except sqlite3.Error as exc:
            self.error = describe_db_error(self.path, exc)
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
        # counters may be created on any start: losing them costs a few extra requests
        self._db, self.error = _open_db(self.path, _RATE_SCHEMA, create=True)

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
