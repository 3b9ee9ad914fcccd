"""First-person detection: does a text speak as "I" or "we"?

A locale's ``first_person.yaml`` (and the ``first_person.generated.yaml`` a tool in
``tools/`` writes beside it, merged by the loader) gives:

* ``pronouns`` and ``verb_forms``: words that are first person wherever they stand
  (whole words; Han entries need no boundary);
* ``contexts``: words that are first person only in some company, each group with
  ``not_after`` (the group does not count right after one of these words: Spanish
  "el trabajo" is a noun, "trabajo en Madrid" is "I work"), ``after`` (counts only right
  after one of these: Portuguese "-nos" after a hyphen is "us", "nos" alone is "in the")
  and ``not_before``; ``after: ["^"]`` is the start of the text or of a clause (after a
  punctuation mark). Groups with the same ``id`` are merged, so a generated file adds
  words to a group whose conditions are written by hand;
* ``proclitics``: particles written joined to the next word (Arabic و "and", ف, ل, ب):
  a token that is one of them plus an entry counts as the entry (وأنا "and I");
* ``as_written``: entries that count only when the text spells them exactly so, accents
  kept (normalisation strips them): Spanish "trabajo" (I work) but not "trabajó" (she
  worked), "trabajé" (I worked) but not "trabaje" (that she work);
* ``exceptions``: spans in which no entry counts (Chinese 自我, English "the US");
* ``quotes``: [opening, closing] quotation marks: a word inside a closed quotation is
  quoted speech or a title (“Why I Left”, «Рыба моей мечты»), not the writer speaking,
  and does not count.

Plain entries and context groups are word tables looked up token by token (the cost does
not grow with the thousands of generated forms); the few other entries (Han, elisions)
are one regex per locale (``first_person_sources``). Without a locale, the text's
language is identified (``guardlex.langid``) and every locale that is the only one
writing a script present in the text is checked too.
"""

from __future__ import annotations

import functools
import itertools
import logging
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import regex

from guardlex.rules._text import normalise, normalise_with_offsets

log = logging.getLogger("guardlex.rules")

CONTEXT_KEYS = ("not_after", "after", "not_before")
#: what may stand between the words of one entry: a space ("ما را") or a hyphen ("dar-me")
JOINERS = (" ", "-")


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


_TOKEN = regex.compile(r"\w+")


def _literal(word: str) -> str:
    from guardlex.rules.compile import normalise_literal

    return normalise_literal(word).strip(" ")


@functools.lru_cache(maxsize=65536)
def _is_plain(lit: str) -> bool:
    """Words of word characters joined by one space or hyphen (matched by token lookup)."""
    from guardlex.rules._text import is_han, is_word_char

    if not lit or "\u200c" in lit or not (is_word_char(lit[0]) and is_word_char(lit[-1])):
        return False
    if any(a in JOINERS and b in JOINERS for a, b in itertools.pairwise(lit)):
        return False
    chars = set(lit)  # each distinct character once (the words share a small alphabet)
    if chars <= _PLAIN_CHARS:
        return True
    for ch in chars - _PLAIN_CHARS:
        if not (ch in JOINERS or (is_word_char(ch) and not is_han(ch))):
            return False
        _PLAIN_CHARS.add(ch)
    return True


#: characters already found to be joiners or non-Han word characters (``_is_plain``)
_PLAIN_CHARS: set[str] = set()


def _split(words: Iterable[str]) -> tuple[list[str], list[str]]:
    """(plain normalised entries, the others as written)."""
    plain, other = [], []
    for w in words:
        lit = _literal(w)
        if _is_plain(lit):
            plain.append(lit)
        elif lit:
            other.append(w)
    return plain, other


def _spelling(word: str) -> str:
    """How a word is compared for ``as_written``: case-folded and NFC, accents kept."""
    return unicodedata.normalize("NFC", word).casefold()


def _spellings(words: Iterable[str]) -> dict[str, list[str]]:
    """normalised entry -> the spellings under which it counts."""
    out: dict[str, set[str]] = {}
    for w in words:
        lit = _literal(w)
        if lit:
            out.setdefault(lit, set()).add(_spelling(w))
    return {k: sorted(v) for k, v in sorted(out.items())}


def first_person_sources(fp: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Compile a merged ``first_person`` mapping: (regex, exceptions regex, word tables).

    Plain entries (word characters and single spaces: the bulk, thousands of generated
    verb forms) are looked up token by token in a set, which costs the same for ten or
    ten thousand entries; the regex holds only the others (Han entries, elisions such as
    "j'", entries with a ZWNJ). Context groups are word tables too.
    """
    from guardlex.rules.engine import words_source

    plain, other = _split([*(fp.get("pronouns") or ()), *(fp.get("verb_forms") or ())])
    contexts = []
    for group in merge_contexts(fp.get("contexts") or ()):
        words, _rest = _split(group.get("words") or ())
        if not words:
            continue
        entry: dict[str, Any] = {"id": group["id"], "words": sorted(set(words))}
        # the words as the group writes them: pt "nos" (clitic) is not held to the
        # spelling "nós" that as_written gives the pronoun
        entry["spelled"] = sorted({_spelling(w) for w in group.get("words") or ()})
        for key in CONTEXT_KEYS:
            lits = [_literal(w) for w in group.get(key) or ()]
            entry[key] = sorted({w for w in lits if w and _is_plain(w)})
            entry[key + "_marks"] = sorted({w for w in lits if w and not _is_plain(w)})
        contexts.append(entry)
    every = [*plain, *(w for c in contexts for w in c["words"])]
    tables = {
        "as_written": _spellings(fp.get("as_written") or ()),
        "quotes": sorted(
            {(_literal(a), _literal(b)) for a, b in (tuple(q) for q in fp.get("quotes") or ())}
        ),
        "proclitics": sorted({_literal(p) for p in fp.get("proclitics") or ()} - {""}),
        "pronouns": sorted({w for w in (_literal(x) for x in fp.get("pronouns") or ()) if w}),
        "words": sorted(set(plain)),
        "max_words": max((len(_TOKEN.findall(w)) for w in every), default=0),
        "contexts": contexts,
    }
    return words_source(other), words_source(list(fp.get("exceptions") or ())), tables


class _Matcher:
    """The word tables of one locale, ready for lookups."""

    def __init__(self, tables: Mapping[str, Any]) -> None:
        self.words = frozenset(tables.get("words") or ())
        self.max_words = int(tables.get("max_words") or 0)
        self.exceptions: regex.Pattern[str] | None = None
        self.as_written = {k: frozenset(v) for k, v in (tables.get("as_written") or {}).items()}
        self.proclitics = tuple(tables.get("proclitics") or ())
        self.quotes = tuple((a, b) for a, b in tables.get("quotes") or () if a and b)
        self.quote_marks = frozenset(ch for pair in self.quotes for m in pair for ch in m)
        #: entries a particle may join when shorter than 4 letters (pronouns: وأنا);
        #: لاري "Larry" is not ل + أرى "I see"
        self.short_joinable = frozenset(tables.get("pronouns") or ())
        heads = [*self.words, *(w for c in tables.get("contexts") or () for w in c["words"])]
        #: first tokens of every entry: a text without one of them cannot match
        self.heads = frozenset(_TOKEN.match(w).group() for w in heads)
        self.groups = [
            (
                frozenset(c["words"]),
                frozenset(c.get("not_after") or ()),
                tuple(c.get("not_after_marks") or ()),
                frozenset(c.get("after") or ()),
                tuple(c.get("after_marks") or ()),
                frozenset(c.get("not_before") or ()),
                tuple(c.get("not_before_marks") or ()),
                frozenset(c.get("spelled") or ()),
            )
            for c in tables.get("contexts") or ()
        ]

    def first(
        self,
        flat: str,
        spans: list[tuple[int, int]],
        written: Callable[[tuple[int, int], frozenset[str]], bool],
    ) -> Iterable[tuple[int, int]]:
        """Spans of entries in ``flat`` (tokens ``spans``), in order of start.

        ``written(span, also)`` tells whether the text spells an ``as_written`` entry as
        listed (or as one of ``also``, the spellings a context group gives the word)."""
        n = len(spans)
        heads = self.heads
        for i in range(n):
            start = spans[i][0]
            token = flat[start : spans[i][1]]
            if token not in heads:
                # a joined particle before the word: Arabic وأنا "and I", لأنني
                for p in self.proclitics:
                    rest = token[len(p) :]
                    if token.startswith(p) and rest in heads and self._joinable(rest):
                        start += len(p)
                        break
                else:
                    continue
            found = None
            j = i
            while j < n and j - i < self.max_words:
                if j > i and flat[spans[j - 1][1] : spans[j][0]] not in JOINERS:
                    break
                cand = flat[start : spans[j][1]]
                span = (start, spans[j][1])
                if (cand in self.words and written(span, frozenset())) or any(
                    cand in g[0] and self._context_ok(g, flat, spans, i, j) and written(span, g[7])
                    for g in self.groups
                ):
                    found = span  # the longest entry starting here
                j += 1
            if found is not None:
                yield found

    def _joinable(self, rest: str) -> bool:
        return len(rest) >= 4 or rest in self.short_joinable

    @staticmethod
    def _context_ok(
        group: tuple[Any, ...], flat: str, spans: list[tuple[int, int]], i: int, j: int
    ) -> bool:
        _w, not_after, na_marks, after, a_marks, not_before, nb_marks, _spelled = group
        prev = flat[spans[i - 1][0] : spans[i - 1][1]] if i > 0 else None
        gap_before = flat[spans[i - 1][1] : spans[i][0]] if i > 0 else flat[: spans[i][0]]
        if prev is not None and len(gap_before) <= 2 and prev in not_after:
            return False
        if any(m in gap_before[-3:] for m in na_marks):
            return False
        if after or a_marks:
            tight = gap_before in ("", " ")
            ok = prev is not None and tight and prev in after
            ok = ok or any(m != "^" and gap_before.rstrip(" ").endswith(m) for m in a_marks)
            # "^": at the start of the text or of a clause (after a punctuation mark)
            ok = ok or ("^" in a_marks and (prev is None or gap_before.strip(" ") != ""))
            if not ok:
                return False
        if j + 1 < len(spans):
            gap_after = flat[spans[j][1] : spans[j + 1][0]]
            nxt = flat[spans[j + 1][0] : spans[j + 1][1]]
            if len(gap_after) <= 2 and nxt in not_before:
                return False
            if any(m in gap_after[:3] for m in nb_marks):
                return False
        return True


class _State(Protocol):
    first_person_words: Mapping[str, Any]

    def first_person_patterns(
        self,
    ) -> tuple[regex.Pattern[str] | None, regex.Pattern[str] | None]: ...


def quoted_spans(flat: str, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """Spans of closed quotations in ``flat``: from an opening mark to the first closing
    mark of its pair after it. An unclosed quotation hides nothing."""
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        best: tuple[int, int] | None = None  # (start, end) of the earliest closed pair
        for open_, close in pairs:
            i = flat.find(open_, pos)
            if i < 0 or (best is not None and i >= best[0]):
                continue
            j = flat.find(close, i + len(open_))
            if j >= 0:
                best = (i, j + len(close))
        if best is None:
            return out
        out.append(best)
        pos = best[1]


def _written_ok(
    matcher: _Matcher,
    flat: str,
    text: str,
    offsets: list[Any],
    span: tuple[int, int],
    also: frozenset[str] = frozenset(),
) -> bool:
    """False when the entry must be written exactly and ``text`` spells it otherwise."""
    accepted = matcher.as_written.get(flat[span[0] : span[1]])
    if accepted is None:
        return True
    accepted = accepted | also
    if not offsets:
        offsets.append(normalise_with_offsets(text))
    s, e = offsets[0].source_span(span[0], span[1])
    return _spelling(text[s:e]) in accepted


def _any_joined(tokens: set[str], matcher: _Matcher) -> bool:
    heads = matcher.heads
    return any(
        t.startswith(p) and t[len(p) :] in heads and matcher._joinable(t[len(p) :])
        for t in tokens
        for p in matcher.proclitics
    )


def _matcher(state: _State) -> _Matcher:
    m = state.__dict__.get("_fp_matcher")
    if m is None:
        m = _Matcher(state.first_person_words)
        # the state compiles its exceptions only with a non-empty entry regex; the
        # token tables need them too
        source = str(getattr(state, "exception_source", "(?!)"))
        m.exceptions = None if source == "(?!)" else regex.compile(source)
        state.__dict__["_fp_matcher"] = m
    return m


def find(
    states: Mapping[str, _State],
    codes: Sequence[str],
    text: str,
    timeout: float,
    *,
    locate: bool = True,
) -> FirstPersonHit | None:
    """The earliest first-person word of ``text`` in the lexicons of ``codes``.

    Matching runs on the plain normalised text and maps offsets only for a hit: the
    sentence gate calls this once per sentence, and almost every sentence has no hit.
    A scan that times out is reported as a hit with an empty word (fail closed). With
    ``locate=False`` a hit has an empty word and span (no offset mapping).
    """
    flat = normalise(text)
    spans: list[tuple[int, int]] | None = None
    tokens: set[str] | None = None
    offsets: list[Any] = []  # the offset map of ``text``, made on the first need
    first: tuple[int, int, str] | None = None  # (start, end, locale) in ``flat``
    try:
        for code in codes:
            state = states[code]
            fp, fx = state.first_person_patterns()
            found: list[tuple[int, int]] = []
            matcher = _matcher(state)
            if matcher.words or matcher.groups:
                if tokens is None:
                    tokens = set(_TOKEN.findall(flat, timeout=timeout))
                if not matcher.heads.isdisjoint(tokens) or (
                    matcher.proclitics and _any_joined(tokens, matcher)
                ):
                    if spans is None:
                        spans = [m.span() for m in _TOKEN.finditer(flat, timeout=timeout)]
                    written = functools.partial(_written_ok, matcher, flat, text, offsets)
                    found.extend(matcher.first(flat, spans, written))
            if fp is not None:
                found.extend(m.span() for m in fp.finditer(flat, overlapped=True, timeout=timeout))
            if not found:
                continue
            blocked: list[tuple[int, int]] = []
            fx = fx if fx is not None else matcher.exceptions
            if fx is not None:
                blocked = [m.span() for m in fx.finditer(flat, overlapped=True, timeout=timeout)]
            if matcher.quotes and not matcher.quote_marks.isdisjoint(flat):
                blocked.extend(quoted_spans(flat, matcher.quotes))
            for s, e in sorted(found):
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
    if not locate:  # the caller only asks whether there is one
        return FirstPersonHit(word="", locale=first[2], span=(0, 0))
    span = normalise_with_offsets(text).source_span(first[0], first[1])
    return FirstPersonHit(word=text[span[0] : span[1]], locale=first[2], span=span)


def _writes(text: str, infos: Mapping[str, Any], order: Sequence[str]) -> dict[str, int]:
    """Letters of ``text`` in each locale's scripts, one regex per distinct script set."""
    by_scripts: dict[tuple[str, ...], int] = {}
    out = {}
    for code in order:
        info = infos[code]
        key = tuple(getattr(info, "scripts", ()) or ())
        if key not in by_scripts:
            by_scripts[key] = info.writes(text) if key else 0
        out[code] = by_scripts[key]
    return out


def locales_for(
    text: str,
    detected: str,
    infos: Mapping[str, Any],
    order: Sequence[str],
    written: Mapping[str, int] | None = None,
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
    written = written if written is not None else _writes(text, infos, order)
    codes = [detected]
    for locs in owners.values():
        code = locs[0]
        if len(locs) == 1 and code not in codes and written[code]:
            codes.append(code)
    return [c for c in codes if c in order]


def find_auto(
    states: Mapping[str, _State],
    text: str,
    infos: Mapping[str, Any],
    order: Sequence[str],
    detect: Callable[[str], str],
    default: str,
    timeout: float,
) -> FirstPersonHit | None:
    """``find`` without a given locale: the lexicons of ``locales_for`` the detected language.

    Language identification costs more than a lexicon scan, and almost no sentence the
    gate checks is first person; so the lexicons of every locale whose script occurs in
    the text (a superset of what ``locales_for`` can choose) are scanned first, and only
    when one of them hits is the language identified. Same result, less work.
    """
    written = _writes(text, infos, order)
    superset = [c for c in order if c == default or written[c]]
    if find(states, superset, text, timeout, locate=False) is None:
        return None
    codes = locales_for(text, detect(text), infos, order, written)
    return find(states, codes, text, timeout)
