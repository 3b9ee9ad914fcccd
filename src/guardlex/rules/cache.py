"""On-disk cache of expanded packs, so a second process start skips YAML and expansion.

What is cached is plain JSON (regex *sources*, word lists, messages), never pickled
objects: reading the cache cannot execute anything. An entry is trusted only when it
is the one written for its key: each file is a header line (format, the key, the SHA-256
of the payload) and the payload line; a corrupt, truncated, edited or foreign entry (one
copied from another key) fails the check and the pack is compiled again. The key covers
every pack file's
bytes, the subject names, the guardlex and regex versions and the code that expands
packs (compiler and normaliser), so any change produces a fresh entry.

Location: ``$GUARDLEX_CACHE_DIR``, else ``$XDG_CACHE_HOME/guardlex``, else
``~/.cache/guardlex``. ``GUARDLEX_CACHE_DIR=off`` disables the cache. An unwritable or
corrupt cache is ignored: loading then just takes longer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

import guardlex

log = logging.getLogger("guardlex.rules")

CACHE_FORMAT = "6"


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is switched off."""
    env = os.environ.get("GUARDLEX_CACHE_DIR")
    if env:
        return None if env.lower() in ("off", "0", "none") else Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "guardlex"


@lru_cache(maxsize=1)
def _code_stamp() -> str:
    """Identity of the code that expands packs: compiler and normaliser sources."""
    h = hashlib.sha256()
    h.update(f"{CACHE_FORMAT}|{guardlex.__version__}|{regex.__version__}".encode())
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py"))
    norm = here.parent / "normalise"
    if norm.is_dir():
        files.extend(sorted(p for p in norm.rglob("*") if p.is_file()))
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        h.update(f"{p.name}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _path(key: str) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(f"{_code_stamp()}|{key}".encode()).hexdigest()[:32]
    return d / f"pack-{digest}.json"


def load_cached(key: str) -> dict[str, Any] | None:
    """The cached expansion for ``key``, or None (missing, unreadable, corrupt or foreign)."""
    path = _path(key)
    if path is None:
        return None
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head, sep, body = raw.partition(b"\n")
    try:
        header = json.loads(head)
        if not (
            sep
            and isinstance(header, dict)
            and header.get("format") == CACHE_FORMAT
            and header.get("key") == key
            and header.get("sha256") == hashlib.sha256(body).hexdigest()
        ):
            log.debug("guardlex: pack cache entry %s rejected; compiling again", path.name)
            return None
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("program"), dict):
        return None
    return payload


def store_cached(key: str, payload: dict[str, Any]) -> None:
    """Write atomically into a private directory; any failure is logged and ignored."""
    path = _path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        header = {"format": CACHE_FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(header).encode("ascii") + b"\n" + body)
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("guardlex: pack cache not written (%s)", exc)
