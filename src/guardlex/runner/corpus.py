"""Reading the sample site and user documents into chunks and dated records.

The format is defined in ``docs/corpus.md``. Everything here is read with
``yaml.safe_load``; nothing in a document is ever executed or treated as an instruction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import regex
import yaml

from guardlex.runner._regex import REGEX_TIMEOUT
from guardlex.runner.errors import CorpusError

SCHEMA_VERSION = 1
DOC_KINDS = ("article", "case_study", "cv", "service", "page")
RECORD_KINDS = ("position", "project", "publication", "education", "talk", "service")
#: A user document larger than this is refused: the runner is for sites, not for dumps.
MAX_FILE_BYTES = 5_000_000
#: Chunks are split on headings and paragraphs and then bounded to this many words.
MAX_CHUNK_WORDS = 160
MIN_CHUNK_WORDS = 40

_DATE_RE = regex.compile(r"^\d{4}(-(0[1-9]|1[0-2]))?$")
_CHUNK_ID_RE = regex.compile(r"^[a-z]{2}(-[A-Za-z]+)?/[^/\s]+/\d+$")


@dataclass(frozen=True)
class Chunk:
    """A self-contained passage of the site, the unit of retrieval."""

    id: str
    doc_id: str
    locale: str
    kind: str
    title: str
    date: str | None
    text: str


@dataclass(frozen=True)
class Record:
    """A dated entry of the site (position, project, publication...) for overview answers."""

    id: str
    kind: str
    start: str | None
    end: str | None
    current: bool
    title: Mapping[str, str]
    summary: Mapping[str, str]

    def title_in(self, locale: str) -> str:
        """The title in ``locale``, or in English when it is not translated."""
        return self.title.get(locale) or self.title.get("en") or self.id

    def summary_in(self, locale: str) -> str:
        """The summary in ``locale``, or in English when it is not translated."""
        return self.summary.get(locale) or self.summary.get("en") or ""

    def sort_key(self) -> tuple[int, str, str]:
        """Current records first, then by end (or start) date, newest first."""
        last = self.end or self.start or ""
        return (0 if self.current else 1, _inverse_date(last), _inverse_date(self.start or ""))


def _inverse_date(date: str) -> str:
    # "YYYY" sorts as that year's first month; inverting digits sorts newest first.
    padded = date if len(date) == 7 else (date + "-01" if date else "0000-00")
    return padded.translate(str.maketrans("0123456789", "9876543210"))


@dataclass(frozen=True)
class Site:
    """Everything a store is built from."""

    chunks: tuple[Chunk, ...]
    records: tuple[Record, ...] = ()
    owner_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def locales(self) -> tuple[str, ...]:
        return tuple(sorted({c.locale for c in self.chunks}))


Progress = Callable[[int, int, str], None]


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``).

    A document is untrusted text: a few lines of nested aliases expand to gigabytes (the
    "billion laughs"), and no guardlex document needs them.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in documents", event.start_mark
            )
        return super().compose_node(parent, index)


def _safe_load(text: str, where: str) -> Any:
    """``yaml.safe_load`` without aliases; a mistake is a :class:`CorpusError` with a line."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except RecursionError as exc:
        raise CorpusError(f"{where}: invalid YAML: nested too deeply") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CorpusError(f"{where}{line}: invalid YAML: {problem}") from exc


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CorpusError(
                f"{path}: {size} bytes is larger than the limit of {MAX_FILE_BYTES}; "
                "split the document"
            )
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: cannot read: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _check_date(value: Any, where: str) -> str | None:
    if value is None:
        return None
    text = str(value)
    if not _DATE_RE.match(text, timeout=REGEX_TIMEOUT):
        raise CorpusError(f"{where}: date {text!r} must be 'YYYY' or 'YYYY-MM' (quote it)")
    return text


def parse_site_file(data: Any, where: str) -> tuple[str, tuple[str, ...], list[Chunk]]:
    """Parse one ``site/<locale>.yaml`` mapping into (locale, owner names, chunks)."""
    if not isinstance(data, Mapping):
        raise CorpusError(f"{where}: expected a mapping with 'locale' and 'documents'")
    locale = data.get("locale")
    if not isinstance(locale, str) or not locale:
        raise CorpusError(f"{where}: missing 'locale'")
    if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise CorpusError(f"{where}: unknown schema_version {data.get('schema_version')!r}")
    owner = data.get("owner") or {}
    names: list[str] = []
    if isinstance(owner, Mapping):
        if owner.get("name"):
            names.append(str(owner["name"]))
        more = owner.get("names") or []
        if not isinstance(more, list):
            raise CorpusError(f"{where}: 'owner.names' must be a list of names")
        names += [str(n) for n in more if str(n) not in names]
    docs = data.get("documents")
    if not isinstance(docs, list):
        raise CorpusError(f"{where}: 'documents' must be a list")
    chunks: list[Chunk] = []
    for i, doc in enumerate(docs):
        dwhere = f"{where}: documents[{i}]"
        if not isinstance(doc, Mapping) or not doc.get("id"):
            raise CorpusError(f"{dwhere}: a document needs an 'id'")
        doc_id = str(doc["id"])
        kind = str(doc.get("kind") or "page")
        if kind not in DOC_KINDS:
            raise CorpusError(f"{dwhere}: kind {kind!r} is not one of {', '.join(DOC_KINDS)}")
        title = str(doc.get("title") or doc_id)
        date = _check_date(doc.get("date"), dwhere)
        raw_chunks = doc.get("chunks")
        if raw_chunks is None and doc.get("text"):
            raw_chunks = [
                {"id": f"{locale}/{doc_id}/{n}", "text": t}
                for n, t in enumerate(split_text(str(doc["text"])), start=1)
            ]
        if not isinstance(raw_chunks, list) or not raw_chunks:
            raise CorpusError(f"{dwhere} ({doc_id}): needs 'chunks' (or 'text')")
        for j, ch in enumerate(raw_chunks, start=1):
            if not isinstance(ch, Mapping):
                raise CorpusError(f"{dwhere}.chunks[{j - 1}]: expected a mapping")
            cid = str(ch.get("id") or f"{locale}/{doc_id}/{j}")
            text = " ".join(str(ch.get("text") or "").split())
            if not text:
                raise CorpusError(f"{dwhere}: chunk {cid} has no text")
            if cid.split("/")[:2] != [locale, doc_id] or not _CHUNK_ID_RE.match(
                cid, timeout=REGEX_TIMEOUT
            ):
                raise CorpusError(f"{dwhere}: chunk id {cid!r} must be '{locale}/{doc_id}/<n>'")
            chunks.append(Chunk(cid, doc_id, locale, kind, title, date, text))
    return locale, tuple(names), chunks


def parse_records(data: Any, where: str) -> list[Record]:
    """Parse ``records.yaml`` (see ``docs/corpus.md``)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("records"), list):
        raise CorpusError(f"{where}: expected a mapping with a 'records' list")
    out: list[Record] = []
    for i, r in enumerate(data["records"]):
        rwhere = f"{where}: records[{i}]"
        if not isinstance(r, Mapping) or not r.get("id"):
            raise CorpusError(f"{rwhere}: a record needs an 'id'")
        kind = str(r.get("kind") or "")
        if kind not in RECORD_KINDS:
            raise CorpusError(f"{rwhere}: kind {kind!r} is not one of {', '.join(RECORD_KINDS)}")
        title = r.get("title") or {}
        summary = r.get("summary") or {}
        if isinstance(title, str):
            title = {"en": title}
        if isinstance(summary, str):
            summary = {"en": summary}
        if not isinstance(title, Mapping) or "en" not in title:
            raise CorpusError(f"{rwhere} ({r['id']}): 'title' needs at least an 'en' entry")
        if not isinstance(summary, Mapping):
            raise CorpusError(f"{rwhere} ({r['id']}): 'summary' must be text or a mapping")
        out.append(
            Record(
                id=str(r["id"]),
                kind=kind,
                start=_check_date(r.get("start"), rwhere),
                end=_check_date(r.get("end"), rwhere),
                current=bool(r.get("current", False)),
                title={str(k): " ".join(str(v).split()) for k, v in title.items()},
                summary={str(k): " ".join(str(v).split()) for k, v in dict(summary).items()},
            )
        )
    return out


def _merge(
    parts: Iterable[tuple[str, tuple[str, ...], list[Chunk]]],
    records: list[Record],
    part_origins: Iterable[str] | None = None,
    record_origins: Iterable[str] | None = None,
) -> Site:
    """One site from parsed files. Two chunks or two records with one id are an error
    naming both files (``*_origins``: the file of each part and of each record)."""
    parts = list(parts)
    p_from = list(part_origins) if part_origins is not None else ["?"] * len(parts)
    r_from = list(record_origins) if record_origins is not None else ["?"] * len(records)
    seen: dict[str, str] = {}
    chunks: list[Chunk] = []
    owners: dict[str, tuple[str, ...]] = {}
    for (locale, names, cs), origin in zip(parts, p_from, strict=True):
        if names:
            owners[locale] = names
        for c in cs:
            if c.id in seen:
                other = seen[c.id]
                where = f"{origin} and {other}" if other != origin else origin
                raise CorpusError(
                    f"duplicate chunk id {c.id!r} ({where}): give one of the documents another 'id'"
                )
            seen[c.id] = origin
            chunks.append(c)
    rseen: dict[str, str] = {}
    for rec, origin in zip(records, r_from, strict=True):
        if rec.id in rseen:
            other = rseen[rec.id]
            where = f"{origin} and {other}" if other != origin else origin
            raise CorpusError(f"duplicate record id {rec.id!r} ({where}): record ids must differ")
        rseen[rec.id] = origin
    return Site(tuple(chunks), tuple(records), owners)


def sample_site() -> Site:
    """The bundled sample site (a fictional owner) from ``guardlex/corpus/site/``."""
    root = resources.files("guardlex.corpus").joinpath("site")
    parts = []
    origins: list[str] = []
    records: list[Record] = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        where = f"corpus/site/{entry.name}"
        data = _safe_load(entry.read_text(encoding="utf-8"), where)
        if entry.name == "records.yaml":
            records = parse_records(data, where)
        else:
            parts.append(parse_site_file(data, where))
            origins.append(where)
    if not parts:
        raise CorpusError("the sample site is missing from guardlex/corpus/site/")
    return _merge(parts, records, origins, ["corpus/site/records.yaml"] * len(records))


def sample_site_fingerprint() -> str:
    """A hash of the sample-site files, so a cached store is rebuilt when they change."""
    import hashlib

    h = hashlib.sha256()
    root = resources.files("guardlex.corpus").joinpath("site")
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".yaml"):
            h.update(entry.name.encode())
            h.update(entry.read_bytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- user documents

_HEADING_RE = regex.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FRONT_RE = regex.compile(r"\A---\s*\n(.*?)\n---\s*\n", regex.DOTALL)


def split_text(text: str, max_words: int = MAX_CHUNK_WORDS) -> list[str]:
    """Split prose into chunks: paragraphs merged up to ``MIN_CHUNK_WORDS``, long ones cut.

    Paragraph boundaries are kept where possible so a chunk stays self-contained; a
    paragraph longer than ``max_words`` is cut at sentence ends, then at word boundaries.
    Chinese has no spaces, so its length is counted in characters (two per word).
    """
    paras = [
        " ".join(p.split())
        for p in regex.split(r"\n\s*\n", text, timeout=REGEX_TIMEOUT)
        if p.strip()
    ]
    pieces: list[str] = []
    for p in paras:
        pieces.extend(_bound(p, max_words))
    out: list[str] = []
    for p in pieces:
        if out and _size(out[-1]) < MIN_CHUNK_WORDS and _size(out[-1]) + _size(p) <= max_words:
            out[-1] = f"{out[-1]} {p}"
        else:
            out.append(p)
    return out


def _size(text: str) -> int:
    words = len(text.split())
    han = len(regex.findall(r"[\u4e00-\u9fff]", text, timeout=REGEX_TIMEOUT))
    return max(words, han // 2)


def _bound(para: str, max_words: int) -> list[str]:
    if _size(para) <= max_words:
        return [para]
    sentences = regex.split(r"(?<=[.!?。！？؟।])\s+|(?<=[。！？])", para, timeout=REGEX_TIMEOUT)
    out: list[str] = []
    cur = ""
    for s in sentences:
        if not s:
            continue
        if _size(s) > max_words:
            if cur:
                out.append(cur)
                cur = ""
            out.extend(_cut(s, max_words))
            continue
        cand = f"{cur} {s}".strip() if cur else s
        if _size(cand) > max_words:
            out.append(cur)
            cur = s
        else:
            cur = cand
    if cur:
        out.append(cur)
    return out


def _cut(text: str, max_words: int) -> list[str]:
    words = text.split()
    if len(words) > 1:
        return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]
    step = max_words * 2
    return [text[i : i + step] for i in range(0, len(text), step)]


def parse_markdown(
    text: str, path: Path, locale: str, default_id: str | None = None
) -> tuple[str, tuple[str, ...], list[Chunk]]:
    """One Markdown file -> chunks split on headings and paragraphs.

    Optional front matter (``---`` YAML ``---``) may give ``id``, ``title``, ``date``,
    ``kind`` and ``locale``; otherwise the id is ``default_id`` (in a folder: the file's
    path inside it, so ``intro/index.md`` and ``api/index.md`` differ) or the file name,
    and the title the first heading.
    """
    meta: Mapping[str, Any] = {}
    m = _FRONT_RE.match(text, timeout=REGEX_TIMEOUT)
    if m:
        loaded = _safe_load(m.group(1), str(path))
        if loaded is not None and not isinstance(loaded, Mapping):
            raise CorpusError(f"{path}: front matter must be a mapping")
        meta = loaded or {}
        text = text[m.end() :]
    loc = str(meta.get("locale") or locale)
    doc_id = _slug(str(meta.get("id") or default_id or path.stem))
    sections: list[tuple[str, list[str]]] = [("", [])]
    title = str(meta.get("title") or "")
    for line in text.splitlines():
        h = _HEADING_RE.match(line, timeout=REGEX_TIMEOUT)
        if h:
            if not title:
                title = h.group(2)
            sections.append((h.group(2), []))
        else:
            sections[-1][1].append(line)
    chunks: list[Chunk] = []
    kind = str(meta.get("kind") or "page")
    if kind not in DOC_KINDS:
        raise CorpusError(f"{path}: kind {kind!r} is not one of {', '.join(DOC_KINDS)}")
    date = _check_date(meta.get("date"), str(path))
    for heading, lines in sections:
        body = "\n".join(lines).strip()
        if not body:
            continue
        for piece in split_text(body):
            text_ = f"{heading}: {piece}" if heading and heading != title else piece
            cid = f"{loc}/{doc_id}/{len(chunks) + 1}"
            chunks.append(Chunk(cid, doc_id, loc, kind, title or doc_id, date, text_))
    if not chunks:
        raise CorpusError(f"{path}: no text to index")
    return loc, (), chunks


def _slug(text: str) -> str:
    slug = regex.sub(r"[\s/]+", "-", text.strip(), timeout=REGEX_TIMEOUT).strip("-")
    return slug or "doc"


#: Called with (path, reason) for every file or folder ``guardlex index`` leaves out.
Skipped = Callable[[Path, str], None]

_DOC_EXTS = {".md", ".markdown", ".yaml", ".yml"}


def document_files(root: Path, on_skip: Skipped | None = None) -> list[Path]:
    """The Markdown and YAML files under ``root`` (sorted, hidden files skipped).

    Indexing stays inside ``root``: a link (file or folder) is never followed out of it.
    A symbolic link whose target lies outside ``root`` is left out and reported to
    ``on_skip``; so is a linked folder (never descended into: its files are either
    outside or already read). ``root`` itself may be a link or a single file.
    """
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise CorpusError(f"{root}: no such file or folder")
    real_root = root.resolve()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            if (here / d).is_symlink():
                if on_skip is not None:
                    on_skip(here / d, "a linked folder (links are not followed)")
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = here / name
            if name.startswith(".") or path.suffix.lower() not in _DOC_EXTS:
                continue
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    if on_skip is not None:
                        on_skip(path, "a broken link")
                    continue
                if not target.is_relative_to(real_root):
                    if on_skip is not None:
                        on_skip(path, f"a link to a file outside {root}")
                    continue
            if path.is_file():
                found.append(path)
    return sorted(found)


def _default_id(root: Path, path: Path) -> str:
    """A document's id when it gives none: its path inside the folder, without suffix."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return path.stem
    return rel.with_suffix("").as_posix() if rel.parts else path.stem


def iter_folder(
    root: Path, default_locale: str = "en", on_skip: Skipped | None = None
) -> Iterator[tuple[Path, tuple[str, tuple[str, ...], list[Chunk]] | list[Record]]]:
    """Parse each document file under ``root``; yields (path, parsed) in file order."""
    for path in document_files(root, on_skip):
        text = _read_text(path)
        default_id = _slug(_default_id(root, path)) if root.is_dir() else None
        if path.suffix.lower() in (".md", ".markdown"):
            yield path, parse_markdown(text, path, default_locale, default_id)
            continue
        data = _safe_load(text, str(path))
        if isinstance(data, Mapping) and "records" in data and "documents" not in data:
            yield path, parse_records(data, str(path))
        elif isinstance(data, Mapping) and "documents" in data:
            if "locale" not in data:
                data = {**data, "locale": default_locale}
            yield path, parse_site_file(data, str(path))
        elif isinstance(data, Mapping) and ("text" in data or "chunks" in data):
            doc = {**data, "id": data.get("id") or default_id or path.stem}
            site = {"locale": data.get("locale") or default_locale, "documents": [doc]}
            yield path, parse_site_file(site, str(path))
        else:
            raise CorpusError(
                f"{path}: not a guardlex document (expected 'documents', 'records', or a "
                "single document with 'text' or 'chunks'; see docs/corpus.md)"
            )


def load_folder(
    root: Path,
    default_locale: str = "en",
    progress: Progress | None = None,
    on_skip: Skipped | None = None,
) -> Site:
    """Read a folder of Markdown or YAML documents supplied by a user.

    ``on_skip(path, reason)`` hears of every link left out (see :func:`document_files`).
    Any mistake in a document is a :class:`CorpusError` naming the file.
    """
    skipped: list[tuple[Path, str]] = []

    def note(path: Path, reason: str) -> None:
        if (path, reason) not in skipped:
            skipped.append((path, reason))
            if on_skip is not None:
                on_skip(path, reason)

    files = document_files(root, note)
    if not files:
        raise CorpusError(f"{root}: no Markdown (.md) or YAML (.yaml, .yml) documents found")
    parts = []
    origins: list[str] = []
    records: list[Record] = []
    record_origins: list[str] = []
    for n, (path, parsed) in enumerate(iter_folder(root, default_locale, note), start=1):
        if isinstance(parsed, list):
            records.extend(parsed)
            record_origins += [str(path)] * len(parsed)
        else:
            parts.append(parsed)
            origins.append(str(path))
        if progress is not None:
            progress(n, len(files), str(path))
    return _merge(parts, records, origins, record_origins)
