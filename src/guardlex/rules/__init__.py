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

from guardlex.rules.anchors import rule_anchors
from guardlex.rules.cache import load_cached, store_cached
from guardlex.rules.compile import proclitic_source, rule_sources, subject_source
from guardlex.rules.engine import (
    FOLLOW_UP_MAX_WORDS,
    FOLLOW_UP_SHORT_WORDS,
    MAX_INPUT_CHARS,
    REGEX_TIMEOUT,
    SUBJECT_CALL,
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
)
from guardlex.rules.locale_info import LocaleInfo, merge_locale_info

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


#: Stands for ``{subject}`` when computing anchors: matches a character, anchors nothing.
SUBJECT_FOR_ANCHORS = "."


def _inline_in_lookbehinds(source: str, subject: str) -> str:
    """Expand ``(?&subject)`` where it stands inside a lookbehind.

    The ``regex`` module mis-handles a group call inside a lookbehind: the whole pattern
    then fails to match, even through its other alternatives. Elsewhere the call stays.
    """
    if SUBJECT_CALL not in source or "(?<" not in source:
        return source
    out: list[str] = []
    stack: list[bool] = []  # per open group: is it a lookbehind?
    i, n, in_class = 0, len(source), False
    while i < n:
        ch = source[i]
        if ch == "\\":
            out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif source.startswith(SUBJECT_CALL, i):
            out.append(f"(?:{subject})" if any(stack) else SUBJECT_CALL)
            i += len(SUBJECT_CALL)
            continue
        elif ch == "(":
            stack.append(source.startswith(("(?<=", "(?<!"), i))
        elif ch == ")" and stack:
            stack.pop()
        out.append(ch)
        i += 1
    return "".join(out)


def compile_locale(data: LocaleData, subject_names: Sequence[str] = ()) -> dict[str, Any]:
    """Expand one merged locale into plain data (regex sources, word lists, messages).

    The result holds only strings, lists and dicts, so it can be cached as JSON.
    """
    info = data.info or LocaleInfo(code=data.code)
    subject = subject_source(
        data.lexicon.get("pronouns", []), subject_names, info.titles, info.titles_after
    )
    proclitics = proclitic_source(data.lexicon.get("proclitics", []))
    rules = []
    for r in data.active_rules():
        sources = [
            _inline_in_lookbehinds(src, subject)
            for src in rule_sources(r.phrases, r.patterns, SUBJECT_CALL, proclitics)
        ]
        # anchors come from the rule's own words: "{subject}" contributes none
        anchors = rule_anchors(rule_sources(r.phrases, r.patterns, SUBJECT_FOR_ANCHORS))
        rules.append(
            {
                "id": r.id,
                "section": r.section,
                "category": r.category,
                "topic": r.topic,
                "sources": sources,
                "anchors": None if anchors is None else sorted(anchors),
            }
        )
    fp = data.first_person
    fp_source, fp_exceptions = first_person_sources(fp)
    from guardlex.rules._text import normalise

    signal = set(data.stopwords)
    for w in [*fp.get("pronouns", []), *data.lexicon.get("pronouns", [])]:
        signal.update(normalise(w).split(" "))
    return {
        "code": data.code,
        "subject": subject,
        "rules": rules,
        "first_person": fp_source,
        "exceptions": fp_exceptions,
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
            sources=tuple(r["sources"]),
            anchors=None if r["anchors"] is None else tuple(r["anchors"]),
            subject=str(c["subject"]),
        )
        for r in c["rules"]
    ]
    return LocaleState(
        code=code,
        refusal=tuple(r for r in compiled if r.section == "refusal"),
        overview=tuple(r for r in compiled if r.section == "overview"),
        first_person_source=str(c["first_person"]),
        exception_source=str(c["exceptions"]),
        stopwords=frozenset(c["stopwords"]),
        signal_words=frozenset(c["signal"]),
        lexicon=frozen_mapping(c["lexicon"]),
        messages=frozen_mapping(c["messages"]),
    )


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
    ``guardlex.rules.cache``) unless ``cache=False``. ``shipped=False`` leaves out the
    packs shipped with guardlex and those of entry points: only ``paths`` are read.
    """
    found = discover(paths, entry_points=shipped, shipped=shipped)
    codes = select_locales(found, locales)
    names = tuple(subject_names)
    states = []
    infos = {code: merge_locale_info(code, found[code]) for code in codes}
    for code in codes:
        key = fingerprint(found[code], [code, *names])
        compiled = load_cached(key) if cache else None
        if compiled is None:
            compiled = compile_locale(load_locale(code, found[code]), names)
            if cache:
                store_cached(key, compiled)
        states.append(_state(compiled))
    return Packs(states, names, infos)
