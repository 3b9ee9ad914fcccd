"""First-person detection: does a text speak as "I" or "we"?

A locale's ``first_person.yaml`` (and the ``first_person.generated.yaml`` a tool in
``tools/`` writes beside it, merged by the loader) gives:

* ``pronouns`` and ``verb_forms``: words that are first person wherever they stand
  (whole words; Han entries need no boundary);
* ``contexts``: words that are first person only in some company, each group with
  ``not_after`` (the group does not count right after one of these words: Spanish
  "el trabajo" is a noun, "trabajo en Madrid" is "I work"), ``after`` (counts only right
  after one of these: Portuguese "-nos" after a hyphen is "us", "nos" alone is "in the")
  and ``not_before``. Groups with the same ``id`` are merged, so a generated file adds
  words to a group whose conditions are written by hand;
* ``exceptions``: spans in which no entry counts (Chinese 自我, English "the US").

Everything is compiled into one alternation per locale (``first_person_sources``), so a
sentence is scanned once. Without a locale, the text's language is identified
(``guardlex.langid``) and every locale that is the only one writing a script present in
the text is checked too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import regex

from guardlex.rules._text import WORD_END, WORD_START, normalise, normalise_with_offsets

log = logging.getLogger("guardlex.rules")

CONTEXT_KEYS = ("not_after", "after", "not_before")


@dataclass(frozen=True)
class FirstPersonHit:
    """A first-person word found in a text: the word as written, its locale and span."""

    word: str
    locale: str
    span: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        return {"word": self.word, "locale": self.locale, "span": list(self.span)}


def merge_contexts(groups: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Context groups with the same ``id`` merged (words and conditions united), in order."""
    merged: dict[str, dict[str, Any]] = {}
    for i, group in enumerate(groups):
        key = str(group.get("id") or f"#{i}")
        target = merged.setdefault(key, {"id": key, "words": []})
        for name in ("words", *CONTEXT_KEYS):
            for w in group.get(name) or ():
                bucket = target.setdefault(name, [])
                if w not in bucket:
                    bucket.append(w)
    return list(merged.values())


def _neighbour_source(words: Sequence[str]) -> str:
    """One of ``words`` as the neighbour of an entry: a whole word, or a literal mark."""
    from guardlex.rules.compile import literal_source, normalise_literal

    alts = []
    for w in words:
        lit = normalise_literal(w).strip(" ")
        if not lit:
            continue
        src = literal_source(lit)
        if regex.match(r"\w", lit[0]):
            src = WORD_START + src
        if regex.match(r"\w", lit[-1]):
            src = src + WORD_END
        alts.append(src)
    return "(?:" + "|".join(sorted(set(alts), key=lambda s: (-len(s), s))) + ")" if alts else ""


def context_source(group: Mapping[str, Any]) -> str:
    """The regex of one context group (``(?!)`` when it has no words)."""
    from guardlex.rules.engine import words_source

    body = words_source(list(group.get("words") or ()))
    if body == "(?!)":
        return body
    before = ""
    not_after = _neighbour_source(group.get("not_after") or ())
    if not_after:
        before += rf"(?<!{not_after}[^\w]{{0,2}})"
    after = _neighbour_source(group.get("after") or ())
    if after:
        before += rf"(?<={after}\s?)"
    tail = ""
    not_before = _neighbour_source(group.get("not_before") or ())
    if not_before:
        tail = rf"(?![^\w]{{0,2}}{not_before})"
    return f"(?:{before}{body}{tail})"


def first_person_sources(fp: Mapping[str, Any]) -> tuple[str, str]:
    """(entries, exceptions) regex sources of a merged ``first_person`` mapping."""
    from guardlex.rules.engine import words_source

    plain = words_source([*(fp.get("pronouns") or ()), *(fp.get("verb_forms") or ())])
    parts = [] if plain == "(?!)" else [plain]
    for group in merge_contexts(fp.get("contexts") or ()):
        src = context_source(group)
        if src != "(?!)":
            parts.append(src)
    entries = "(?:" + "|".join(parts) + ")" if parts else "(?!)"
    return entries, words_source(list(fp.get("exceptions") or ()))


class _State(Protocol):
    def first_person_patterns(
        self,
    ) -> tuple[regex.Pattern[str] | None, regex.Pattern[str] | None]: ...


def find(
    states: Mapping[str, _State], codes: Sequence[str], text: str, timeout: float
) -> FirstPersonHit | None:
    """The earliest first-person word of ``text`` in the lexicons of ``codes``.

    Matching runs on the plain normalised text and maps offsets only for a hit: the
    sentence gate calls this once per sentence, and almost every sentence has no hit.
    A scan that times out is reported as a hit with an empty word (fail closed).
    """
    flat = normalise(text)
    first: tuple[int, int, str] | None = None  # (start, end, locale) in ``flat``
    try:
        for code in codes:
            fp, fx = states[code].first_person_patterns()
            if fp is None:
                continue
            blocked: list[tuple[int, int]] = []
            if fx is not None:
                blocked = [m.span() for m in fx.finditer(flat, overlapped=True, timeout=timeout)]
            for m in fp.finditer(flat, overlapped=True, timeout=timeout):
                s, e = m.span()
                if any(bs <= s and e <= be for bs, be in blocked):
                    continue
                if first is None or s < first[0]:
                    first = (s, e, code)
                break
    except TimeoutError:
        log.warning("guardlex: first-person scan timed out; reported as a hit (fail closed)")
        return FirstPersonHit(word="", locale=codes[0] if codes else "", span=(0, 0))
    if first is None:
        return None
    span = normalise_with_offsets(text).source_span(first[0], first[1])
    return FirstPersonHit(word=text[span[0] : span[1]], locale=first[2], span=span)


def locales_for(
    text: str, detected: str, infos: Mapping[str, Any], order: Sequence[str]
) -> list[str]:
    """The lexicons to check when the caller gives no locale.

    The detected language, plus every locale that is the only loaded one writing a
    script present in ``text`` (a Russian word in an English sentence is still checked
    as Russian). Words like Persian من and Arabic من ("from") collide after
    normalisation, so checking every lexicon on every text would flag ordinary text.
    """
    owners: dict[str, list[str]] = {}
    for code in order:
        info = infos.get(code)
        for script in getattr(info, "scripts", ()) or ():
            owners.setdefault(script, []).append(code)
    codes = [detected]
    for locs in owners.values():
        code = locs[0]
        if len(locs) == 1 and code not in codes and infos[code].writes(text):
            codes.append(code)
    return [c for c in codes if c in order]
