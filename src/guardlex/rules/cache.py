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
import marshal
import os
import struct
import tempfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

import guardlex

log = logging.getLogger("guardlex.rules")

CACHE_FORMAT = "10"


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


class PackedForms(Mapping[str, Any]):
    """The forms of each concept of a stored program, kept as one JSON text per concept
    and decoded on first use: a question touches a few dozen of a locale's concepts, and
    a start that decoded (and garbage-collected) every form of every concept would spend
    most of its time there."""

    __slots__ = ("_done", "_raw")

    def __init__(self, raw: Mapping[str, str]) -> None:
        self._raw = raw
        self._done: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        got = self._done.get(name)
        if got is None:
            # setdefault: two threads decoding one concept share the first result
            got = self._done.setdefault(name, unpack_text(self._raw[name]))
        return got

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def unpack_text(raw: str | bytes) -> Any:
    """A packed value: a JSON text (pack cache), or zlib-compressed ``marshal`` data of
    the same value (shipped programs: read only from guardlex's own folder after their
    SHA-256 is checked, and decoded four times faster than JSON)."""
    if isinstance(raw, bytes):
        return marshal.loads(zlib.decompress(raw))
    return json.loads(raw)


def _shipped_pack(text: str) -> bytes:
    """The packed JSON ``text`` as a shipped program stores it (``unpack_text``)."""
    return zlib.compress(marshal.dumps(json.loads(text), MARSHAL_VERSION), 9)


def packed(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` (``compile_locale``) as stored: the concept forms packed (see
    ``PackedForms``) and the matcher's index of the program (``matcher.program_index``)
    added, so a start reads both instead of walking every form."""
    from guardlex.rules.matcher import program_index

    def text(obj: Any) -> str:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))

    program = payload["program"]
    concepts = program.get("concepts") or {}
    rules = []
    for r in program["rules"]:
        forms, frame = r.get("forms") or [], r.get("frame")
        rule = {k: v for k, v in r.items() if k not in ("forms", "frame")}
        rules.append({**rule, "packed": text([forms, frame])})  # keys: in the index's refs
    return {
        **payload,
        "program": {
            **program,
            "index": program_index(program),
            "rules": rules,
            "concepts": {name: text(forms) for name, forms in concepts.items()},
        },
    }


def _program_payload(payload: Any) -> dict[str, Any] | None:
    """A stored payload made ready for ``load_packs`` (concepts unpacked lazily), or None
    when it does not have the stored shape."""
    if not isinstance(payload, dict) or not isinstance(payload.get("program"), dict):
        return None
    program = payload["program"]
    concepts, index = program.get("concepts"), program.get("index")
    if not (
        isinstance(concepts, dict)
        and all(isinstance(v, (str, bytes)) for v in concepts.values())
        and isinstance(index, dict)
        and all(
            isinstance(index.get(k), dict) and all(isinstance(v, str) for v in index[k].values())
            for k in ("w", "p", "t", "a")
        )
        and isinstance(index.get("pw"), int)
        and isinstance(index.get("concept_keys"), dict)
        and isinstance(index.get("refs"), dict)
        and all(isinstance(index["refs"].get(k), dict) for k in ("w", "t", "c"))
        and isinstance(index["refs"].get("x"), list)
        and isinstance(program.get("rules"), list)
        and all(
            isinstance(r, dict) and isinstance(r.get("packed"), (str, bytes))
            for r in program["rules"]
        )
    ):
        return None
    out = {**payload, "program": {**program, "concepts": PackedForms(concepts)}}
    words = payload.get("first_person_words")
    if isinstance(words, bytes):  # shipped programs: decoded on first use
        out["first_person_words"] = PackedMapping(words)
    return out


class PackedMapping(Mapping[str, Any]):
    """A mapping stored as zlib-compressed ``marshal`` data (the first-person word tables
    of a shipped program), decoded on first use: routing never reads it."""

    __slots__ = ("_done", "_raw")

    def __init__(self, raw: bytes) -> None:
        self._raw = raw
        self._done: Mapping[str, Any] | None = None

    def _get(self) -> Mapping[str, Any]:
        got = self._done
        if got is None:
            value = marshal.loads(zlib.decompress(self._raw))
            got = self._done = value if isinstance(value, dict) else {}
        return got

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def packed_refs(flat: list[int]) -> bytes:
    """A list of ``matcher.locale_refs`` as little-endian 32-bit integers."""
    return struct.pack(f"<{len(flat)}i", *flat)


def unpacked_refs(raw: bytes | list[int]) -> Sequence[int]:
    """The list that ``packed_refs`` packed (a list is returned as it is)."""
    if isinstance(raw, bytes):
        return struct.unpack(f"<{len(raw) // 4}i", raw)
    return raw


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
        body = json.dumps(packed(payload), ensure_ascii=False).encode("utf-8")
        header = {"format": CACHE_FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(header).encode("ascii") + b"\n" + body)
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("guardlex: pack cache not written (%s)", exc)


#: Where the programs of the shipped locales are (``tools/build_precompiled.py``).
PRECOMPILED_DIR = Path(__file__).resolve().parent / "precompiled"
PRECOMPILED_FORMAT = "4"
#: Shipped programs are ``marshal`` data of plain values only (dicts, lists, strings,
#: numbers, bytes), read only from guardlex's own package folder after their SHA-256 is
#: checked: a third of the time of JSON. The user cache stays JSON. Format 3: the
#: index's word and stem references as bytes (``packed_refs``) and the first-person
#: tables as one blob (``PackedMapping``). Format 4: the index's plain words (``p``,
#: ``pw``) apart from the other words (``w``), and packed forms as ``marshal`` data.
MARSHAL_VERSION = 4


@lru_cache(maxsize=1)
def program_stamp() -> str:
    """Identity of the code that compiles packs, by content: the same on every install.

    Covers every source of ``guardlex.rules`` but the linter and the scaffold (which no
    compilation imports) and of ``guardlex.normalise`` (data files included, but its
    snapshot of tables, ``guardlex.normalise._snapshot``, which only caches what those
    files compute), the cache format and the guardlex version. Not the ``regex`` version:
    programs hold pattern sources, compiled at load by whichever ``regex`` is installed,
    and a stamp naming a library released every few days made each release discard the
    shipped programs (6 s of compiling at the first question). The regeneration test
    (tests/rules/test_perf_precompiled.py) compares the programs with a fresh compile, so a
    release that changes what compiling produces is caught there.
    """
    h = hashlib.sha256()
    h.update(f"{PRECOMPILED_FORMAT}|{CACHE_FORMAT}|{guardlex.__version__}".encode())
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
            if p.is_file()
            and "__pycache__" not in p.parts
            and p.suffix != ".pyc"
            and p.name != "unicode_tables.marshal"  # a snapshot of what the sources compute
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
    expect: dict[str, Any] = {"format": PRECOMPILED_FORMAT, "code": code, "source": source}
    expect["marshal"] = MARSHAL_VERSION
    body = _checked_body(path, {**expect, "stamp": program_stamp()})
    if body is None:
        log.debug("guardlex: shipped program %s is not for these packs; compiling", path.name)
        return None
    try:
        return _program_payload(marshal.loads(body))
    except (ValueError, EOFError, TypeError):
        return None


def write_precompiled(
    code: str, source: str, payload: dict[str, Any], directory: Path | None = None
) -> Path:
    """Write the shipped program of ``code`` (``tools/build_precompiled.py``)."""
    path = precompiled_path(code, directory)
    stored = packed(payload)
    program = stored["program"]
    program["concepts"] = {name: _shipped_pack(text) for name, text in program["concepts"].items()}
    for r in program["rules"]:
        r["packed"] = _shipped_pack(r["packed"])
    refs = program["index"]["refs"]
    for kind in ("w", "t"):  # one bytes object per key: a start builds no int lists
        refs[kind] = {k: packed_refs(v) for k, v in refs[kind].items()}
    # routing never reads the first-person tables: one blob, decoded on first use
    stored["first_person_words"] = zlib.compress(
        marshal.dumps(stored.get("first_person_words") or {}, MARSHAL_VERSION), 6
    )
    body = marshal.dumps(stored, MARSHAL_VERSION)
    header = {
        "format": PRECOMPILED_FORMAT,
        "code": code,
        "source": source,
        "stamp": program_stamp(),
        "marshal": MARSHAL_VERSION,
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + body)
    os.replace(tmp, path)
    return path
