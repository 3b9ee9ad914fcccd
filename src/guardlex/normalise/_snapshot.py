"""A snapshot of the normaliser's tables that scan every code point, read at the first
question of a process instead of built (about 0.1 s: every table of ``_tables`` derived
from ``unicodedata``, and the fused pass's own tables in ``_core``).

``data/unicode_tables.marshal`` holds the results of the functions marked
``@snapshotted``, written by ``write`` (``tools/build_precompiled.py`` runs it). It is
used only when its header carries this package's ``stamp`` (the Unicode version of the
running interpreter, the Python version and the bytes of every source and data file of
``guardlex.normalise`` but the snapshot itself) and the SHA-256 of its payload; anything
else (another interpreter, an edited normaliser, a damaged file) and every table is built
as before, so the tables always agree with this interpreter's ``str.casefold`` and NFKC.
The payload is ``marshal`` data of plain values, read only from guardlex's own package
folder after its SHA-256 is checked.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
import unicodedata
from collections.abc import Callable
from functools import cache, wraps
from pathlib import Path
from typing import Any, TypeVar

SNAPSHOT = Path(__file__).resolve().parent / "data" / "unicode_tables.marshal"
FORMAT = 1
MARSHAL_VERSION = 4

F = TypeVar("F", bound=Callable[..., Any])

#: every snapshotted function, by name (``module.qualname``)
_REGISTRY: dict[str, Any] = {}
#: while ``build`` runs: every value computed, by key (name + repr of the arguments)
_RECORD: list[dict[str, Any]] = []
#: a list this long that mostly holds its own indexes is stored as its other entries
_SPARSE_MIN = 1024
_SPARSE_TAG = "\x00sparse-list"


def snapshotted(fn: F) -> F:
    """``functools.cache``, first asking the snapshot (when it is current)."""
    name = f"{fn.__module__}.{fn.__qualname__}"

    @cache
    @wraps(fn)
    def wrapper(*args: Any) -> Any:
        key = name + repr(args)
        if _RECORD:
            value = fn(*args)
            _RECORD[-1][key] = value
            return value
        got = _loaded().get(key)
        return fn(*args) if got is None else got

    _REGISTRY[name] = wrapper
    return wrapper  # type: ignore[return-value]


@cache
def stamp() -> str:
    """Identity of what the tables are computed from (see the module docstring)."""
    # Not the ``regex`` version: it is released every few days and seldom changes its
    # Unicode tables, and a stamp naming it made every release discard the snapshot. The
    # regeneration test (tests/rules/test_perf_snapshot.py) compares the tables
    # themselves with a fresh build, so a release that does change them is caught there.
    h = hashlib.sha256()
    h.update(f"{FORMAT}|{unicodedata.unidata_version}|{sys.version_info[:3]}\n".encode())
    here = Path(__file__).resolve().parent
    for p in sorted(here.rglob("*")):
        if not p.is_file() or p == SNAPSHOT or "__pycache__" in p.parts or p.suffix == ".pyc":
            continue
        data = p.read_bytes()
        h.update(f"{p.relative_to(here).as_posix()}|{len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


@cache
def _loaded() -> dict[str, Any]:
    """The snapshot's values, or nothing when it is missing, stale or damaged."""
    return read(SNAPSHOT)


def read(path: Path) -> dict[str, Any]:
    """The values of the snapshot at ``path`` when it is current and intact, else {}."""
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    head, sep, body = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        return {}
    if not (
        sep
        and isinstance(header, dict)
        and header.get("format") == FORMAT
        and header.get("marshal") == MARSHAL_VERSION
        and header.get("stamp") == stamp()
        and header.get("sha256") == hashlib.sha256(body).hexdigest()
    ):
        return {}
    try:
        values = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(values, dict):
        return {}
    return {k: _decode(v) for k, v in values.items()}


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_encode(v) for v in value)
    if isinstance(value, list) and len(value) >= _SPARSE_MIN:
        other = {i: v for i, v in enumerate(value) if v != i or type(v) is not int}
        if len(other) * 4 < len(value):
            return (_SPARSE_TAG, len(value), other)
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, tuple):
        if len(value) == 3 and value[0] == _SPARSE_TAG:
            out: list[Any] = list(range(value[1]))
            for i, v in value[2].items():
                out[i] = v
            return out
        return tuple(_decode(v) for v in value)
    return value


def build() -> dict[str, Any]:
    """Every snapshotted value, computed afresh (what the fused pass needs first)."""
    from guardlex.normalise import _core

    for wrapper in _REGISTRY.values():
        wrapper.cache_clear()
    _RECORD.append({})
    try:
        _core._Fused.ready = False
        _core._Fused.load()
        _core._place_tables()
        _core._nfkc_one()
        return dict(_RECORD[-1])
    finally:
        _RECORD.pop()
        for wrapper in _REGISTRY.values():  # later calls read the tables again
            wrapper.cache_clear()
        _core._Fused.ready = False


def write(path: Path = SNAPSHOT) -> Path:
    """Write the snapshot (``tools/build_precompiled.py``)."""
    values = build()
    body = marshal.dumps({k: _encode(v) for k, v in sorted(values.items())}, MARSHAL_VERSION)
    header = {
        "source": (
            "guardlex.normalise tables computed from Python's unicodedata (Unicode "
            f"{unicodedata.unidata_version}) and the ICU/Unicode data files of "
            "guardlex/normalise/data; written by tools/build_precompiled.py"
        ),
        "format": FORMAT,
        "marshal": MARSHAL_VERSION,
        "stamp": stamp(),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + body)
    os.replace(tmp, path)
    _loaded.cache_clear()
    return path


def current(path: Path = SNAPSHOT) -> bool:
    """True when the snapshot at ``path`` is the one for this normaliser and interpreter."""
    return bool(read(path))
