"""The embedded store: one SQLite database (a file or ``:memory:``).

Tables: ``chunks`` (text and the space-joined keyword tokens), ``chunk_fts`` (a
contentless FTS5 index over those tokens, ``unicode61`` with diacritics kept, so Chinese
is matched as jieba words and Hindi matras stay inside words), ``vectors`` (float32
blobs, loaded once into a numpy matrix for cosine by matrix-vector product),
``records``, ``owner`` and ``meta``. The cost ledger and rate-limit counters
(:mod:`guardlex.runner.costs`) may live in the same file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardlex.runner._deps import require_numpy
from guardlex.runner.corpus import Chunk, Record, Site
from guardlex.runner.errors import StoreError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from guardlex.runner.embeddings import Embedder

STORE_SCHEMA = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    locale TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    date TEXT,
    text TEXT NOT NULL,
    tokens TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_locale ON chunks(locale);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
    tokens, locale, content='', tokenize='unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, start TEXT, "end" TEXT,
    current INTEGER NOT NULL, title TEXT NOT NULL, summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owner (locale TEXT NOT NULL, name TEXT NOT NULL, pos INTEGER);
"""

Progress = Callable[[int, int], None]
Tokenize = Callable[[str], Sequence[str]]


def fts_quote(token: str) -> str:
    """Quote one token as an FTS5 string (a phrase), so no token is read as syntax."""
    return '"' + token.replace('"', '""') + '"'


def corpus_fingerprint(chunks: Iterable[Chunk]) -> str:
    """A hash of the chunks' ids and texts: what a calibrated threshold belongs to."""
    h = hashlib.sha256()
    for ch in sorted(chunks, key=lambda c: c.id):
        h.update(f"{ch.id}\0{ch.locale}\0{ch.title}\0{ch.text}\0".encode())
    return h.hexdigest()[:16]


def embed_batches(
    chunks: Sequence[Chunk], embedder: Embedder, tokenize: Tokenize, batch: int
) -> Iterator[tuple[int, Sequence[Chunk], list[list[str]], Any]]:
    """(start, chunks, their tokens, their vectors) per batch; the shape is checked.

    An embedder with ``embed_tokens`` and the same tokenizer gets the tokens, so each
    chunk is tokenized once.
    """
    reuse = (
        callable(getattr(embedder, "embed_tokens", None))
        and getattr(embedder, "tokenizer", None) is tokenize
    )
    np_ = require_numpy()
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        text_toks = [list(tokenize(ch.text)) for ch in part]
        if reuse:
            vecs = embedder.embed_tokens(text_toks)  # type: ignore[attr-defined]
        else:
            vecs = embedder.embed([ch.text for ch in part])
        vecs = np_.asarray(vecs, dtype=np_.float32)
        shape = vecs.shape
        if shape != (len(part), embedder.dim):
            raise StoreError(
                f"embedder {embedder.name} returned shape {shape}, "
                f"expected {(len(part), embedder.dim)}"
            )
        yield start, part, text_toks, vecs


class Store:
    """Chunks, vectors, records and owner names in one SQLite database."""

    backend = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._matrix: Any = None
        self._rowids: Any = None
        self._by_locale: dict[str, Any] = {}

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path = ":memory:", *, create: bool = True) -> Store:
        """Open (or create) a store. ``":memory:"`` gives a private in-memory store."""
        spath = str(path)
        if spath != ":memory:" and not create and not Path(spath).is_file():
            raise StoreError(f"{spath}: no such store; build one with `guardlex index PATH`")
        try:
            conn = sqlite3.connect(spath, check_same_thread=False, timeout=30.0)
            conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{spath}: not a guardlex store ({exc})") from exc
        store = cls(conn, spath)
        version = store.meta("store_schema")
        if version is not None and version != str(STORE_SCHEMA):
            raise StoreError(f"{spath}: store schema {version} is not {STORE_SCHEMA}; re-index")
        return store

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Write one metadata value (the calibrated threshold, for instance)."""
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
            self._conn.commit()

    @property
    def embedder_name(self) -> str | None:
        return self.meta("embedder")

    def chunk_count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    # ------------------------------------------------------------ building
    def build(
        self,
        site: Site,
        embedder: Embedder,
        tokenize: Tokenize,
        progress: Progress | None = None,
        batch: int = 512,
        fingerprint: str = "",
        meta: dict[str, str] | None = None,
    ) -> None:
        """Replace the store's content with ``site``, embedded by ``embedder``.

        Chunks are written sorted by locale, so each locale is one contiguous block of
        the vector matrix and per-locale search is a slice, not a copy.
        """
        np_ = require_numpy()
        chunks = sorted(site.chunks, key=lambda c: (c.locale, c.id))
        total = len(chunks)
        with self._lock:
            c = self._conn
            c.execute("BEGIN")
            try:
                for table in ("chunks", "vectors", "records", "owner", "meta"):
                    c.execute(f"DELETE FROM {table}")
                c.execute("DELETE FROM chunk_fts")
                done = 0
                titles: dict[str, list[str]] = {}
                for start, part, text_toks, vecs in embed_batches(
                    chunks, embedder, tokenize, batch
                ):
                    vecs = np_.asarray(vecs, dtype=np_.float32)
                    for i, ch in enumerate(part):
                        rowid = start + i + 1
                        if ch.title not in titles:
                            titles[ch.title] = list(tokenize(ch.title))
                        toks = " ".join(titles[ch.title] + text_toks[i])
                        c.execute(
                            "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)",
                            (
                                rowid,
                                ch.id,
                                ch.doc_id,
                                ch.locale,
                                ch.kind,
                                ch.title,
                                ch.date,
                                ch.text,
                                toks,
                            ),
                        )
                        c.execute(
                            "INSERT INTO chunk_fts(rowid, tokens, locale) VALUES (?,?,?)",
                            (rowid, toks, ch.locale),
                        )
                        c.execute("INSERT INTO vectors VALUES (?, ?)", (rowid, vecs[i].tobytes()))
                    done += len(part)
                    if progress is not None:
                        progress(done, total)
                for r in site.records:
                    c.execute(
                        "INSERT INTO records VALUES (?,?,?,?,?,?,?)",
                        (
                            r.id,
                            r.kind,
                            r.start,
                            r.end,
                            int(r.current),
                            json.dumps(dict(r.title), ensure_ascii=False),
                            json.dumps(dict(r.summary), ensure_ascii=False),
                        ),
                    )
                for loc, names in site.owner_names.items():
                    for pos, name in enumerate(names):
                        c.execute("INSERT INTO owner VALUES (?,?,?)", (loc, name, pos))
                values = {
                    "store_schema": str(STORE_SCHEMA),
                    "embedder": embedder.name,
                    "dim": str(embedder.dim),
                    "chunks": str(total),
                    "fingerprint": fingerprint,
                    "corpus": corpus_fingerprint(chunks),
                    **(meta or {}),
                }
                c.executemany("INSERT INTO meta VALUES (?, ?)", values.items())
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self._matrix = None

    # ------------------------------------------------------------ reading
    def _load_matrix(self) -> None:
        np_ = require_numpy()
        with self._lock:
            if self._matrix is not None:
                return
            dim = int(self.meta("dim") or 0)
            rows = self._conn.execute(
                "SELECT v.rowid, v.vec, c.locale FROM vectors v JOIN chunks c "
                "ON c.rowid = v.rowid ORDER BY v.rowid"
            ).fetchall()
            n = len(rows)
            matrix = np_.zeros((n, max(dim, 1)), dtype=np_.float32)
            rowids = np_.zeros(n, dtype=np_.int64)
            locales: dict[str, list[int]] = {}
            for i, (rowid, blob, loc) in enumerate(rows):
                matrix[i] = np_.frombuffer(blob, dtype=np_.float32)
                rowids[i] = rowid
                locales.setdefault(loc, []).append(i)
            by_locale: dict[str, Any] = {}
            for loc, idx in locales.items():
                if idx[-1] - idx[0] + 1 == len(idx):
                    by_locale[loc] = slice(idx[0], idx[-1] + 1)
                else:
                    by_locale[loc] = np_.asarray(idx, dtype=np_.int64)
            self._rowids = rowids
            self._by_locale = by_locale
            self._matrix = matrix

    def has_locale(self, locale: str | None) -> bool:
        self._load_matrix()
        return locale in self._by_locale

    def locale_size(self, locale: str | None) -> int:
        """How many chunks a search in ``locale`` looks at (all chunks when None)."""
        self._load_matrix()
        if locale is None:
            return 0 if self._rowids is None else len(self._rowids)
        sel = self._by_locale.get(locale)
        if sel is None:
            return 0
        if isinstance(sel, slice):
            return int(sel.stop - sel.start)
        return len(sel)

    def dense_top(self, qvec: np.ndarray, locale: str | None, n: int) -> list[tuple[int, float]]:
        """The ``n`` chunks of ``locale`` (all when None) with the highest cosine."""
        np_ = require_numpy()
        self._load_matrix()
        if self._matrix is None or len(self._rowids) == 0:
            return []
        sel = self._by_locale.get(locale) if locale is not None else slice(None)
        if sel is None:
            return []
        sub = self._matrix[sel]
        ids = self._rowids[sel]
        scores = sub @ np_.asarray(qvec, dtype=np_.float32)
        k = min(n, len(scores))
        if k <= 0:
            return []
        top = np_.argpartition(-scores, k - 1)[:k]
        top = top[np_.lexsort((ids[top], -scores[top]))]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def cosines(self, qvec: np.ndarray, rowids: Iterable[int]) -> dict[int, float]:
        """Cosine of ``qvec`` with the given chunks (rows are L2-normalised)."""
        np_ = require_numpy()
        self._load_matrix()
        ids = list(rowids)
        if not ids:
            return {}
        pos = np_.searchsorted(self._rowids, np_.asarray(ids, dtype=np_.int64))
        scores = self._matrix[pos] @ np_.asarray(qvec, dtype=np_.float32)
        return {rid: float(s) for rid, s in zip(ids, scores, strict=True)}

    def keyword_candidates(
        self, tokens: Sequence[str], locale: str | None, n: int
    ) -> list[tuple[int, float]]:
        """FTS5 candidates that contain any of ``tokens``, best BM25 first."""
        if not tokens:
            return []
        expr = "tokens : (" + " OR ".join(fts_quote(t) for t in tokens) + ")"
        if locale is not None:
            expr = f"locale : {fts_quote(locale)} AND {expr}"
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT rowid, bm25(chunk_fts, 1.0, 0.0) AS score FROM chunk_fts "
                    "WHERE chunk_fts MATCH ? ORDER BY score, rowid LIMIT ?",
                    (expr, n),
                ).fetchall()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"keyword search failed: {exc}") from exc
        return [(int(r), float(s)) for r, s in rows]

    def chunks(self, rowids: Iterable[int]) -> dict[int, tuple[Chunk, frozenset[str]]]:
        """Chunks with their keyword-token sets, by rowid."""
        ids = list(dict.fromkeys(rowids))
        out: dict[int, tuple[Chunk, frozenset[str]]] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ",".join("?" * len(part))
                for row in self._conn.execute(
                    "SELECT rowid, id, doc_id, locale, kind, title, date, text, tokens "
                    f"FROM chunks WHERE rowid IN ({marks})",
                    part,
                ):
                    out[int(row[0])] = (Chunk(*row[1:8]), frozenset(row[8].split()))
        return out

    def chunk_by_id(self, chunk_id: str) -> Chunk | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, doc_id, locale, kind, title, date, text FROM chunks WHERE id = ?",
                (chunk_id,),
            ).fetchone()
        return None if row is None else Chunk(*row)

    def records(self) -> list[Record]:
        with self._lock:
            rows = self._conn.execute(
                'SELECT id, kind, start, "end", current, title, summary FROM records'
            ).fetchall()
        return [
            Record(r[0], r[1], r[2], r[3], bool(r[4]), json.loads(r[5]), json.loads(r[6]))
            for r in rows
        ]

    def owner_names(self, locale: str | None = None) -> tuple[str, ...]:
        """The owner's names in ``locale`` (all locales when None), as the site spells them."""
        with self._lock:
            if locale is None:
                rows = self._conn.execute("SELECT name FROM owner ORDER BY locale, pos").fetchall()
            else:
                rows = self._conn.execute(
                    "SELECT name FROM owner WHERE locale = ? ORDER BY pos", (locale,)
                ).fetchall()
        return tuple(dict.fromkeys(r[0] for r in rows))

    def titles(self, locale: str | None) -> list[str]:
        """Document titles in ``locale`` (used to read lists in previous answers)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT title FROM chunks WHERE locale = ? ORDER BY title", (locale,)
            ).fetchall()
        return [r[0] for r in rows]

    def locales(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT locale FROM chunks ORDER BY locale")
            return [r[0] for r in rows]


# ---------------------------------------------------------------- any backend

#: Store metadata keys a site keeps so later commands need only ``--store``.
META_SITE = "site"
META_SUBJECTS = "subjects"
META_LOCALES = "locales"
META_EMBEDDER_CONFIG = "embedder_config"
META_THRESHOLD = "threshold"


def open_store(spec: str | Path, *, create: bool = False) -> Any:
    """The store at ``spec``: a ``postgresql://`` URL (PostgreSQL + pgvector, see
    :mod:`guardlex.runner.pg`) or a SQLite file path (or ``:memory:``)."""
    from guardlex.runner.pg import PgStore, is_pg_url

    if is_pg_url(spec):
        return PgStore.open(str(spec), create=create)
    return Store.open(spec, create=create)


def meta_json(store: Any, key: str) -> Any:
    """A JSON metadata value of ``store`` (None when absent or not JSON)."""
    raw = store.meta(key)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def subject_names(store: Any) -> tuple[str, ...]:
    """Every subject name the site was indexed with, in every script given."""
    names = meta_json(store, META_SUBJECTS)
    if isinstance(names, list) and names:
        return tuple(str(n) for n in names)
    return tuple(store.owner_names())
