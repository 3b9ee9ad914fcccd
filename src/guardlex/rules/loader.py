"""Finding, reading, checking and merging locale packs.

Packs come from three places, merged in this order: the packs shipped in
``guardlex/locales``, packs registered by other distributions under the entry-point
group ``guardlex.packs``, and the ``paths`` passed by the caller. Each source is a
directory of locale folders (``<dir>/<code>/refusal.yaml`` ...) or a single locale
folder. Later sources extend earlier ones; see ``docs/extending.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from guardlex.errors import PackError, UnknownLocaleError
from guardlex.rules._schema import (
    FILE_KINDS,
    SCHEMA_VERSIONS,
    PackFile,
    Problem,
    load_schema,
    read_pack_file,
    validate,
)
from guardlex.rules.locale_info import LocaleInfo, merge_locale_info

log = logging.getLogger("guardlex.rules")

ENTRY_POINT_GROUP = "guardlex.packs"
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "locales"
REFUSAL_CATEGORIES = ("engagement", "personal_data", "speculation", "meta", "task")
OVERVIEW_TOPICS = (
    "now",
    "career",
    "projects",
    "research",
    "publications",
    "education",
    "skills",
    "services",
)
LOCALE_CODE = regex.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


@dataclass(frozen=True)
class RuleSpec:
    """One rule as written in a pack, after merging, before compilation."""

    id: str
    locale: str
    section: str  # "refusal" or "overview"
    category: str | None  # refusal category, None for overview rules
    topic: str | None  # overview topic, None for refusal rules
    about: str
    phrases: tuple[str, ...]
    patterns: tuple[str, ...]
    match: tuple[str, ...]
    no_match: tuple[str, ...]
    enabled: bool
    path: str
    line: int
    phrase_lines: tuple[int, ...] = ()
    pattern_lines: tuple[int, ...] = ()
    # rule language 2 (schema_version 2): ``phrases`` holds the ``templates`` and
    # ``patterns`` the ``regex`` escape hatch, so code reading either keeps working
    when: dict[str, Any] | None = None
    when_line: int = 0
    priority: int = 0
    reads_pasted: bool = False
    version: int = 1


@dataclass
class LocaleData:
    """Everything one locale provides, merged over all sources."""

    code: str
    rules: list[RuleSpec] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    first_person: dict[str, Any] = field(default_factory=dict)
    lexicon: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    stopwords: set[str] = field(default_factory=set)
    files: list[PackFile] = field(default_factory=list)
    info: LocaleInfo | None = None  # the facts of locale.yaml
    concepts: dict[str, Any] = field(default_factory=dict)  # name -> compiler.ConceptSpec

    def active_rules(self) -> list[RuleSpec]:
        """Rules that take part in routing (enabled and not disabled by an extension)."""
        return [r for r in self.rules if r.enabled and r.id not in self.disabled]


def _entry_point_dirs() -> list[Path]:
    """Directories registered under the ``guardlex.packs`` entry-point group."""
    from importlib.metadata import entry_points

    out: list[Path] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            target: Any = ep.load()
            if callable(target):
                target = target()
            folder = Path(target)
        except Exception as exc:  # a broken third-party pack must say so, not vanish
            raise PackError(
                f"entry point {ep.name!r} ({ep.value}) in group {ENTRY_POINT_GROUP!r} failed "
                f"to load: {exc}; fix or uninstall the distribution that provides it"
            ) from exc
        if not folder.is_dir():
            raise PackError(
                f"entry point {ep.name!r} ({ep.value}) in group {ENTRY_POINT_GROUP!r} names the "
                f"pack folder {str(folder)!r}, which does not exist; the distribution that "
                "provides it is incomplete: reinstall or uninstall it"
            )
        out.append(folder)
    return out


def _is_locale_dir(path: Path) -> bool:
    return any((path / f"{kind}.yaml").is_file() for kind in FILE_KINDS)


def discover(
    paths: Sequence[str | Path] = (), *, entry_points: bool = True, shipped: bool = True
) -> dict[str, list[Path]]:
    """Map each locale code to its folders, in merge order (shipped, entry points, paths)."""
    roots: list[Path] = [SHIPPED_DIR] if shipped else []
    if entry_points:
        roots.extend(_entry_point_dirs())
    for p in paths:
        path = Path(p)
        if not path.is_dir():
            raise PackError(f"pack directory {str(path)!r} does not exist or is not a directory")
        roots.append(path)
    found: dict[str, list[Path]] = {}
    for root in roots:
        if _is_locale_dir(root):
            candidates = [root]
        elif root.is_dir():
            candidates = sorted(p for p in root.iterdir() if p.is_dir())
        else:
            continue
        for folder in candidates:
            folder = folder.resolve()
            if LOCALE_CODE.match(folder.name, timeout=1.0) and _is_locale_dir(folder):
                known = found.setdefault(folder.name, [])
                if folder not in known:
                    known.append(folder)
    return found


def _check_header(pf: PackFile, code: str) -> list[tuple[PackFile, int, str]]:
    problems: list[tuple[PackFile, int, str]] = []
    locale = pf.data.get("locale")
    if locale is not None and locale != code:
        problems.append(
            (
                pf,
                pf.line(("locale",)),
                f"'locale: {locale}' does not match the folder name '{code}'; "
                f"write 'locale: {code}' or move the file",
            )
        )
    version = pf.data.get("schema_version")
    if version is not None and version not in SCHEMA_VERSIONS:
        known = ", ".join(str(v) for v in sorted(SCHEMA_VERSIONS))
        problems.append(
            (
                pf,
                pf.line(("schema_version",)),
                f"schema_version {version!r} is not known to this guardlex (known: {known}); "
                "upgrade guardlex or use a known version",
            )
        )
    return problems


def schema_problems(pf: PackFile, code: str) -> list[tuple[PackFile, int, str]]:
    """Every schema and header problem of one file, each with its line."""
    found: list[Problem] = validate(pf.data, load_schema(pf.kind))
    out = [(pf, pf.line(p.path), p.message) for p in found]
    out.extend(_check_header(pf, code))
    return out


def read_locale_files(folder: Path, code: str) -> list[PackFile]:
    """Parse the pack files present in one locale folder.

    ``<kind>.generated.yaml`` (written by a tool in ``tools/``, same schema as
    ``<kind>.yaml``) is read right after ``<kind>.yaml`` and merged like it.
    """
    names = [(k, f"{k}{suffix}.yaml") for k in FILE_KINDS for suffix in ("", ".generated")]
    return [read_pack_file(folder / name, k) for k, name in names if (folder / name).is_file()]


def _lines_of(pf: PackFile, base: tuple[str | int, ...], key: str, n: int) -> tuple[int, ...]:
    return tuple(pf.line((*base, key, i)) for i in range(n))


def _rule_from(
    pf: PackFile, raw: dict[str, Any], base: tuple[str | int, ...], code: str, category: str | None
) -> RuleSpec:
    examples = raw.get("examples") or {}
    v2 = pf.data.get("schema_version") == 2
    pkey, rkey = ("templates", "regex") if v2 else ("phrases", "patterns")
    phrases = tuple(raw.get(pkey) or ())
    patterns = tuple(raw.get(rkey) or ())
    if v2 and pf.kind == "refusal":
        category = raw.get("category")
    return RuleSpec(
        id=raw["id"],
        locale=code,
        section="refusal" if pf.kind == "refusal" else "overview",
        category=category,
        topic=raw.get("topic"),
        about=raw.get("about", ""),
        phrases=phrases,
        patterns=patterns,
        match=tuple(examples.get("match") or ()),
        no_match=tuple(examples.get("no_match") or ()),
        enabled=bool(raw.get("enabled", True)),
        path=str(pf.path),
        line=pf.line(base),
        phrase_lines=_lines_of(pf, base, pkey, len(phrases)),
        pattern_lines=_lines_of(pf, base, rkey, len(patterns)),
        when=raw.get("when") if v2 else None,
        when_line=pf.line((*base, "when")),
        priority=int(raw.get("priority") or 0),
        reads_pasted=bool(raw.get("reads_pasted", False)),
        version=2 if v2 else 1,
    )


def _merge_words(target: list[str], words: Iterable[str]) -> None:
    """Append the words not yet in ``target``, in order (linear: a set of what is there)."""
    try:
        seen = set(target)
    except TypeError:  # an unhashable entry (the schema reports it): keep list semantics
        for w in words:
            if w not in target:
                target.append(w)
        return
    for w in words:
        try:
            new = w not in seen
        except TypeError:
            new = w not in target
        if new:
            target.append(w)
            with contextlib.suppress(TypeError):
                seen.add(w)


def _merge_file(data: LocaleData, pf: PackFile) -> None:
    d = pf.data
    code = data.code
    disabled = list(d.get("disabled") or ())
    if pf.kind in ("refusal", "overview"):
        index = {(r.section, r.id): i for i, r in enumerate(data.rules)}
        groups: list[tuple[str | None, list[Any], tuple[str]]]
        if pf.kind == "refusal" and d.get("schema_version") == 2:
            groups = [("", d.get("rules") or [], ("rules",))]  # category per rule
        elif pf.kind == "refusal":
            groups = [(c, d.get(c) or [], (c,)) for c in REFUSAL_CATEGORIES]
        else:
            groups = [(None, d.get("rules") or [], ("rules",))]
        for category, raws, base in groups:
            for i, raw in enumerate(raws):
                rule = _rule_from(pf, raw, (*base, i), code, category)
                rkey = (rule.section, rule.id)
                if rkey in index:
                    data.rules[index[rkey]] = rule
                else:
                    index[rkey] = len(data.rules)
                    data.rules.append(rule)
        data.disabled.update(disabled)
    elif pf.kind == "concepts":
        from guardlex.rules.compiler import ConceptSpec

        for name, raw in (d.get("concepts") or {}).items():
            cbase: tuple[str, ...] = ("concepts", name)
            terms = tuple(str(t) for t in raw.get("terms") or ())
            ex = raw.get("examples") or {}
            data.concepts[name] = ConceptSpec(
                name=name,
                about=str(raw.get("about") or ""),
                terms=terms,
                path=str(pf.path),
                line=pf.line(cbase),
                term_lines=_lines_of(pf, cbase, "terms", len(terms)),
                match=tuple(ex.get("match") or ()),
                no_match=tuple(ex.get("no_match") or ()),
            )
        for name in disabled:
            data.concepts.pop(name, None)
    elif pf.kind == "stopwords":
        data.stopwords.update(d.get("words") or ())
        data.stopwords.difference_update(disabled)
    elif pf.kind == "first_person":
        fp = data.first_person
        for key in ("pronouns", "verb_forms", "exceptions", "as_written", "quotes"):
            words = fp.setdefault(key, [])
            _merge_words(words, d.get(key) or ())
            fp[key] = [w for w in words if w not in disabled]
        # context groups (see guardlex.rules.first_person): merged there by id
        fp.setdefault("contexts", []).extend(d.get("contexts") or ())
        _merge_words(fp.setdefault("proclitics", []), d.get("proclitics") or ())
        if "examples" in d:
            fp["examples"] = d["examples"]
    elif pf.kind == "lexicon":
        lex = data.lexicon
        for key in (
            "pronouns",
            "unlimited",
            "not_applicable",
            "per",
            "abbreviations",
            "final_abbreviations",
            "ordinal_nouns",
            "proclitics",
            "numeral_point",
            "charge_words",
        ):
            words = lex.setdefault(key, [])
            _merge_words(words, d.get(key) or ())
            lex[key] = [w for w in words if w not in disabled]
        for key in (
            "ordinals",
            "units",
            "number_words",
            "numeral_digits",
            "numeral_multipliers",
            "currencies",
        ):
            table = lex.setdefault(key, {})
            for name, words in (d.get(key) or {}).items():
                _merge_words(table.setdefault(str(name), []), words)
        lex.setdefault("negations", []).extend(d.get("negations") or ())
    elif pf.kind == "messages":
        data.messages.update(d.get("messages") or {})


def load_locale(code: str, folders: Sequence[Path], *, strict: bool = True) -> LocaleData:
    """Read, check and merge every folder that provides ``code``.

    With ``strict`` the first schema problem raises ``PackError`` (the loader); without
    it problems are left for the linter to report all at once.
    """
    data = LocaleData(code=code)
    try:
        data.info = merge_locale_info(code, folders)
    except PackError:
        if strict:
            raise
        data.info = LocaleInfo(code=code)  # the linter reports the problem with its line
    for folder in folders:
        for pf in read_locale_files(folder, code):
            if strict:
                problems = schema_problems(pf, code)
                if problems:
                    _, line, message = problems[0]
                    more = (
                        f" (and {len(problems) - 1} more; run 'guardlex lint')"
                        if len(problems) > 1
                        else ""
                    )
                    raise PackError(message + more, str(pf.path), line)
            data.files.append(pf)
            try:
                _merge_file(data, pf)
            except (KeyError, TypeError, AttributeError) as exc:
                if strict:
                    raise PackError(
                        f"malformed content ({exc}); run 'guardlex lint'", str(pf.path)
                    ) from exc
    if strict:
        from guardlex.rules.checks import check_locale

        check_locale(data)
    return data


def select_locales(found: dict[str, list[Path]], locales: Iterable[str] | None) -> list[str]:
    """The requested codes in a deterministic order, or every discovered code sorted."""
    if locales is None:
        return sorted(found)
    if isinstance(locales, str):
        locales = [locales]
    out: list[str] = []
    for code in locales:
        if code not in found:
            available = ", ".join(sorted(found)) or "none"
            raise UnknownLocaleError(
                f"no pack provides locale {code!r}; available locales: {available}"
            )
        if code not in out:
            out.append(code)
    if not out:
        raise UnknownLocaleError(
            "no locale requested; pass None for all of: " + ", ".join(sorted(found))
        )
    return out


def fingerprint(folders: Iterable[Path], extra: Iterable[str] = ()) -> str:
    """A hash of every pack file's bytes plus ``extra`` (used as the cache key)."""
    h = hashlib.sha256()
    for folder in folders:
        for name in [f"{k}{x}.yaml" for k in FILE_KINDS for x in ("", ".generated")]:
            p = folder / name
            if p.is_file():
                h.update(str(p).encode())
                h.update(b"\0")
                h.update(p.read_bytes())
                h.update(b"\0")
    for e in extra:
        h.update(e.encode())
        h.update(b"\0")
    return h.hexdigest()


def source_digest(folders: Iterable[Path]) -> str:
    """A hash of every pack file's name and bytes, in merge order, independent of where
    the folders are (the key of the shipped programs, ``cache.load_precompiled``)."""
    h = hashlib.sha256()
    for k, folder in enumerate(folders):
        for name in [f"{kind}{x}.yaml" for kind in FILE_KINDS for x in ("", ".generated")]:
            p = folder / name
            if p.is_file():
                data = p.read_bytes()
                h.update(f"{k}|{name}|{len(data)}\n".encode())
                h.update(data)
    return h.hexdigest()
