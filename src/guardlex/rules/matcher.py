"""One matching pass over a question, and rules evaluated from its occurrences (docs/packs.md).

``Matcher`` is built once from the compiled programs of every loaded locale
(``guardlex.rules.compiler``) and the configured subject names. For each question:

1. one automaton pass (Aho-Corasick from ``ahocorasick-rs`` when installed, otherwise
   set look-ups of the substrings that could be strings, which report the same
   occurrences) finds every literal of every
   form of every rule and concept of every locale, every stem, every subject pronoun
   and name, and every anchor of the escape-hatch regexes;
2. whole-word checks turn raw hits into occurrences: ``(start, end)`` per element;
3. a rule is a candidate only when the key element of one of its forms occurred; its
   forms are then checked against the occurrence tables (a few dictionary look-ups per
   element), frames from the occurrences of their items, and escape-hatch regexes only
   when one of their anchors occurred, each with a timeout (``TimeoutError`` propagates:
   the engine fails closed).

Subject names are occurrences like any other, found by the same pass: 100 names add 100
strings to the automaton, not 100 alternatives to every rule. For the escape-hatch
regexes, each name occurrence is replaced in a copy of the text by a marker letter of the
same length, and ``{subject}`` compiles to the marker (plus the locale's pronouns), so
their cost does not depend on the names either.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import regex

from guardlex.rules._text import is_han, is_word_char, normalise
from guardlex.rules.builtins import NONE, Builtins, span_words
from guardlex.rules.cache import unpack_text
from guardlex.rules.compile import subject_words
from guardlex.rules.template import HEAD

#: Seconds one escape-hatch regex may take on one question before it is abandoned.
REGEX_TIMEOUT = 0.5

#: Marker letters standing for a subject name in the text the escape-hatch regexes see:
#: a name with word boundaries and a possible Latin possessive; one with boundaries only;
#: one next to Han text (no boundaries). Letters (``\w``), so ``\m`` and ``\M`` work.
MARK_LATIN, MARK_WORD, MARK_HAN = "\u16a0", "\u16a2", "\u16a6"
_MARKS = MARK_LATIN + MARK_WORD + MARK_HAN
_POSSESSIVE = ("'s", "’s", "s", "'", "’")
#: a number: digits with their decimal or thousands marks ("3,000", "2.5"); with a
#: percent sign after it, the number with the sign occurs too ("18%" before "GST")
_DIGIT = regex.compile(r"\d+(?:[.,]\d+)*")
_PERCENT = regex.compile(r"[ \u00a0]?[%٪]")
#: pseudo form indexes: a rule's frame; its escape-hatch regex k is ``HATCH - k``
FRAME, HATCH = -1, -2
#: Marks a stem among the keys of a concept (``Matcher.concept_keys``): no word has it.
STEM_KEY = "\x00"

Span = tuple[int, int]


@dataclass
class Rule:
    """A rule ready for evaluation (the compiled program of one pack rule).

    A rule of a stored program (``guardlex.rules.cache.packed``) keeps its forms and
    frame as one JSON text (``packed``) until they are first read: most rules are never
    a candidate for the first questions of a process.
    """

    id: str
    locale: str
    section: str  # "refusal" | "overview"
    category: str | None
    topic: str | None
    about: str
    priority: int
    _forms: list[list[Any]]
    hatch: list[dict[str, Any]]  # escape-hatch regexes: source and anchors
    _frame: dict[str, Any] | None
    reads_pasted: bool = False
    order: int = 0
    _patterns: list[regex.Pattern[str] | None] = field(default_factory=list, repr=False)
    packed: str | bytes | None = field(default=None, repr=False)

    @property
    def forms(self) -> list[list[Any]]:
        if self.packed is not None:
            self._unpack()
        return self._forms

    @property
    def frame(self) -> dict[str, Any] | None:
        if self.packed is not None:
            self._unpack()
        return self._frame

    def _unpack(self) -> None:
        with _UNPACK:  # one decoding per rule: forms are identified by id while matching
            raw = self.packed
            if raw is not None:  # ``cache.unpack_text``
                self._forms, self._frame = unpack_text(raw)
                self.packed = None


_UNPACK = threading.Lock()


@dataclass(frozen=True)
class Hit:
    """A rule that matched: where, and the items that made it match."""

    rule: Rule
    span: Span
    evidence: tuple[tuple[str, Span], ...]  # (concept name | "template" | "subject", span)


class _Occurrences:
    """What the pass found in one question, with lazily built look-up tables."""

    def __init__(
        self, m: Matcher, text: str, builtins: Builtins | Callable[[], Builtins] = NONE
    ) -> None:
        self.m = m
        self.text = text
        self._builtins = builtins
        self.n = len(text)
        self.words: dict[str, list[Span]] = {}
        self.stems: dict[str, list[Span]] = {}
        self.procl: dict[str, list[tuple[int, int, str]]] = {}
        self.pron: dict[str, list[Span]] = {}
        self.names: list[tuple[int, int, str]] = []  # (start, end, mark)
        self.anchors: set[str] = set()
        self._by_start: dict[tuple[str, ...], dict[int, list[int]]] = {}
        self._concepts: dict[tuple[str, str], list[Span]] = {}
        self._subject: dict[str, list[Span]] = {}
        self._marked: str | None = None
        self._in_progress: set[tuple[str, str]] = set()
        self._present: frozenset[str] | None = None
        self._candidates: dict[str, list[tuple[Rule, set[int]]]] = {}
        self._guarded: dict[tuple[str, str | None, bool], bool] = {}
        self._items: dict[tuple[str, str], list[Span]] = {}  # frame items (Matcher._frame)

    @property
    def present(self) -> frozenset[str]:
        """Every literal that occurred as a whole word or after a proclitic, and every
        stem that occurred (as ``STEM_KEY + stem``): the keys of ``Matcher.concept_keys``."""
        got = self._present
        if got is None:
            got = self._present = frozenset(
                [*self.words, *self.procl, *(STEM_KEY + t for t in self.stems)]
            )
        return got

    @property
    def builtins(self) -> Builtins:
        """The built-in occurrences, found on first use (most questions never need them)."""
        b = self._builtins
        if not isinstance(b, Builtins):
            b = self._builtins = b()
        return b

    # -- element occurrences --------------------------------------------------------
    def subject(self, locale: str) -> list[Span]:
        got = self._subject.get(locale)
        if got is None:
            got = list(self.pron.get(locale, ()))
            text = self.text
            info = self.m.titles.get(locale, ((), ()))
            for s, e, mark in self.names:
                ends = [e]
                if mark == MARK_LATIN:
                    for p in _POSSESSIVE:
                        if text.startswith(p, e) and not _word_at(text, e + len(p)):
                            ends.append(e + len(p))
                for t in info[1]:  # titles after the name (达娜博士)
                    for sep in ("", " "):
                        if text.startswith(sep + t, e):
                            ends.append(e + len(sep) + len(t))
                starts = [s]
                for t in info[0]:  # titles before the name (dr reyes, dr. reyes)
                    for sep in (" ", ". "):
                        b = s - len(sep) - len(t)
                        if b >= 0 and text.startswith(t + sep, b) and not _word_at(text, b - 1):
                            starts.append(b)
                got.extend((a, b) for a in starts for b in ends)
            self._subject[locale] = got
        return got

    def concept(self, locale: str, name: str) -> list[Span]:
        key = (locale, name)
        got = self._concepts.get(key)
        if got is not None:
            return got
        keys = self.m.concept_keys(locale, name)
        if keys is not None and keys.isdisjoint(self.present):
            # none of the words its forms need occurred: it cannot occur (and its forms
            # are not even decoded)
            got = self._concepts[key] = []
            return got
        if key in self._in_progress:  # cycles are rejected at load; belt and braces
            return []
        self._in_progress.add(key)
        spans: set[Span] = set()
        by_word, rest = self.m.concept_index(locale, name)
        forms: list[Any] = list(rest)
        hit = self.present & by_word.keys()  # set intersection: the smaller side
        for word in hit:
            forms.extend(by_word[word])
        if len(hit) > 1:  # a form filed under several spellings: evaluate it once
            forms = list({id(f): f for f in forms}.values())
        for form in forms:
            spans.update(self.form_spans(form, locale, first_only=False))
        self._in_progress.discard(key)
        got = self._concepts[key] = sorted(spans)
        return got

    def numbers(self) -> list[Span]:
        got = self._concepts.get(("", "number"))
        if got is None:
            got = []
            for m in _DIGIT.finditer(self.text, timeout=self.m.timeout()):
                got.append(m.span())
                sign = _PERCENT.match(self.text, m.end())
                if sign is not None:
                    got.append((m.start(), sign.end()))
            self._concepts[("", "number")] = got
        return got

    def spans_of(self, el: list[str], locale: str) -> list[Span]:
        kind = el[0]
        if kind == "w":
            return self.words.get(el[1], [])
        if kind == "a":
            got: list[Span] = []
            for sp in el[1:]:
                got.extend(self.words.get(sp, ()))
            return got
        if kind == "s":
            return self.subject(locale)
        if kind == "c":
            return self.concept(locale, el[1])
        if kind == "t":
            return self.stems.get(el[1], [])
        if kind == "n":
            return self.numbers()
        if kind == "b":
            return self.builtin(el[1], locale)
        return []

    def pasted(self) -> list[Span]:
        """Pasted passages: the built-in shapes, and the text after an inline colon whose
        lead holds a term of some locale's own ``pasted`` concept ("Summarise this
        text: …"; ``guardlex.rules.builtins``)."""
        got = self._concepts.get(("", "<pasted>"))
        if got is None:
            b = self.builtins
            spans = set(b.pasted)
            for (ls, le), rest in b.colons:
                for code, concepts in self.m.concepts.items():
                    if "pasted" in concepts and any(
                        ls <= s and e <= le for s, e in self.concept(code, "pasted")
                    ):
                        spans.add(rest)
                        break
            got = self._concepts[("", "<pasted>")] = sorted(spans)
        return got

    def inside_pasted(self, span: Span) -> bool:
        """True when ``span`` lies wholly inside one pasted passage."""
        s, e = span
        return any(a <= s and e <= b for a, b in self.pasted())

    def builtin(self, name: str, locale: str) -> list[Span]:
        """Spans of the built-in ``<name>``, ``<code>`` or ``<pasted>`` (``builtins``),
        with the terms of a concept of the same name when the locale defines one."""
        key = (locale, f"<{name}>")
        got = self._concepts.get(key)
        if got is None:
            b = self.builtins
            if name == "name":
                least = self.m.name_min_words.get(locale, 1)
                subject = [(s, e) for s, e, _ in self.names]
                known = self.m._keys
                got = [
                    (s, e)
                    for s, e, n in b.names
                    if n >= least
                    and not any(s < e2 and s2 < e for s2, e2 in subject)
                    and not all(w in known for w in self.text[s:e].split())
                ]
            else:
                got = self.pasted() if name == "pasted" else list(getattr(b, name))
            if name in self.m.concepts.get(locale, {}):  # the locale adds terms of its own
                got = sorted({*got, *self.concept(locale, name)})
            self._concepts[key] = got
        return got

    def by_start(self, el: list[str], locale: str) -> dict[int, list[int]]:
        if el[0] == "a":
            key: tuple[Any, ...] = ("a", id(el))  # the element lives as long as the matcher
        elif el[0] in ("s", "c", "b"):
            key = (*el, locale)
        else:
            key = tuple(el)
        table = self._by_start.get(key)
        if table is None:
            table = {}
            for s, e in self.spans_of(el, locale):
                table.setdefault(s, []).append(e)
            self._by_start[key] = table
        return table

    def _with_proclitics(
        self, el: list[str], locale: str, table: dict[int, list[int]]
    ) -> dict[int, list[int]]:
        """``table`` plus the occurrences of ``el``'s literals after one of ``locale``'s
        proclitics (the start is the proclitic's)."""
        key: tuple[Any, ...] = ("p", id(el), locale)
        got = self._by_start.get(key)
        if got is None:
            pcs = self.m.proclitics.get(locale, ())
            extra = [
                (s, e)
                for lit in (el[1:] if el[0] == "a" else el[1:2])
                for s, e, pc in self.procl.get(lit, ())
                if pc in pcs
            ]
            if extra:
                got = {k: list(v) for k, v in table.items()}
                for s, e in extra:
                    got.setdefault(s, []).append(e)
            else:
                got = table
            self._by_start[key] = got
        return got

    # -- forms ----------------------------------------------------------------------
    def form_spans(self, form: list[Any], locale: str, first_only: bool = True) -> list[Span]:
        """Spans where ``form`` matches (the leftmost only, with ``first_only``)."""
        text, n = self.text, self.n
        first = form[0]
        states: set[Span]
        if first[0] == "^":
            p = 0
            while p < n and not is_word_char(text[p]):
                p += 1
            states = {(p, p)}
        else:
            states = set(self.spans_of(first, locale))
            if first[0] in ("w", "a") and self.procl:
                for lit in first[1:] if first[0] == "a" else first[1:2]:
                    for s, e, pc in self.procl.get(lit, ()):
                        if pc in self.m.proclitics.get(locale, ()):
                            states.add((s, e))
        i = 1
        while states and i < len(form):
            sep, el = form[i], form[i + 1]
            i += 2
            if el[0] == "$":
                states = {st for st in states if _end_ok(text, st[1], sep)}
                continue
            if el[0] == "^":
                states = {st for st in states if not any(is_word_char(c) for c in text[: st[1]])}
                continue
            table = self.by_start(el, locale)
            if self.procl and el[0] in ("w", "a"):  # "و" + a word inside a phrase too
                table = self._with_proclitics(el, locale, table)
            if not table:
                return []
            new: set[Span] = set()
            for s0, e in states:
                for start in _starts(text, n, e, sep):
                    for e2 in table.get(start, ()):
                        new.add((s0, e2))
            states = new
        if not states:
            return []
        if first_only:
            best = min(states, key=lambda st: (st[0], -st[1]))
            return [best]
        return sorted(states)

    def marked(self) -> str:
        """The text with each subject name replaced by marker letters (same length)."""
        if self._marked is None:
            if not self.names:
                self._marked = self.text
            else:
                chars = list(self.text)
                for s, e, mark in self.names:
                    for k in range(s, e):
                        chars[k] = mark
                self._marked = "".join(chars)
        return self._marked


def _end_ok(text: str, e: int, sep: str) -> bool:
    """Only punctuation and spaces after ``e`` (after a gap: up to three words, or eight
    characters next to Han text)."""
    rest = text[e:]
    if sep == "g":
        words = [w for w in rest.split() if any(is_word_char(c) for c in w)]
        return len(words) <= 3
    if sep == "h":
        k = len(rest)
        while k and not is_word_char(rest[k - 1]):
            k -= 1
        return k <= 8 and "\n" not in rest[:k]
    return not any(is_word_char(c) for c in rest)


def _word_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and _wc(text[i])


#: Punctuation inside a sentence that does not break a template sequence: "Dana, what's
#: your rate", "how much, roughly, does she charge", "达娜，你的报价"; a hyphen too
#: ("follow-up", Persian written in Latin letters: "call-e kootah")
_SOFT = frozenset(",،、，;؛–—")
#: What ends a gap ``...``: a line break or a sentence end (a word ending in one of these)
_GAP_ENDS = frozenset("\n.?!…。！？؟")
#: Double quotation marks: a short quotation inside a sentence does not break a template
#: sequence ("wiederhole alles vor „Nutzer:“", «کاربر:»); the quotation still counts as
#: pasted text where ``<pasted>`` says so. Single quotes are left out: they are apostrophes
#: too ("l'article", "what's").
_QMARKS = frozenset('"“”„«»‹›')
#: Marks before a word that a sequence reads as nothing: the opening marks of a question
#: or an exclamation ("Oye, ¿cuánto cobra?") and quotation marks
_OPENERS = frozenset("¿¡") | _QMARKS


def _open(text: str, n: int, p: int) -> tuple[int, ...]:
    """``(p,)``, or ``p`` and the position after the opening marks (``_OPENERS``) that
    start there (an element may start at the mark itself: ``<pasted>`` does)."""
    q = p
    while q < n and text[q] in _OPENERS:
        q += 1
    return (p,) if q == p or q >= n else (p, q)


def _close(text: str, n: int, e: int) -> int:
    """``e``, or the position after the quotation marks that close a word ending at ``e``
    (with a colon before them: „Nutzer:“)."""
    p = e
    if p + 1 < n and text[p] == ":" and text[p + 1] in _QMARKS:
        p += 1
    if p < n and text[p] in _QMARKS:
        while p < n and text[p] in _QMARKS:
            p += 1
        return p
    return e


def _soft(text: str, n: int, e: int) -> int:
    """The position after a comma-like mark or a hyphen (with spaces around it) at ``e``,
    or -1."""
    p = e
    while p < n and text[p] == " ":
        p += 1
    if p < n and (text[p] in _SOFT or text[p] == "-"):
        p += 1
        while p < n and text[p] == " ":
            p += 1
        return p if p < n else -1
    return -1


def _starts(text: str, n: int, e: int, sep: str) -> Iterable[int]:
    """Where the next element may start after an element ending at ``e``: a comma-like
    mark between them counts as a space (``_SOFT``), and so do the quotation marks around a
    word (``_close``, ``_open``)."""
    if e < n and (text[e] in _QMARKS or text[e] == ":") and sep in (" ", "?", "g"):
        e = _close(text, n, e)
    if sep == " ":
        p = _soft(text, n, e)
        if p >= 0:
            return _open(text, n, p)
        if e < n and text[e] == " ":
            return _open(text, n, e + 1)
        # Chinese writes no spaces: between two Han characters the space is optional
        # (two concepts side by side, "<price_bare> <price_tail>" in "费用呢")
        return (e,) if 0 < e < n and is_han(text[e - 1]) and is_han(text[e]) else ()
    if sep == "?":
        p = _soft(text, n, e)
        if p >= 0:
            return (e, *_open(text, n, p)) if e < n and text[e] == " " else _open(text, n, p)
        return (e, *_open(text, n, e + 1)) if e < n and text[e] == " " else (e,)
    if sep == "":
        return (e,)
    if sep == "h":  # up to eight characters on one line, in one sentence
        out = []
        for k in range(9):
            if e + k > n or (k and text[e + k - 1] in _GAP_ENDS):
                break
            out.append(e + k)
        return out
    # "g": " " then up to three words each followed by " "
    if 0 < e < n and is_han(text[e - 1]) and is_han(text[e]):
        # between Han characters, as "h": a concept's Han term next to Chinese text
        # ("<opine_v> ... <opine_end>" in "她认同这个吗")
        return _starts(text, n, e, "h")
    out = []
    p = e
    soft = _soft(text, n, e)
    if soft >= 0:
        p = soft - 1  # as if the mark were one space
        if text[p] != " ":
            out.extend(_open(text, n, soft))
            return out  # "x,y": one start only
    elif p >= n or text[p] != " ":
        return out
    out.extend(_open(text, n, p + 1))
    for _ in range(3):
        q = p + 1
        j = text.find(" ", q)
        if j <= q or "\n" in text[q:j] or "\t" in text[q:j] or text[j - 1] in _GAP_ENDS:
            break  # a gap never crosses a line or a sentence end ("… в новосибирске. ваша")
        out.extend(_open(text, n, j + 1))
        p = j
    return out


class Matcher:
    """Every loaded locale's programs, one automaton, and the evaluation of rules."""

    def __init__(
        self,
        locales: Sequence[Mapping[str, Any]],
        subject_names: Sequence[str] = (),
        titles: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None,
        timeout: Callable[[], float] = lambda: REGEX_TIMEOUT,
        name_min_words: Mapping[str, int] | None = None,
    ) -> None:
        self.timeout = timeout
        #: per locale: fewest capitalised words that make a ``<name>`` (locale.yaml)
        self.name_min_words = dict(name_min_words or {})
        self.rules: list[Rule] = []
        self.concepts: dict[str, dict[str, list[list[Any]]]] = {}
        self.proclitics: dict[str, tuple[str, ...]] = {}
        self.titles: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._regex_subject: dict[str, str] = {}
        # automaton strings by group (``string_group``): literal words (role ("w",
        # None)), and the roles of the others
        word_runs: dict[str, list[str]] = {}  # group -> sorted words, joined (``unjoin``)
        plain_runs: dict[str, list[str]] = {}  # the same, of plain words (``plain_shaped``)
        plain_most = 1  # the most words of a plain phrase
        others: dict[str, dict[str, dict[tuple[str, Any], None]]] = {}

        def extra(s: str, r: tuple[str, Any], group: str | None = None) -> None:
            bucket = others.setdefault(group or string_group(s), {})
            got = bucket.get(s)
            if got is None:
                bucket[s] = {r: None}
            else:
                got[r] = None

        # form references: key -> rule indexes / concept names whose forms use it
        # key -> (rule index, form index); form index FRAME / HATCH: the rule's frame or
        # escape-hatch regexes
        # (words and stems: gathered from each locale's ``refs`` on first look-up,
        # ``_word_refs``; a start files a few dozen, not every key of every form)
        self._by_word: dict[str, list[tuple[int, int]]] = {}
        self._by_stem: dict[str, list[tuple[int, int]]] = {}
        self._locale_refs: list[tuple[int, Mapping[str, list[int]], Mapping[str, list[int]]]] = []
        self._by_concept: dict[tuple[str, str], list[tuple[int, int]]] = {}
        self._by_anchor: dict[str, list[tuple[int, int]]] = {}
        self._always: list[tuple[int, int]] = []
        self._concept_index: dict[tuple[str, str], tuple[dict[str, list[Any]], list[Any]]] = {}
        self._concept_keys: dict[tuple[str, str], frozenset[str] | None] = {}
        #: (locale, category) -> keys one of which occurs wherever a guard of that
        #: locale's rules of that category occurs (``guard_keys``), or None
        self._guard_keys: dict[tuple[str, str | None], frozenset[str] | None] = {}
        self._guard_keys_of: set[str] = set()  # locales whose guard keys are known
        for loc in locales:
            code = str(loc["code"])
            self.concepts[code] = loc.get("concepts") or {}
            self.proclitics[code] = tuple(loc.get("proclitics") or ())
            t = (titles or {}).get(code, ((), ()))
            self.titles[code] = (
                tuple(_norm_title(x) for x in t[0] if _norm_title(x)),
                tuple(_norm_title(x) for x in t[1] if _norm_title(x)),
            )
            for p in loc.get("pronouns") or ():
                extra(p, ("pron", code))
            self._regex_subject[code] = str(loc.get("regex_subject") or "(?!)")
            index = loc.get("index") or program_index(loc)
            for group, joined in index["w"].items():  # split when the group is built
                word_runs.setdefault(group, []).append(joined)
            for group, joined in index["p"].items():
                plain_runs.setdefault(group, []).append(joined)
            plain_most = max(plain_most, int(index["pw"]))
            for group, joined in index["t"].items():
                for stem in unjoin(joined):
                    if stem.startswith(HEAD):  # ``*part*``: the part, anywhere in a word
                        extra(stem[len(HEAD) :], ("h", stem))
                    else:
                        extra(stem, ("t", None), group)
            for group, joined in index["a"].items():
                for anchor in unjoin(joined):
                    extra(anchor, ("a", None), group)
            for name, ck in index["concept_keys"].items():
                self._concept_keys[(code, name)] = None if ck is None else frozenset(unjoin(ck))
            stored_guards = index.get("guard_keys")
            if isinstance(stored_guards, dict):  # else computed from the frames on first use
                for cat, gk in stored_guards.items():
                    self._guard_keys[(code, cat or None)] = (
                        None if gk is None else frozenset(unjoin(gk))
                    )
                self._guard_keys_of.add(code)
            base = len(self.rules)
            refs = index.get("refs")
            if not isinstance(refs, dict):  # an index without them: from the rules' keys
                refs = locale_refs(_keys_of(raw) for raw in loc["rules"])
            self._locale_refs.append((base, refs["w"], refs["t"]))
            self._always.extend(_pairs(base, refs["x"]))
            for name, flat in refs["c"].items():
                self._by_concept.setdefault((code, name), []).extend(_pairs(base, flat))
            for written, raw in enumerate(loc["rules"]):
                idx = len(self.rules)
                packed = raw.get("packed")
                rule = Rule(
                    id=raw["id"],
                    locale=code,
                    section=raw["section"],
                    category=raw.get("category"),
                    topic=raw.get("topic"),
                    about=raw.get("about") or "",
                    priority=int(raw.get("priority") or 0),
                    _forms=raw.get("forms") or [],
                    hatch=raw.get("regex") or [],
                    _frame=raw.get("frame"),
                    reads_pasted=bool(raw.get("reads_pasted")),
                    order=written,
                    packed=packed,
                )
                rule._patterns = [None] * len(rule.hatch)
                self.rules.append(rule)
                for k, rx in enumerate(rule.hatch):
                    ref = (idx, HATCH - k)  # regex k of the rule
                    if rx.get("anchors") is None:
                        self._always.append(ref)
                    else:
                        for a in rx["anchors"]:
                            self._by_anchor.setdefault(a, []).append(ref)
        # subject names, shared by every locale
        for name_form, mark in _name_forms(subject_names):
            extra(name_form, ("name", mark))
        # The automaton is built group by group (``string_group``), each on the first
        # question that holds a character of its group (``_raw_hits``): a string can
        # only occur in a text that holds every one of its characters. Strings are
        # numbered in the order their groups are built.
        self._word_runs = word_runs
        self._plain_runs = plain_runs
        self._others = others
        self._all_keys: Mapping[str, None] | None = None
        self._strings: list[str] = []
        self._roles: list[tuple[tuple[str, Any], ...]] = []
        self._edges: list[tuple[bool, bool]] = []
        #: built: group -> (its automaton, the number of each string in it)
        self._groups: dict[str, tuple[Any, list[int]]] = {}
        #: plain words and phrases (``plain_shaped``) of the built groups, found by
        #: look-ups, not automatons: string -> its number, or None until first found
        self._plain: dict[str, int | None] = {}
        self._plain_words = plain_most
        self._group_lock = threading.Lock()
        self._group_names = frozenset([*word_runs, *plain_runs, *others])
        self._length_sets: dict[str, set[int]] = {}
        for rule in self.rules:
            for rx in rule.hatch:
                if rx.get("anchors") is not None:
                    rx["_set"] = frozenset(rx["anchors"])
        self._content: frozenset[tuple[str, str]] | None = None
        self._vocab: dict[str, frozenset[str]] = {}
        self._ac: Any = None
        self._index: dict[str, int] = {}  # without ahocorasick-rs: string -> number
        self._lengths: dict[str, tuple[int, ...]] = {}  # first character -> lengths
        self._built = False
        self._concept_order: list[tuple[str, str]] = []
        self._section_concepts: dict[
            str,
            tuple[
                list[list[tuple[int, int]]],
                dict[str, list[int]],
                list[int],
                list[tuple[int, frozenset[str]]],
            ],
        ] = {}
        #: (locale, category) -> its guard forms filed by key, and those without one
        self._guards: dict[
            tuple[str, str | None], tuple[dict[str, list[list[Any]]], list[list[Any]]]
        ] = {}
        self._item_keys: dict[tuple[str, str], frozenset[str] | None] = {}
        #: every loaded locale's proclitics, longest first (``_reread``)
        self._all_proclitics = tuple(
            sorted({p for pcs in self.proclitics.values() for p in pcs}, key=len, reverse=True)
        )

    def words(self) -> Iterator[str]:
        """The whole words of the loaded packs (automaton strings that are words, not
        stems, anchors or names): what the typo reading may read a question word as."""
        for table in (self._word_runs, self._plain_runs):
            for runs in table.values():
                for run in runs:
                    yield from unjoin(run)

    def concept_keys(self, locale: str, name: str) -> frozenset[str] | None:
        """Keys at least one of which occurs wherever the concept occurs (a word, or
        ``STEM_KEY`` + a stem: ``_Occurrences.present``), or None when that cannot be
        said (a form with only the subject, a number or a built-in)."""
        key = (locale, name)
        if key in self._concept_keys:
            return self._concept_keys[key]
        memo: dict[str, frozenset[str] | None] = {}
        result = concept_keys(self.concepts.get(locale, {}), name, memo)
        for other, got in memo.items():
            self._concept_keys.setdefault((locale, other), got)
        return result

    def content_concepts(self) -> frozenset[tuple[str, str]]:
        """(locale, concept) pairs that say what a question is about: the concepts the
        guards (``none``) of refusal rules and the overview rules use, directly or as an
        alternative of such a concept (not as one part of a sequence inside it). A
        follow-up that holds one of them has content of its own ("what about her caching
        article?"); one that holds only trigger words such as months or language names
        ("and June?", "in French?") does not."""
        got = self._content
        if got is None:
            out: set[tuple[str, str]] = set()

            def walk(code: str, forms: Iterable[list[Any]], nested: bool = False) -> None:
                for form in forms:
                    parts = form[::2]
                    if nested and len(parts) > 1:
                        # a part of a sequence ("<tax_n> ... <how_fa> <tax_do>") is no
                        # topic on its own: only the whole sequence, found as the
                        # concept that holds it, says what a question is about
                        continue
                    for el in parts:
                        if el[0] == "c" and (code, el[1]) not in out:
                            out.add((code, el[1]))
                            walk(code, self.concepts.get(code, {}).get(el[1], ()), True)

            for rule in self.rules:
                frame = rule.frame or {"all": [], "any": [], "none": []}
                if rule.section == "overview":
                    walk(rule.locale, rule.forms)
                    for item in (*frame["all"], *frame["any"]):
                        walk(rule.locale, item["forms"])
                else:
                    for item in frame["none"]:
                        walk(rule.locale, item["forms"])
            got = self._content = frozenset(out)
        return got

    def vocabulary(self, locale: str) -> frozenset[str]:
        """Every word written in ``locale``'s rules and concepts (normalised)."""
        got = self._vocab.get(locale)
        if got is None:
            words: set[str] = set()

            def add(forms: Iterable[list[Any]]) -> None:
                for form in forms:
                    for el in form[::2]:
                        if el[0] in ("w", "a"):
                            for spelling in el[1:]:
                                words.update(spelling.split())

            for forms in self.concepts.get(locale, {}).values():
                add(forms)
            for rule in self.rules:
                if rule.locale == locale:
                    add(rule.forms)
                    frame = rule.frame or {}
                    for part in ("all", "any", "none"):
                        for item in frame.get(part, ()):
                            add(item["forms"])
            got = self._vocab[locale] = frozenset(words)
        return got

    def concept_index(self, locale: str, name: str) -> tuple[dict[str, list[Any]], list[Any]]:
        """A concept's forms filed under a key that must occur for them to match (their
        longest literal word; else each spelling of their most selective alternative;
        else ``STEM_KEY`` + their longest stem), and the forms without one.

        A concept written as alternatives expands to many forms; the pass then only
        evaluates the forms whose key the question contains (``_Occurrences.present``).
        """
        key = (locale, name)
        got = self._concept_index.get(key)
        if got is None:
            by_word: dict[str, list[Any]] = {}
            rest: list[Any] = []
            for form in self.concepts.get(locale, {}).get(name, ()):
                els = form[::2]
                words = [el[1] for el in els if el[0] == "w"]
                alts = [el[1:] for el in els if el[0] == "a"]
                stems = [el[1] for el in els if el[0] == "t"]
                if words:
                    by_word.setdefault(max(words, key=len), []).append(form)
                elif alts:
                    for sp in max(alts, key=lambda a: min(len(x) for x in a)):
                        by_word.setdefault(sp, []).append(form)
                elif stems:
                    by_word.setdefault(STEM_KEY + max(stems, key=len), []).append(form)
                else:
                    rest.append(form)
            got = self._concept_index[key] = (by_word, rest)
        return got

    def _word_refs(self, word: str) -> list[tuple[int, int]]:
        """(rule index, form index) of every form filed under ``word`` (``form_key``)."""
        return self._refs(self._by_word, 1, word)

    def _stem_refs(self, stem: str) -> list[tuple[int, int]]:
        """(rule index, form index) of every form filed under ``stem``."""
        return self._refs(self._by_stem, 2, stem)

    def _refs(
        self, memo: dict[str, list[tuple[int, int]]], part: Literal[1, 2], key: str
    ) -> list[tuple[int, int]]:
        """The refs filed under ``key`` in table ``part`` (1: words, 2: stems) of every
        locale's stored index, gathered on first look-up into ``memo``."""
        got = memo.get(key)
        if got is None:
            got = []
            for refs in self._locale_refs:
                flat = refs[part].get(key)
                if flat:
                    got.extend(_pairs(refs[0], flat))
            memo[key] = got
        return got

    @property
    def _keys(self) -> Mapping[str, None]:
        """Every automaton string of every group (a dict, used for membership)."""
        got = self._all_keys
        if got is None:
            words = itertools.chain.from_iterable(
                unjoin(joined)
                for table in (self._word_runs, self._plain_runs)
                for runs in table.values()
                for joined in runs
            )
            got = dict.fromkeys(words)
            for bucket in self._others.values():
                got.update(dict.fromkeys(bucket))
            self._all_keys = got
        return got

    def word_set(self, extra: frozenset[str]) -> Collection[str]:
        """``extra`` and every automaton string of one word (no space, more than one
        character), for membership tests (``guardlex.normalise.variants``); the automaton
        strings are gathered on the first test that ``extra`` does not answer."""
        return _WordSet(self, extra)

    # -- the pass -------------------------------------------------------------------
    def _build(self) -> None:
        """Choose how the pass runs: Aho-Corasick automatons (``ahocorasick-rs``), or
        without it dictionary look-ups that find the same occurrences. The automaton of
        each group of strings is built when a text first needs it (``_build_group``)."""
        if self._built:
            return
        self._built = True
        try:
            from ahocorasick_rs import AhoCorasick
        except ImportError:
            self._ac = None
        else:
            self._ac = {}  # group -> automaton
            self._ac_class = AhoCorasick

    def build_all(self) -> None:
        """Build the automaton of every group of strings now."""
        self._build()
        with self._group_lock:
            for group in sorted(self._group_names):
                if group not in self._groups:
                    self._build_group(group)

    def _build_group(self, group: str) -> None:
        """Number the strings of ``group`` after those already built, with their roles
        and word edges, and build the group's automaton (or look-up tables). Plain words
        and phrases (``plain_shaped``, with no role but the word's) go to ``_plain``
        instead, numbered when first found (``_plain_number``): neither sorted, numbered
        nor put in an automaton at the start, for 95 % of the strings."""
        # (C-level passes over the strings: this runs once per group and process)
        runs = [unjoin(joined) for joined in self._word_runs.get(group, ())]
        others = self._others.get(group, {})
        plain_runs = [unjoin(joined) for joined in self._plain_runs.get(group, ())]
        plain: dict[str, int | None] = {}
        if self._ac is None or not LOOK_UP_PLAIN:
            runs.extend(plain_runs)
        else:
            plain = dict.fromkeys(itertools.chain.from_iterable(plain_runs))
            # a plain word that is also a stem, anchor, pronoun or name: the automaton's
            clash = [s for s in others if s in plain]
            for s in clash:
                del plain[s]
            runs.append(clash)
        unique = dict.fromkeys(itertools.chain.from_iterable(runs))  # the words
        is_word = {s: s in unique for s in others}
        unique.update(dict.fromkeys(others))
        # sorted runs, duplicates dropped: timsort merges the runs
        strings = sorted(unique)
        # each role once: a word of a thousand forms is one occurrence, not a thousand
        # (the order of a string's roles does not matter: each fills its own table)
        roles = [_WORD_ROLE] * len(strings)
        for s, got in others.items():
            roles[bisect.bisect_left(strings, s)] = (_WORD_ROLE if is_word[s] else ()) + tuple(got)
        # does a hit of the string need a word boundary on its left / right?
        firsts = list(map(operator.itemgetter(0), strings))
        lasts = list(map(operator.itemgetter(-1), strings))
        edge = {ch: _needs_boundary(ch) for ch in {*firsts, *lasts}}
        edges = list(
            map(
                _EDGE_PAIRS.__getitem__,
                zip(map(edge.__getitem__, firsts), map(edge.__getitem__, lasts), strict=True),
            )
        )
        offset = len(self._strings)
        self._strings.extend(strings)
        self._roles.extend(roles)
        self._edges.extend(edges)
        automaton = None
        numbers: list[int] = []
        if self._ac is not None:
            self._plain.update(plain)
            numbers = list(range(offset, offset + len(strings)))
            if strings:
                automaton = self._ac_class(strings)
        else:  # the same occurrences, found by dictionary look-ups
            self._index.update(zip(strings, itertools.count(offset)))
            changed = set()
            for s in strings:
                self._length_sets.setdefault(s[0], set()).add(len(s))
                changed.add(s[0])
            for ch in changed:
                self._lengths[ch] = tuple(sorted(self._length_sets[ch]))
        self._groups[group] = (automaton, numbers)

    def _plain_number(self, string: str) -> int:
        """The number of plain ``string`` (in ``_plain``), given on its first occurrence."""
        with self._group_lock:
            k = self._plain[string]
            if k is None:
                k = self._plain[string] = len(self._strings)
                self._strings.append(string)
                self._roles.append(_WORD_ROLE)
                self._edges.append(_EDGE_PAIRS[True, True])  # whole words at both ends
            return k

    def _raw_hits(self, text: str) -> Iterable[tuple[int, int, int]]:
        """(string index, start, end) of every occurrence of every automaton string, in
        the order one automaton of all strings reports them (by end, then start)."""
        self._build()
        if text.isascii():
            present: Iterable[str] = _ASCII_GROUPS
        else:
            present = {_char_class(ch) for ch in set(text)}
        groups = [g for g in present if g in self._group_names]
        if any(g not in self._groups for g in groups):
            with self._group_lock:  # one thread numbers a group's strings
                for g in groups:
                    if g not in self._groups:
                        self._build_group(g)
        if self._ac is not None:
            out: list[tuple[int, int, int]] = self._plain_hits(text) if self._plain else []
            for g in groups:
                automaton, numbers = self._groups[g]
                if automaton is None:
                    continue
                hits = automaton.find_matches_as_indexes(text, overlapping=True)
                if hits:
                    out.extend([(numbers[k], s, e) for k, s, e in hits])
            out.sort(key=_END_START)
            return out
        if not self._lengths:
            return ()
        # without the extra: at each position, each length some string starting with
        # that character has (shortest first), looked up in the set of strings
        out = []
        index, lengths, n = self._index, self._lengths, len(text)
        for s in range(n):
            for length in lengths.get(text[s], ()):
                e = s + length
                if e > n:
                    break
                k = index.get(text[s:e])
                if k is not None:
                    out.append((k, s, e))
        return out

    def _plain_hits(self, text: str) -> list[tuple[int, int, int]]:
        """(string index, start, end) of the plain words and phrases (``plain_shaped``)
        in ``text``: the hits the automaton would report that ``occurrences`` keeps.

        A plain string is whole words of one script class joined by single spaces; a
        hit of it counts only as a run of whole words (``occurrences``: both edges), or
        after a proclitic that starts a word. So the text's words are looked up, alone
        and joined with the next ones, from each word's start and from after each
        proclitic it starts with."""
        # maximal runs of word characters, Han apart
        spans = [m.span() for m in _RUN.finditer(text.translate(_KINDS))]
        plain, most, procl = self._plain, self._plain_words, self._all_proclitics
        number = self._plain_number
        out: list[tuple[int, int, int]] = []
        for w, (s, e) in enumerate(spans):
            starts = [s]
            if procl and not _word_at(text, s - 1):
                starts += [
                    s + len(pc) for pc in procl if len(pc) < e - s and text.startswith(pc, s)
                ]
            for b in starts:
                k = plain.get(text[b:e], -1)
                if k is None:
                    k = number(text[b:e])
                if k >= 0:
                    out.append((k, b, e))
                end = e
                for s2, e2 in spans[w + 1 : w + most]:
                    if s2 != end + 1 or text[end] != " ":
                        break
                    end = e2
                    k = plain.get(text[b:end], -1)
                    if k is None:
                        k = number(text[b:end])
                    if k >= 0:
                        out.append((k, b, end))
        return out

    def occurrences(
        self, text: str, builtins: Builtins | Callable[[], Builtins] = NONE
    ) -> _Occurrences:
        """Every occurrence in ``text`` (normalised), with its built-ins (``builtins``, or
        a function that finds them when a rule first needs them)."""
        self._build()
        occ = _Occurrences(self, text, builtins)
        names: list[tuple[int, int, str]] = []
        roles, strings, edges = self._roles, self._strings, self._edges
        any_procl = bool(self._all_proclitics)
        n = len(text)
        for k, s, e in self._raw_hits(text):
            string = strings[k]
            need_l, need_r = edges[k]
            # ``_edge_ok`` inlined (this runs for every automaton hit)
            left = (
                not need_l
                or s == 0
                or not _wc(text[s - 1])
                or _hanc(text[s - 1]) != _hanc(string[0])
            )
            right = not need_r or e >= n or not _wc(text[e]) or _hanc(text[e]) != _hanc(string[-1])
            for kind, val in roles[k]:
                if kind == "a":
                    occ.anchors.add(string)
                    continue
                if kind == "h":  # a head stem: the whole word around the part
                    b, end = s, e
                    while b > 0 and _wc(text[b - 1]) and _hanc(text[b - 1]) == _hanc(string[0]):
                        b -= 1
                    while end < n and _wc(text[end]) and _hanc(text[end]) == _hanc(string[-1]):
                        end += 1
                    got = occ.stems.setdefault(val, [])
                    if (b, end) not in got:
                        got.append((b, end))
                    continue
                if kind == "t":
                    if left and is_han(string[-1]):
                        ends = [
                            e + j for j in range(4) if j == 0 or is_han(text[e + j - 1 : e + j])
                        ]
                        occ.stems.setdefault(string, []).extend((s, x) for x in ends)
                        continue
                    if left:
                        starts = [s]
                    elif any_procl:  # after a proclitic that starts the word ("والسعر")
                        starts = [b for b, _ in self._proclitic_starts(text, s)]
                    else:
                        starts = []
                    if not starts:
                        continue
                    end = e
                    while end < n and _wc(text[end]):
                        end += 1
                    occ.stems.setdefault(string, []).extend((b, end) for b in starts)
                    continue
                if kind == "w":
                    if left and right:
                        occ.words.setdefault(string, []).append((s, e))
                    elif right and any_procl:
                        for b, pc in self._proclitic_starts(text, s):
                            occ.procl.setdefault(string, []).append((b, e, pc))
                elif kind == "pron":
                    if left and right:
                        occ.pron.setdefault(val, []).append((s, e))
                elif (
                    kind == "name"
                    and left
                    and (
                        right
                        or (val == MARK_LATIN and _possessive_follows(text, e))
                        or any(
                            text.startswith(t, e) or text.startswith(" " + t, e)
                            for tt in self.titles.values()
                            for t in tt[1]
                        )
                    )
                ):
                    names.append((s, e, val))
        if (
            not _SOFT.isdisjoint(text)
            or "-" in text
            or not _OPENERS.isdisjoint(text)
            or any(" " + pc in text for pc in self._all_proclitics)
        ):
            self._reread(occ, text)
        # leftmost-longest, non-overlapping names
        names.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        last = -1
        for s, e, mark in names:
            if s >= last:
                occ.names.append((s, e, mark))
                last = e
        return occ

    def _proclitic_starts(self, text: str, s: int) -> list[tuple[int, str]]:
        """(start, proclitic) of each proclitic of a loaded locale (``lexicon.yaml``
        ``proclitics``: Arabic و, ف) that starts a word and ends at position ``s``."""
        out = []
        for pc in self._all_proclitics:
            b = s - len(pc)
            if b >= 0 and text.startswith(pc, b) and not _word_at(text, b - 1):
                out.append((b, pc))
        return out

    def _reread(self, occ: _Occurrences, text: str) -> None:
        """Literals of several words found across a comma-like mark ("Dana, what is your
        rate" holds "dana what is your"), an opening mark or quotation marks ("oye ¿qué",
        "vor „Nutzer:“ steht") or with a proclitic on a later word ("رقم وهاتفها"
        holds "رقم هاتف"): the automaton runs once more over the text with each mark read
        as a space and such proclitics left out, and those hits are mapped back."""
        chars: list[str] = []
        pos: list[int] = []  # original index of each character of the re-read text
        inner: set[int] = set()  # re-read indexes where a proclitic was left out
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch in _OPENERS and (not chars or chars[-1] == " "):
                i += 1  # "cuentas, ¿qué" holds "cuentas qué"; "vor „nutzer" "vor nutzer"
                continue
            if (ch in _QMARKS or ch == ":") and chars and chars[-1] != " ":
                j = _close(text, n, i)
                if j > i and not _word_at(text, j):
                    i = j  # "„nutzer:“ steht" holds "nutzer steht"
                    continue
            if ch in _SOFT or ch == "-":
                ch = " "
            if ch == " ":
                if not (chars and chars[-1] == " "):
                    chars.append(" ")
                    pos.append(i)
                i += 1
                for pc in self._all_proclitics:  # a word after a space: not the first
                    j = i + len(pc)
                    if text.startswith(pc, i) and j + 1 < n and _wc(text[j]) and _wc(text[j + 1]):
                        inner.add(len(chars))
                        i = j
                        break
                continue
            chars.append(ch)
            pos.append(i)
            i += 1
        squeezed = "".join(chars)
        if squeezed == text:
            return
        roles, strings, edges = self._roles, self._strings, self._edges
        for k, s, e in self._raw_hits(squeezed):
            string = strings[k]
            if " " not in string:
                continue
            a, b = pos[s], pos[e - 1] + 1
            if text[a:b] == string or s in inner:
                continue  # found as it is; or a proclitic on its first word (as ever)
            need_l, need_r = edges[k]
            if need_l and not _edge_ok(squeezed, s - 1, string[0]):
                continue
            if need_r and not _edge_ok(squeezed, e, string[-1]):
                continue
            if any(kind == "w" for kind, _ in roles[k]):
                occ.words.setdefault(string, []).append((a, b))

    # -- evaluation -----------------------------------------------------------------
    def candidates(self, occ: _Occurrences, section: str) -> list[tuple[Rule, set[int]]]:
        """Rules of ``section`` that may match, in precedence order, each with the
        indexes of its forms whose key occurred (``FRAME``/``HATCH`` for its frame and
        escape-hatch regexes)."""
        live: dict[int, set[int]] = {}

        def add(refs: Iterable[tuple[int, int]]) -> None:
            for idx, fi in refs:
                got = live.get(idx)
                if got is None:
                    live[idx] = {fi}
                else:
                    got.add(fi)

        cached = occ._candidates.get(section)
        if cached is not None:
            return cached
        add(self._always)
        word_refs = self._word_refs
        for w in occ.words:
            add(word_refs(w))
        for w in occ.procl:
            add(word_refs(w))
        for t in occ.stems:
            add(self._stem_refs(t))
        for a in occ.anchors:
            add(self._by_anchor.get(a, ()))
        # concepts that are the key of a form of a rule of this section, and that can
        # occur: one of the words one of their forms needs occurred (or that cannot be
        # said of them)
        refs_of, by_key, unkeyed, keyed = self._concept_keys_of(section)
        todo = set(unkeyed)
        for w in occ.present:
            got = by_key.get(w)
            if got is None:
                got = self._keyed_by(w, by_key, keyed)
            if got:
                todo.update(got)
        for ck in sorted(todo):  # (written order of the keys, for determinism)
            code, name = self._concept_order[ck]
            if occ.concept(code, name):
                add(refs_of[ck])
        rules = self.rules
        out = [(rules[i], fis) for i, fis in live.items() if rules[i].section == section]
        out.sort(key=lambda rf: precedence(rf[0]))
        occ._candidates[section] = out
        return out

    def _concept_keys_of(
        self, section: str
    ) -> tuple[
        list[list[tuple[int, int]]],
        dict[str, list[int]],
        list[int],
        list[tuple[int, frozenset[str]]],
    ]:
        """For the concepts that are form keys of rules of ``section`` (by number, see
        ``_concept_order``): their rule references, the concepts filed under each word
        one of whose forms needs it (``concept_keys``; filled word by word as words occur,
        see ``_keyed_by``), those without such words, and the others with their keys."""
        got = self._section_concepts.get(section)
        if got is None:
            if not self._concept_order:
                self._concept_order = list(self._by_concept)
            refs_of: list[list[tuple[int, int]]] = []
            keyed: list[tuple[int, frozenset[str]]] = []
            unkeyed: list[int] = []
            for ck, (code, name) in enumerate(self._concept_order):
                refs = [
                    r for r in self._by_concept[(code, name)] if self.rules[r[0]].section == section
                ]
                refs_of.append(refs)
                if not refs:
                    continue
                keys = self.concept_keys(code, name)
                if keys is None:
                    unkeyed.append(ck)
                    continue
                keyed.append((ck, keys))
            got = self._section_concepts[section] = (refs_of, {}, unkeyed, keyed)
        return got

    @staticmethod
    def _keyed_by(
        word: str, by_key: dict[str, list[int]], keyed: list[tuple[int, frozenset[str]]]
    ) -> list[int]:
        """The concepts (by number) one of whose keys is ``word``, found once per word: a
        start then files a few dozen words instead of every key of every concept."""
        got = by_key.get(word)
        if got is None:
            got = by_key[word] = [ck for ck, keys in keyed if word in keys]
        return got

    def evaluate(
        self,
        rule: Rule,
        occ: _Occurrences,
        offset: int = 0,
        *,
        prefilter: bool = True,
        live: set[int] | None = None,
    ) -> Hit | None:
        """The rule's leftmost match in ``occ`` (one ending after ``offset``: joined text).

        ``prefilter=False`` runs every escape-hatch regex even when none of its anchors
        occurred (tests use it to check that the anchors lose nothing).
        """
        best: Hit | None = None
        forms = rule.forms if live is None else [rule.forms[i] for i in sorted(live) if i >= 0]
        for form in forms:
            spans = occ.form_spans(form, rule.locale, first_only=offset == 0)
            if offset:
                spans = [sp for sp in spans if sp[1] > offset][:1]
            if spans and (best is None or (spans[0][0], -spans[0][1]) < _key(best)):
                sp = spans[0]
                best = Hit(rule, sp, self._template_evidence(form, rule.locale, occ, sp))
        if best is not None and best.span[0] == 0:
            return best  # nothing can start further left
        if rule.frame and (live is None or FRAME in live):
            hit = self._frame(rule, occ, offset)
            if hit is not None and (best is None or _key(hit) < _key(best)):
                best = hit
        hatch: Iterable[int]
        if live is None:
            hatch = range(len(rule.hatch))
        else:
            hatch = sorted(HATCH - i for i in live if i <= HATCH)
        for k in hatch:
            if best is not None and best.span[0] == 0:
                break
            rx = rule.hatch[k]
            anchors = rx.get("_set")
            if prefilter and anchors is not None and anchors.isdisjoint(occ.anchors):
                continue
            pat = self._pattern(rule, k)
            text = occ.marked()
            timeout = self.timeout()
            if offset == 0:
                m = pat.search(text, timeout=timeout)
                if m is not None and m.end() > m.start():
                    sp = m.span()
                    if best is None or (sp[0], -sp[1]) < _key(best):
                        best = Hit(rule, sp, (("regex", sp),))
            else:
                for m in pat.finditer(text, overlapped=True, timeout=timeout):
                    if m.end() > offset:
                        sp = m.span()
                        if best is None or (sp[0], -sp[1]) < _key(best):
                            best = Hit(rule, sp, (("regex", sp),))
                        break
        return best

    def _pattern(self, rule: Rule, k: int) -> regex.Pattern[str]:
        pat = rule._patterns[k]
        if pat is None:
            source = rule.hatch[k]["source"].replace(
                "(?&subject)", self._regex_subject[rule.locale]
            )
            pat = rule._patterns[k] = regex.compile(source)
        return pat

    def compile_regexes(self) -> None:
        """Build the automaton and compile every escape-hatch regex now."""
        self.build_all()
        for rule in self.rules:
            for k in range(len(rule.hatch)):
                self._pattern(rule, k)

    def _template_evidence(
        self, form: list[Any], locale: str, occ: _Occurrences, span: Span
    ) -> tuple[tuple[str, Span], ...]:
        ev: list[tuple[str, Span]] = [("template", span)]
        seen: set[str] = set()
        for el in form[::2]:
            if el[0] in ("s", "c", "n", "b") and repr(el) not in seen:
                seen.add(repr(el))
                name = {"s": "subject", "n": "number"}.get(el[0]) or el[1]
                for sp in occ.spans_of(el, locale):
                    if span[0] <= sp[0] and sp[1] <= span[1]:
                        ev.append((name, sp))
                        break
        return tuple(ev)

    def item_keys(self, locale: str, item: Mapping[str, Any]) -> frozenset[str] | None:
        """Keys (``_Occurrences.present``) at least one of which occurs wherever the frame
        item occurs: for each of its forms, the key it is filed under (``form_key``; a
        concept's keys for a concept), or None when that cannot be said of some form."""
        key = (locale, item["text"])
        if key in self._item_keys:
            return self._item_keys[key]
        got = forms_keys(item["forms"], lambda name: self.concept_keys(locale, name))
        self._item_keys[key] = got
        return got

    def guard_keys(self, locale: str, category: str | None) -> frozenset[str] | None:
        """Keys at least one of which occurs wherever a guard (``none`` item) of
        ``locale``'s rules of ``category`` occurs (``guarded_in``); None when that cannot
        be said; the empty set when there is no such guard. Stored with the program
        (``program_index``), else computed from the frames."""
        if locale not in self._guard_keys_of:
            self._guard_keys_of.add(locale)
            cats = {r.category for r in self.rules if r.locale == locale}
            for cat in cats:
                self._guard_keys[(locale, cat)] = forms_keys(
                    self._guard_forms(locale, cat), lambda name: self.concept_keys(locale, name)
                )
        return self._guard_keys.get((locale, category), frozenset())

    def foreign_guards_may_occur(self, occ: _Occurrences, rule: Rule) -> bool:
        """True when a guard of another loaded locale's rules of ``rule``'s category
        occurs in ``occ`` (``guarded_in`` for that locale; those none of whose
        ``guard_keys`` occurred are not even evaluated). When False, ``guarded_in`` is
        False whatever the question's language, which then need not be identified."""
        present = occ.present
        for code in self.concepts:
            if code == rule.locale:
                continue
            keys = self.guard_keys(code, rule.category)
            if keys is not None and keys.isdisjoint(present):
                continue
            if self.guarded_in(occ, rule, code):
                return True
        return False

    def _frame(self, rule: Rule, occ: _Occurrences, offset: int) -> Hit | None:
        frame = rule.frame
        assert frame is not None

        locale = rule.locale

        def item_spans(item: dict[str, Any]) -> list[Span]:
            # an item's forms depend only on its text and locale: shared by every frame
            key = (locale, item["text"])
            got = occ._items.get(key)
            if got is None:
                out: set[Span] = set()
                for form in item["forms"]:
                    out.update(occ.form_spans(form, locale, first_only=False))
                got = occ._items[key] = sorted(out)
            return got

        # first the necessary condition: every ``all`` item, and one ``any`` item, has
        # one of its keys among the words that occurred (``item_keys``; no spans built)
        present = occ.present
        for item in frame["all"]:
            keys = self.item_keys(locale, item)
            if keys is not None and keys.isdisjoint(present):
                return None
        if frame["any"] and not any(
            keys is None or not keys.isdisjoint(present)
            for keys in (self.item_keys(locale, item) for item in frame["any"])
        ):
            return None
        # the guards (``none``) last: the cheap misses of ``all``/``any`` first
        chosen: list[tuple[str, Span]] = []
        all_spans = []
        for item in frame["all"]:
            spans = item_spans(item)
            if not spans:
                return None
            all_spans.append((item, spans))
        if frame["any"]:
            got = None
            for item in frame["any"]:
                keys = self.item_keys(locale, item)
                if keys is not None and keys.isdisjoint(present):
                    continue  # no spans (see above)
                spans = item_spans(item)
                if spans:
                    got = (item, spans)
                    break
            if got is None:
                return None
            any_item = got
        else:
            any_item = None
        within = frame.get("within")
        text = occ.text
        pick: tuple[Span, ...] | None = None
        for combo in product_limited([s for _, s in all_spans]):
            lo = min((s for s, _ in combo), default=None)
            hi = max((e for _, e in combo), default=None)
            if (
                within is not None
                and lo is not None
                and hi is not None
                and span_words(text[lo:hi]) > within
            ):
                continue
            if offset and hi is not None and hi <= offset:
                continue
            pick = combo
            break
        if all_spans and pick is None:
            return None
        for (item, _), sp in zip(all_spans, pick or (), strict=False):
            chosen.append((_item_name(item), sp))
        if any_item is not None:
            sp = any_item[1][0]
            if offset and not chosen and sp[1] <= offset:
                later = [x for x in any_item[1] if x[1] > offset]
                if not later:
                    return None
                sp = later[0]
            chosen.append((_item_name(any_item[0]), sp))
        for item in frame["none"]:
            spans = item_spans(item)
            if spans and rule.reads_pasted:  # what is pasted is data, not a hard negative
                spans = [sp for sp in spans if not occ.inside_pasted(sp)]
            if spans:
                return None
        lo = min(s for _, (s, _) in chosen)
        hi = max(e for _, (_, e) in chosen)
        return Hit(rule, (lo, hi), tuple(sorted(chosen, key=lambda c: c[1])))

    def route_section(
        self,
        occ: _Occurrences,
        section: str,
        offset: int = 0,
        veto: Callable[[Rule], bool] | None = None,
    ) -> Hit | None:
        """The winning match of a section (see ``precedence``); ``veto`` drops a hit.

        When the question holds pasted text (``<pasted>``), a hit of a rule without
        ``reads_pasted`` whose evidence lies wholly inside it gives way to the best other
        hit; with no other hit it stands (pasted text never lets a question through).
        """
        set_aside: list[Hit] = []
        hit = self._best(occ, section, offset, veto, set_aside)
        if hit is None and set_aside:
            return self._best(occ, section, offset, veto, None)
        return hit

    def _best(
        self,
        occ: _Occurrences,
        section: str,
        offset: int,
        veto: Callable[[Rule], bool] | None,
        set_aside: list[Hit] | None,
    ) -> Hit | None:
        best: tuple[tuple[Any, ...], Hit] | None = None
        for rule, live in self.candidates(occ, section):
            if best is not None and rule.priority < best[1].rule.priority:
                break  # candidates come in priority order: nothing later can win
            hit = self.evaluate(rule, occ, offset, live=live)
            if hit is not None and veto is not None and veto(rule):
                continue
            if hit is not None and set_aside is not None and _reads_only_pasted(hit, occ):
                set_aside.append(hit)
                continue
            if hit is not None:
                key = (-rule.priority, hit.span[0], *precedence(rule)[1:])
                if best is None or key < best[0]:
                    best = (key, hit)
        return best[1] if best is not None else None

    def guarded_in(self, occ: _Occurrences, rule: Rule, locale: str) -> bool:
        """True when a guard of ``locale``'s rules of the same category occurs.

        Every locale's rules run on every question, so a loanword rule of one locale
        ("jailbreak", "prompt") can fire on a question in another language, whose hard
        negatives that locale's guards do not describe. The guards of the question's own
        language do: "What does she recommend for jailbreak detection?" is vetoed by
        the English rules' guards, whatever pack the trigger came from.
        """
        if rule.locale == locale:
            return False
        key = (locale, rule.category)
        pasted = rule.reads_pasted  # what is pasted is data, not a hard negative, here too
        memo = (locale, rule.category, pasted)
        got = occ._guarded.get(memo)
        if got is None:
            got = occ._guarded[memo] = any(
                not (pasted and occ.inside_pasted(sp))
                for form in self._guard_candidates(occ, key)
                for sp in occ.form_spans(form, locale)
            )
        return got

    def _guard_candidates(self, occ: _Occurrences, key: tuple[str, str | None]) -> list[list[Any]]:
        """The guard forms of (locale, category) ``key`` that can match in ``occ``: those
        one of whose keys (``forms_keys``) occurred, and those without keys."""
        got = self._guards.get(key)
        if got is None:
            locale = key[0]
            by_key: dict[str, list[list[Any]]] = {}
            keyless: list[list[Any]] = []
            for form in self._guard_forms(*key):
                ks = forms_keys([form], lambda name: self.concept_keys(locale, name))
                if ks is None:
                    keyless.append(form)
                for k in ks or ():
                    by_key.setdefault(k, []).append(form)
            got = self._guards[key] = (by_key, keyless)
        by_key, keyless = got
        hit = occ.present & by_key.keys()
        if not hit:
            return keyless
        forms = {id(f): f for f in keyless}
        for k in hit:
            for f in by_key[k]:
                forms[id(f)] = f
        return list(forms.values())

    def guard_occurs(self, occ: _Occurrences, rule: Rule) -> bool:
        """True when one of ``rule``'s own guards (its frame's ``none`` items) occurs in
        ``occ``: a disguised reading of a question is judged with the guards of the
        question as typed too ("qu'a-t-elle écrit" read "quatelle ecrit" is still about
        what she wrote)."""
        if not rule.frame or not rule.frame["none"]:
            return False
        forms = [form for item in rule.frame["none"] for form in item["forms"]]
        return any(occ.form_spans(form, rule.locale) for form in forms)

    def _guard_forms(self, locale: str, category: str | None) -> list[list[Any]]:
        """The forms of the ``none`` items of the frames of ``locale``'s rules of
        ``category`` (only those rules are decoded), each item once: many rules share a
        guard, and an item's forms depend only on its text and locale."""
        out: list[list[Any]] = []
        seen: set[str] = set()
        for other in self.rules:
            if other.locale == locale and other.category == category and other.frame:
                for item in other.frame["none"]:
                    if item["text"] not in seen:
                        seen.add(item["text"])
                        out.extend(item["forms"])
        return out


class _WordSet(Collection[str]):
    """``Matcher.word_set``: a set of words whose bulk is gathered on first use."""

    __slots__ = ("_extra", "_m", "_words")

    def __init__(self, m: Matcher, extra: frozenset[str]) -> None:
        self._m = m
        self._extra = extra
        self._words: frozenset[str] | None = None

    def _all(self) -> frozenset[str]:
        got = self._words
        if got is None:
            got = self._words = self._extra | frozenset(
                k for k in self._m._keys if " " not in k and len(k) > 1
            )
        return got

    def __contains__(self, word: object) -> bool:
        return word in self._extra or word in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def product_limited(
    lists: list[list[tuple[int, int]]], limit: int = 256
) -> Iterable[tuple[tuple[int, int], ...]]:
    """``itertools.product`` with a cap (frames rarely have more than a few matches)."""
    return itertools.islice(itertools.product(*lists), limit)


def _reads_only_pasted(hit: Hit, occ: _Occurrences) -> bool:
    """True for a hit of a rule without ``reads_pasted`` whose evidence (the subject
    aside) lies wholly inside pasted text."""
    if hit.rule.reads_pasted:
        return False
    inside = occ.inside_pasted
    items = [sp for name, sp in hit.evidence if name != "subject"] or [hit.span]
    return all(inside(sp) for sp in items)


def _key(hit: Hit) -> tuple[int, int]:
    """Leftmost first, then longest."""
    return (hit.span[0], -hit.span[1])


def _item_name(item: Mapping[str, Any]) -> str:
    text = str(item["text"]).strip()
    if text == "{subject}":
        return "subject"
    if text.startswith("<") and text.endswith(">") and text.count("<") == 1:
        return text[1:-1].strip()
    return "template"


CATEGORY_ORDER = ("engagement", "personal_data", "speculation", "meta", "task")


def precedence(rule: Rule) -> tuple[Any, ...]:
    """The order among matching rules of one section (``docs/packs.md``).

    Higher ``priority`` first; then the match that starts leftmost in the question
    (``Matcher.route_section`` puts the start here); then the category order
    engagement, personal_data, speculation, meta, task; then the order the rules are
    written in their locale's file; then the locale code. Nothing depends on which
    other locales are loaded, so a question routes the same with one locale or all.
    """
    cat = CATEGORY_ORDER.index(rule.category) if rule.category in CATEGORY_ORDER else 99
    return (-rule.priority, cat, rule.order, rule.locale)


_WC: dict[str, bool] = {}
_HANC: dict[str, bool] = {}


class _Kinds(dict[int, str]):
    """Code point -> ``w`` (a word character, not Han), ``h`` (Han) or a space (not a
    word character), for ``str.translate``; each filled on first sight."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        got = self[code] = ("h" if _hanc(ch) else "w") if _wc(ch) else " "
        return got


_KINDS = _Kinds()
_RUN = regex.compile("w+")


def _wc(ch: str) -> bool:
    """``is_word_char``, memoised per character (called for every automaton hit)."""
    got = _WC.get(ch)
    if got is None:
        got = _WC[ch] = is_word_char(ch)
    return got


def _hanc(ch: str) -> bool:
    """``is_han``, memoised per character."""
    got = _HANC.get(ch)
    if got is None:
        got = _HANC[ch] = is_han(ch)
    return got


_EDGE_PAIRS = {(a, b): (a, b) for a in (False, True) for b in (False, True)}  # shared
_WORD_ROLE: tuple[tuple[str, Any], ...] = (("w", None),)
#: plain words looked up, not put in automatons (``Matcher._build_group``); False puts
#: every string in the automatons (the reference the tests compare with)
LOOK_UP_PLAIN = True
_END_START = operator.itemgetter(2, 1)
_CLASS: dict[str, str] = {}
#: the groups a text of ASCII characters only can hold (``_char_class``)
_ASCII_GROUPS = ("a", "n")


def _char_class(ch: str) -> str:
    """The group of a character (``string_group``): ``a`` an ASCII letter, ``n`` any
    other ASCII character, ``h`` CJK (ideographs, kana, Hangul, CJK punctuation and
    full-width forms), else the block of 128 code points it lies in (hexadecimal)."""
    got = _CLASS.get(ch)
    if got is None:
        o = ord(ch)
        if o < 0x80:
            got = "a" if ch.isalpha() else "n"
        elif (
            0x2E80 <= o <= 0xD7AF
            or 0xF900 <= o <= 0xFAFF
            or 0xFE30 <= o <= 0xFE4F
            or 0xFF00 <= o <= 0xFFEF
            or o >= 0x20000
        ):
            got = "h"
        else:
            got = format(o >> 7, "x")
        _CLASS[ch] = got
    return got


def string_group(s: str) -> str:
    """The automaton group of an automaton string: the group (``_char_class``) of its
    greatest character. Any character of a string would do (a text that holds the
    string holds each of its characters); the greatest keeps Latin-only groups free
    of strings that mix in another script."""
    return _char_class(max(s)) if s else "n"


def grouped(strings: Iterable[str]) -> dict[str, str]:
    """``strings`` by ``string_group``, each group sorted and joined by ``KEY_SEP``."""
    out: dict[str, list[str]] = {}
    for s in strings:
        out.setdefault(string_group(s), []).append(s)
    return {g: KEY_SEP.join(sorted(v)) for g, v in sorted(out.items())}


def _needs_boundary(ch: str) -> bool:
    return _wc(ch) and not _hanc(ch)


def plain_shaped(strings: list[str]) -> list[bool]:
    """Which ``strings`` are plain-shaped: whole words of letters, marks or digits (no
    Han) joined by single spaces. Those with no role but the word's are plain: found by
    look-ups (``Matcher._plain_hits``), not automatons."""
    if not strings:
        return []
    sep = "\x00"  # in no string: the loader refuses control characters
    joined = sep.join(strings)
    odd = [c for c in sorted(set(joined) - {" ", sep}) if not _needs_boundary(c)]
    odd += ["  ", sep + " ", " " + sep]
    plain = [True] * len(strings)
    starts = list(itertools.accumulate((len(x) + 1 for x in strings), initial=0))
    if joined.startswith(" "):
        plain[0] = False
    if joined.endswith(" "):
        plain[-1] = False
    for sub in odd:  # C-level searches: a few, each over all the strings
        at = joined.find(sub)
        while at >= 0:
            plain[bisect.bisect_right(starts, at + (sub[0] == sep)) - 1] = False
            at = joined.find(sub, at + 1)
    return plain


def _edge_ok(text: str, i: int, edge: str) -> bool:
    """Whether position ``i``, beside a word's ``edge`` character, leaves a word edge: no
    word character there, or a change between Han and other letters (Chinese glues
    Latin words: "她的rate多少")."""
    return not _word_at(text, i) or _hanc(text[i]) != _hanc(edge)


def _possessive_follows(text: str, e: int) -> bool:
    return any(text.startswith(p, e) and not _word_at(text, e + len(p)) for p in _POSSESSIVE)


def _norm_title(t: str) -> str:
    return normalise(t).rstrip(".").strip()


def _name_forms(names: Sequence[str]) -> list[tuple[str, str]]:
    """Each normalised name form with its marker (see ``MARK_*``)."""
    out = []
    for w in subject_words((), names):
        if is_han(w[0]) or is_han(w[-1]):
            mark = MARK_HAN
        elif w[-1:].isascii():
            mark = MARK_LATIN
        else:
            mark = MARK_WORD
        out.append((w, mark))
    return out


#: Joins the parts of a form key (``form_key``); no normalised text holds it.
KEY_SEP = "\x1f"


def form_key(form: Sequence[Any]) -> str:
    """What a form is filed under (``Matcher.candidates``): its longest literal
    (``w``), else every spelling of its most selective alternative (``a``), else its
    longest stem (``t``), else its first concept (``c``), else nothing (``x``: always a
    candidate); as one string, kind and values joined by ``KEY_SEP``."""
    els = form[::2]
    words = [el[1] for el in els if el[0] == "w"]
    if words:
        return "w" + KEY_SEP + max(words, key=len)
    alts = [el[1:] for el in els if el[0] == "a"]
    if alts:  # every spelling of the most selective alternative is a key
        return KEY_SEP.join(["a", *max(alts, key=lambda a: min(len(x) for x in a))])
    stems = [el[1] for el in els if el[0] == "t"]
    if stems:
        return "t" + KEY_SEP + max(stems, key=len)
    concepts = [el[1] for el in els if el[0] == "c"]
    if concepts:
        return "c" + KEY_SEP + concepts[0]
    return "x"


def locale_refs(keyed: Iterable[tuple[Sequence[str], Sequence[str]]]) -> dict[str, Any]:
    """One locale's forms filed by key: ``keyed`` gives each rule's frame keys and form
    keys (``rule_keys``) in written order; the result maps each word (``w``), stem
    (``t``) and concept (``c``) to the flat list ``[rule, form, rule, form, ...]`` of the
    forms filed under it (form ``FRAME`` for the frame; ``rule`` counts the locale's rules
    in written order), and ``x`` lists those with no key (always candidates)."""
    words: dict[str, list[int]] = {}
    stems: dict[str, list[int]] = {}
    concepts: dict[str, list[int]] = {}
    always: list[int] = []
    for written, (frame_keys, form_keys) in enumerate(keyed):
        for fi, key in itertools.chain(((FRAME, k) for k in frame_keys), enumerate(form_keys)):
            kind, *values = key.split(KEY_SEP)
            if kind in ("w", "a"):
                for w in values:
                    words.setdefault(w, []).extend((written, fi))
            elif kind == "t":
                stems.setdefault(values[0], []).extend((written, fi))
            elif kind == "c":
                concepts.setdefault(values[0], []).extend((written, fi))
            else:
                always.extend((written, fi))
    return {"w": words, "t": stems, "c": concepts, "x": always}


def _keys_of(raw: Mapping[str, Any]) -> tuple[Sequence[str], Sequence[str]]:
    """A raw rule's frame and form keys (``rule_keys``); a packed rule is decoded."""
    packed = raw.get("packed")
    if packed is not None:
        forms, frame = unpack_text(packed)
        return rule_keys(forms, frame)
    return rule_keys(raw.get("forms") or [], raw.get("frame"))


def _pairs(base: int, flat: Sequence[int] | bytes) -> list[tuple[int, int]]:
    """``[rule, form, ...]`` of ``locale_refs`` as (``base`` + rule, form) pairs (packed
    as bytes in shipped programs: ``cache.packed_refs``)."""
    if isinstance(flat, bytes):
        from guardlex.rules.cache import unpacked_refs

        flat = unpacked_refs(flat)
    it = iter(flat)
    return [(base + r, f) for r, f in zip(it, it, strict=True)]


def rule_keys(
    forms: Sequence[Sequence[Any]], frame: Mapping[str, Any] | None
) -> tuple[list[str], list[str]]:
    """The keys of a rule's frame (the forms of its first ``all`` item, else of every
    ``any`` item) and of each of its forms (``form_key``)."""
    frame_keys: list[str] = []
    if frame:
        for item in frame["all"][:1] or frame["any"]:
            frame_keys.extend(form_key(f) for f in item["forms"])
    return frame_keys, [form_key(f) for f in forms]


def forms_keys(
    forms: Iterable[Sequence[Any]], concept: Callable[[str], frozenset[str] | None]
) -> frozenset[str] | None:
    """Keys (``_Occurrences.present``) at least one of which occurs wherever one of
    ``forms`` matches: for each form the key it is filed under (``form_key``; for a
    concept, its keys: ``concept``), or None when that cannot be said of some form."""
    out: set[str] = set()
    for form in forms:
        kind, *values = form_key(form).split(KEY_SEP)
        if kind in ("w", "a"):
            out.update(values)
        elif kind == "t":
            out.add(STEM_KEY + values[0])
        elif kind == "c" and (ck := concept(values[0])) is not None:
            out.update(ck)
        else:
            return None  # a form without a key: nothing can be said
    return frozenset(out)


def concept_keys(
    concepts: Mapping[str, Sequence[list[Any]]],
    name: str,
    memo: dict[str, frozenset[str] | None],
    _trail: frozenset[str] = frozenset(),
) -> frozenset[str] | None:
    """``Matcher.concept_keys`` of one locale's concepts (``memo``: name -> keys, filled
    for the concept and every concept it refers to)."""
    if name in memo:
        return memo[name]
    if name in _trail:
        return None
    out: set[str] = set()
    result: frozenset[str] | None = None
    for form in concepts.get(name, ()):
        els = form[::2]
        words = [el[1] for el in els if el[0] == "w"]
        if words:
            out.add(max(words, key=len))
            continue
        alts = [el[1:] for el in els if el[0] == "a"]
        if alts:
            out.update(alts[0])
            continue
        stems = [el[1] for el in els if el[0] == "t"]
        if stems:
            out.add(STEM_KEY + max(stems, key=len))
            continue
        subs = [el[1] for el in els if el[0] == "c"]
        sub = concept_keys(concepts, subs[0], memo, _trail | {name}) if subs else None
        if sub is None:
            break
        out.update(sub)
    else:
        result = frozenset(out)
    memo[name] = result
    return result


def program_index(program: Mapping[str, Any]) -> dict[str, Any]:
    """What the matcher needs of one locale's program before any question, in plain data:
    the automaton strings its forms use (``w``: literal spellings, but ``p``: those that
    are ``plain_shaped``, with ``pw`` the most words of one; ``t``: stems, ``a``:
    anchors of escape-hatch regexes; each by automaton group, ``grouped``), the keys of
    each concept (``concept_keys``: name -> keys, or None) and of the guards of each
    category (``Matcher.guard_keys``), and the rules' forms filed by key
    (``locale_refs``); lists of strings are sorted and joined by ``KEY_SEP`` (one
    string: a start decodes and keeps a few dozen strings, not a hundred thousand).
    Stored with cached and shipped programs (``guardlex.rules.cache``), so a start reads
    it instead of walking every form of every concept; without it the matcher computes
    it (the same function)."""
    words: set[str] = set()
    stems: set[str] = set()
    anchors: set[str] = set()

    def walk(forms: Iterable[list[Any]]) -> None:
        for form in forms:
            for el in form[::2]:
                kind = el[0]
                if kind == "w":
                    words.add(el[1])
                elif kind == "a":
                    words.update(el[1:])
                elif kind == "t":
                    stems.add(el[1])

    concepts: Mapping[str, Sequence[list[Any]]] = program.get("concepts") or {}
    for forms in concepts.values():
        walk(forms)
    for raw in program["rules"]:
        walk(raw.get("forms") or ())
        frame = raw.get("frame")
        if frame:
            for part in ("all", "any", "none"):
                for item in frame[part]:
                    walk(item["forms"])
        for rx in raw.get("regex") or ():
            if rx.get("anchors") is not None:
                anchors.update(rx["anchors"])
    memo: dict[str, frozenset[str] | None] = {}
    keys: dict[str, str | None] = {}
    for name in concepts:
        got = concept_keys(concepts, name, memo)
        keys[name] = None if got is None else KEY_SEP.join(sorted(got))
    guard_forms: dict[str, list[Any]] = {}  # category ("" for none) -> guard forms
    for raw in program["rules"]:
        frame = raw.get("frame")
        if frame:
            bucket = guard_forms.setdefault(raw.get("category") or "", [])
            for item in frame["none"]:
                bucket.extend(item["forms"])
    guards: dict[str, str | None] = {}
    for cat, forms in guard_forms.items():
        got = forms_keys(forms, lambda name: concept_keys(concepts, name, memo))
        guards[cat] = None if got is None else KEY_SEP.join(sorted(got))
    ordered = sorted(words)
    shaped = plain_shaped(ordered)
    plain = list(itertools.compress(ordered, shaped))
    return {
        "w": grouped(itertools.compress(ordered, [not x for x in shaped])),
        "p": grouped(plain),
        "pw": 1 + max((w.count(" ") for w in plain), default=0),
        "t": grouped(stems),
        "a": grouped(anchors),
        "concept_keys": keys,
        "guard_keys": guards,
        "refs": locale_refs(_keys_of(raw) for raw in program["rules"]),
    }


def unjoin(text: str) -> list[str]:
    """The strings ``KEY_SEP.join`` joined (``program_index``)."""
    return text.split(KEY_SEP) if text else []


def regex_subject_source(pronoun_source: str, titles: str, titles_after: str) -> str:
    """``{subject}`` for the escape-hatch regexes: pronouns, or a marked name."""
    before = f"(?:(?:{titles})\\.? )?" if titles else ""
    after = f"(?: ?(?:{titles_after}))?" if titles_after else ""
    latin = rf"(?<!\w){before}{MARK_LATIN}+{after}(?:['’]?s|['’])?(?!\w)"
    word = rf"(?<!\w){before}{MARK_WORD}+{after}(?!\w)"
    han = rf"{before}{MARK_HAN}+{after}"
    return f"(?:{pronoun_source}|{latin}|{word}|{han})"


def sanitise(text: str) -> str:
    """Marker letters typed by the reader are not names, and a lone surrogate is no
    letter (the automaton could not even encode it): replace them, keeping offsets."""
    if any(ch in _MARKS for ch in text):
        text = "".join("\ufffd" if ch in _MARKS else ch for ch in text)
    if _SURROGATE.search(text, timeout=1.0):
        text = _SURROGATE.sub("\ufffd", text, timeout=1.0)
    return text


_SURROGATE = regex.compile("[\ud800-\udfff]")


Explain = Callable[[Hit], Any]
