"""Locale packs: loading, checking, compiling and matching (docs/packs.md).

``load_packs`` is the entry point::

    >>> from guardlex import load_packs
    >>> packs = load_packs(["en"], subject_names=["Dana Reyes"])  # doctest: +SKIP
    >>> packs.route("Is Dana Reyes available next month?").kind  # doctest: +SKIP
    'refuse'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from guardlex.rules._gc import collection_paused
from guardlex.rules.cache import load_cached, load_precompiled, store_cached
from guardlex.rules.engine import (
    FOLLOW_UP_MAX_WORDS,
    FOLLOW_UP_SHORT_WORDS,
    MAX_INPUT_CHARS,
    REGEX_TIMEOUT,
    TIMEOUT_RULE_ID,
    CompiledRule,
    FirstPersonHit,
    LocaleState,
    Packs,
    Route,
    frozen_mapping,
)
from guardlex.rules.first_person import first_person_sources
from guardlex.rules.loader import (
    OVERVIEW_TOPICS,
    REFUSAL_CATEGORIES,
    LocaleData,
    discover,
    fingerprint,
    load_locale,
    select_locales,
    source_digest,
)
from guardlex.rules.locale_info import merge_locale_info

__all__ = [
    "FOLLOW_UP_MAX_WORDS",
    "FOLLOW_UP_SHORT_WORDS",
    "MAX_INPUT_CHARS",
    "OVERVIEW_TOPICS",
    "REFUSAL_CATEGORIES",
    "REGEX_TIMEOUT",
    "TIMEOUT_RULE_ID",
    "CompiledRule",
    "FirstPersonHit",
    "Packs",
    "Route",
    "compile_locale",
    "load_packs",
]


def compile_locale(data: LocaleData, subject_names: Sequence[str] = ()) -> dict[str, Any]:
    """Expand one merged locale into plain data (regex sources, word lists, messages).

    The result holds only strings, lists and dicts, so it can be cached as JSON. The
    cyclic garbage collector is paused meanwhile: compiling allocates hundreds of
    thousands of small acyclic objects, and each collection would walk all of them again
    (about a third of the compile time).
    """
    with collection_paused():
        return _compile_locale(data)


def _compile_locale(data: LocaleData) -> dict[str, Any]:
    from guardlex.rules.compiler import compile_program

    program = compile_program(data)  # does not depend on subject_names
    fp = data.first_person
    fp_source, fp_exceptions, fp_words = first_person_sources(fp)
    from guardlex.rules._text import normalise

    signal = set(data.stopwords)
    for w in [*fp.get("pronouns", []), *data.lexicon.get("pronouns", [])]:
        signal.update(normalise(w).split(" "))
    return {
        "code": data.code,
        "program": program,
        "first_person": fp_source,
        "exceptions": fp_exceptions,
        "first_person_words": fp_words,
        "stopwords": sorted(data.stopwords),
        "signal": sorted(w for w in signal if w),
        "lexicon": data.lexicon,
        "messages": data.messages,
    }


def _state(c: dict[str, Any]) -> LocaleState:
    code = str(c["code"])
    compiled = [
        CompiledRule(
            id=r["id"],
            locale=code,
            section=r["section"],
            category=r["category"],
            topic=r["topic"],
            about=r.get("about") or "",
            priority=int(r.get("priority") or 0),
        )
        for r in c["program"]["rules"]
    ]
    return LocaleState(
        code=code,
        refusal=tuple(r for r in compiled if r.section == "refusal"),
        overview=tuple(r for r in compiled if r.section == "overview"),
        first_person_source=str(c["first_person"]),
        exception_source=str(c["exceptions"]),
        # (not ``or {}``: the tables of a shipped program are decoded on first use)
        first_person_words=_or_empty(c.get("first_person_words")),
        stopwords=frozenset(c["stopwords"]),
        signal_words=frozenset(c["signal"]),
        lexicon=frozen_mapping(c["lexicon"]),
        messages=frozen_mapping(c["messages"]),
        program={"code": code, **c["program"]},
    )


def _or_empty(value: Any) -> Any:
    return {} if value is None else value


def load_packs(
    locales: Iterable[str] | None = None,
    subject_names: Sequence[str] = (),
    paths: Sequence[str | Path] = (),
    *,
    cache: bool = True,
    shipped: bool = True,
) -> Packs:
    """Load, check, merge and compile locale packs.

    ``locales``: codes to load, in routing order (default: every discovered locale,
    sorted). ``subject_names``: names ``{subject}`` also stands for. ``paths``: extra pack
    directories, merged after the shipped packs and the ``guardlex.packs`` entry points.
    Raises ``UnknownLocaleError`` for a code no pack provides and ``PackError`` (with
    file and line) for a malformed pack. Expanded packs are cached on disk (see
    ``guardlex.rules.cache``) unless ``cache=False``; a shipped locale whose files are
    as shipped reads the program shipped with guardlex instead of compiling it (also
    skipped with ``cache=False``). ``shipped=False`` leaves out the
    packs shipped with guardlex and those of entry points: only ``paths`` are read.
    """
    found = discover(paths, entry_points=shipped, shipped=shipped)
    codes = select_locales(found, locales)
    if isinstance(subject_names, str):
        raise TypeError(
            "subject_names must be a sequence of names, not one string "
            f"(write subject_names=[{subject_names!r}])"
        )
    names = tuple(subject_names)
    states = []
    infos = {code: merge_locale_info(code, found[code]) for code in codes}
    with collection_paused():  # reading programs allocates many small objects
        for code in codes:
            state = None
            if cache:  # the shipped program, when it is the one for these pack files
                state = _read_state(load_precompiled(code, source_digest(found[code])), code)
            if state is None:
                key = fingerprint(found[code], [code])  # programs do not depend on names
                state = _read_state(load_cached(key) if cache else None, code)
                if state is None:
                    compiled = compile_locale(load_locale(code, found[code]), names)
                    if cache:
                        store_cached(key, compiled)
                    state = _state(compiled)
            states.append(state)
    return Packs(states, names, infos)


def _read_state(compiled: dict[str, Any] | None, code: str) -> LocaleState | None:
    """The state of a cached or shipped program, or None when it cannot be used."""
    if compiled is None or compiled.get("code") != code:
        return None
    try:
        return _state(compiled)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # an entry this code cannot read: compile again
