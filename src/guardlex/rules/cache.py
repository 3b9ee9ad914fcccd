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

Shipped programs: ``guardlex/rules/precompiled/<code>.program`` holds the compiled program
of each shipped locale, written by ``tools/build_precompiled.py``, so a first start with an
empty user cache only reads it instead of compiling. It is used only when it is the one
for the pack files being loaded and the code that compiles them: its header carries the
SHA-256 of those files (names and bytes, ``loader.source_digest``), a stamp of the
compiler and normaliser sources *by content* (``program_stamp``) and the SHA-256 of its
payload; any difference (an edited pack, an extension pack for the locale, another
version of the code, a damaged file) and the locale is compiled as usual.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import zlib
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


def _checked_body(path: Path, expect: dict[str, Any]) -> bytes | None:
    """The payload bytes of a header-line file whose header holds ``expect`` and the
    SHA-256 of the payload; None when the file is missing, unreadable, corrupt or
    written for something else."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head, sep, body = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        return None
    if not (
        sep
        and isinstance(header, dict)
        and all(header.get(k) == v for k, v in expect.items())
        and header.get("sha256") == hashlib.sha256(body).hexdigest()
    ):
        return None
    return body


def _program_payload(payload: Any) -> dict[str, Any] | None:
    if not isinstance(payload, dict) or not isinstance(payload.get("program"), dict):
        return None
    return payload


def load_cached(key: str) -> dict[str, Any] | None:
    """The cached expansion for ``key``, or None (missing, unreadable, corrupt or foreign)."""
    path = _path(key)
    if path is None:
        return None
    body = _checked_body(path, {"format": CACHE_FORMAT, "key": key})
    if body is None:
        log.debug("guardlex: pack cache entry %s rejected; compiling again", path.name)
        return None
    try:
        return _program_payload(json.loads(body))
    except ValueError:
        return None


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


#: Where the programs of the shipped locales are (``tools/build_precompiled.py``).
PRECOMPILED_DIR = Path(__file__).resolve().parent / "precompiled"
PRECOMPILED_FORMAT = "1"


@lru_cache(maxsize=1)
def program_stamp() -> str:
    """Identity of the code that compiles packs, by content: the same on every install.

    Covers every source of ``guardlex.rules`` but the linter and the scaffold (which no
    compilation imports) and of ``guardlex.normalise`` (data files included), the cache
    format and the guardlex and regex versions.
    """
    h = hashlib.sha256()
    h.update(
        f"{PRECOMPILED_FORMAT}|{CACHE_FORMAT}|{guardlex.__version__}|{regex.__version__}".encode()
    )
    here = Path(__file__).resolve().parent
    files = [
        (f"rules/{p.name}", p)
        for p in sorted(here.glob("*.py"))
        if not p.name.startswith(("lint", "scaffold"))
    ]
    norm = here.parent / "normalise"
    if norm.is_dir():
        files.extend(
            (f"normalise/{p.relative_to(norm).as_posix()}", p)
            for p in sorted(norm.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        )
    for name, p in files:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        h.update(f"{name}|{len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def precompiled_path(code: str, directory: Path | None = None) -> Path:
    return (directory or PRECOMPILED_DIR) / f"{code}.program"


def load_precompiled(
    code: str, source: str, directory: Path | None = None
) -> dict[str, Any] | None:
    """The shipped program of ``code`` when it was compiled from pack files with digest
    ``source`` by this code (``program_stamp``) and is intact; otherwise None."""
    path = precompiled_path(code, directory)
    expect = {"format": PRECOMPILED_FORMAT, "code": code, "source": source}
    body = _checked_body(path, {**expect, "stamp": program_stamp()})
    if body is None:
        log.debug("guardlex: shipped program %s is not for these packs; compiling", path.name)
        return None
    try:
        return _program_payload(json.loads(zlib.decompress(body)))
    except (ValueError, zlib.error):
        return None


def write_precompiled(
    code: str, source: str, payload: dict[str, Any], directory: Path | None = None
) -> Path:
    """Write the shipped program of ``code`` (``tools/build_precompiled.py``)."""
    path = precompiled_path(code, directory)
    body = zlib.compress(
        json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(),
        9,
    )
    header = {
        "format": PRECOMPILED_FORMAT,
        "code": code,
        "source": source,
        "stamp": program_stamp(),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + body)
    os.replace(tmp, path)
    return path
