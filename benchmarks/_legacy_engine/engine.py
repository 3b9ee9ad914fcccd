"""Routing, first-person detection and reader-language detection over compiled packs.

Matching runs on normalised text. Routing one question through every rule one regex at
a time is what the benchmark calls the naive loop. Instead, each rule carries literal
anchors (``guardlex.rules.anchors``): strings one of which every match must contain. One
Aho-Corasick pass over the question finds every anchor of every rule of every locale at
once; only the few candidate rules are then run, each as one compiled alternation of its
phrases and patterns (compiled on first use, so a cold start compiles nothing). Results
are the same as running every rule: anchors only skip rules that cannot match.

Every ``search`` carries a timeout; a timeout fails closed (the question is refused with
``rule_id == TIMEOUT_RULE_ID``) and is logged, because a guardrail that gives up must not
let the question through.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

import regex

from guardlex.errors import InputTooLargeError, UnknownLocaleError

from ._text import (
    WORD_END,
    WORD_START,
    NormalisedLike,
    is_han,
    is_word_char,
    normalise,
    normalise_with_offsets,
)
from .anchors import trie_source
from .compile import ZWNJ, literal_source, normalise_literal

log = logging.getLogger("guardlex.rules")

#: Longest ``text`` (and ``previous``) accepted by ``route`` and ``first_person``, in
#: characters. Chat questions are far shorter; the limit bounds matching time.
MAX_INPUT_CHARS = 10_000
#: Seconds one regex scan may take before it is abandoned (and the question refused).
REGEX_TIMEOUT = 0.5
#: A follow-up that matches no rule on its own inherits a refusal of the previous
#: question when it has at most ``FOLLOW_UP_SHORT_WORDS`` words ("And in June?",
#: "¿y los fines de semana?"), or at most ``FOLLOW_UP_MAX_WORDS`` words with fewer than
#: two significant words of its own; see ``Packs.route``.
FOLLOW_UP_SHORT_WORDS = 5
FOLLOW_UP_MAX_WORDS = 12
#: How a rule source calls the subject group (see ``CompiledRule.subject``).
SUBJECT_CALL = "(?&subject)"
#: ``Route.rule_id`` when a scan timed out: the question is refused (fail closed).
TIMEOUT_RULE_ID = "guardlex-regex-timeout"

KINDS = ("refuse", "overview", "retrieve")


@dataclass(frozen=True)
class Route:
    """Where a question goes.

    ``span`` is in the original ``text`` passed to ``route``. When the match was found
    only in the previous question joined with this one, ``span`` covers the part of the
    match that lies in this question; it is ``None`` when a short follow-up inherited the
    refusal of the previous question (the match lies wholly in ``previous``).
    """

    kind: str  # "refuse" | "overview" | "retrieve"
    category: str | None = None  # refusal category, None otherwise
    locale: str | None = None
    rule_id: str | None = None
    span: tuple[int, int] | None = None
    topic: str | None = None  # overview topic, None otherwise

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        d = asdict(self)
        d["span"] = list(self.span) if self.span is not None else None
        return d


@dataclass(frozen=True)
class FirstPersonHit:
    """A first-person word found in a text: the word as written, its locale and span."""

    word: str
    locale: str
    span: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        return {"word": self.word, "locale": self.locale, "span": list(self.span)}


@dataclass(frozen=True)
class CompiledRule:
    """A rule ready for matching: its id, what it routes to and its regex sources."""

    id: str
    locale: str
    section: str
    category: str | None
    topic: str | None
    sources: tuple[str, ...]
    anchors: tuple[str, ...] | None = None  # literal strings one of which every match contains
    #: the regex of ``{subject}``; sources call it as ``(?&subject)``, so a rule with many
    #: subject phrases carries the (long) alternation once, not once per phrase
    subject: str = "(?!)"

    def _define(self, body: str) -> str:
        if SUBJECT_CALL not in body:
            return body
        return f"(?(DEFINE)(?<subject>{self.subject}))(?:{body})"

    def source(self) -> str:
        """The rule's sources as one self-contained alternation."""
        return self._define("|".join(f"(?:{s})" for s in self.sources) or "(?!)")

    def pattern_sources(self) -> tuple[str, ...]:
        """Each source on its own, self-contained (for tools that test them one by one)."""
        return tuple(self._define(s) for s in self.sources)


@dataclass
class LocaleState:
    """Everything route/first_person/detect_locale need for one locale."""

    code: str
    refusal: tuple[CompiledRule, ...]
    overview: tuple[CompiledRule, ...]
    first_person_source: str
    exception_source: str
    stopwords: frozenset[str]
    signal_words: frozenset[str]
    lexicon: Mapping[str, Any]
    messages: Mapping[str, str]
    _fp: regex.Pattern[str] | None = field(default=None, repr=False)
    _fx: regex.Pattern[str] | None = field(default=None, repr=False)

    def first_person_patterns(self) -> tuple[regex.Pattern[str] | None, regex.Pattern[str] | None]:
        if self._fp is None and self.first_person_source != "(?!)":
            self._fp = regex.compile(self.first_person_source)
            if self.exception_source != "(?!)":
                self._fx = regex.compile(self.exception_source)
        return self._fp, self._fx


def words_source(words: Sequence[str]) -> str:
    """Whole-word alternation for a word list (Han entries need no boundary).

    Entries that are plain literals with a word boundary on both sides (the bulk: the
    Persian list alone has thousands of generated verb forms) are factored into one
    character trie inside a single pair of boundaries. A flat alternation makes the
    regex engine try every entry at every position; the trie tries one branch per
    character, which is what keeps ``first_person`` fast enough for the sentence gate.
    """
    plain: set[str] = set()
    alts = []
    for w in words:
        lit = normalise_literal(w).strip(" ")
        if not lit:
            continue
        src = literal_source(lit)
        # a boundary only next to a word character: "j'" must match inside "j'ai"
        starts = is_word_char(lit[0]) and not is_han(lit[0])
        ends = is_word_char(lit[-1]) and not is_han(lit[-1])
        if starts and ends and ZWNJ not in lit and not any(is_han(ch) for ch in lit):
            plain.add(lit)
            continue
        if starts:
            src = WORD_START + src
        if ends:
            src = src + WORD_END
        alts.append(src)
    parts = sorted(set(alts), key=lambda s: (-len(s), s))
    if plain:
        parts.insert(0, WORD_START + "(?:" + trie_source(plain) + ")" + WORD_END)
    if not parts:
        return "(?!)"
    return "(?:" + "|".join(parts) + ")"


def _check_input(text: str, name: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__}")
    if len(text) > MAX_INPUT_CHARS:
        raise InputTooLargeError(
            f"{name} has {len(text)} characters; the limit is {MAX_INPUT_CHARS} "
            "(guardlex.rules.MAX_INPUT_CHARS); split the text or shorten it"
        )


_SCRIPTS = {
    "han": regex.compile(r"\p{Han}"),
    "deva": regex.compile(r"\p{Devanagari}"),
    "cyrl": regex.compile(r"\p{Cyrillic}"),
    "arab": regex.compile(r"\p{Arabic}"),
    "latn": regex.compile(r"\p{Latin}"),
}
_SCRIPT_LOCALES = {"han": ("zh",), "deva": ("hi",), "cyrl": ("ru",), "arab": ("fa", "ar")}
_PERSIAN_ONLY = frozenset("پچژگ")
_ARABIC_ONLY = frozenset("يكةىأإ")
_LATIN_HINTS = {
    "es": frozenset("ñ¿¡"),
    "pt": frozenset("ãõ"),
    "de": frozenset("ßäöü"),
    "fr": frozenset("èêàùœç"),
}
_TOKEN = regex.compile(r"\w+")


class Packs:
    """Loaded and compiled locale packs. Build with ``guardlex.load_packs``."""

    def __init__(self, states: Sequence[LocaleState], subject_names: Sequence[str] = ()) -> None:
        self._states = {s.code: s for s in states}
        self._order = tuple(s.code for s in states)
        self.subject_names = tuple(subject_names)
        self._ignored_words: frozenset[str] | None = None
        # every active rule in routing order: refusal of each locale, then overview
        self._flat: list[CompiledRule] = []
        self._ranges: dict[tuple[str, str], tuple[int, int]] = {}
        for section in ("refusal", "overview"):
            for st in states:
                begin = len(self._flat)
                self._flat.extend(st.refusal if section == "refusal" else st.overview)
                self._ranges[(section, st.code)] = (begin, len(self._flat))
        self._patterns: dict[int, regex.Pattern[str]] = {}
        self._anchor_scan: regex.Pattern[str] | None = None
        self._anchor_rules: dict[str, tuple[int, ...]] = {}
        self._always: frozenset[int] = frozenset()
        self._ac: Any = None
        self._ac_rules: list[tuple[int, ...]] = []

    # -- metadata -------------------------------------------------------------------
    @property
    def locales(self) -> tuple[str, ...]:
        """Loaded locale codes, in routing order."""
        return self._order

    def _state(self, locale: str) -> LocaleState:
        try:
            return self._states[locale]
        except KeyError:
            raise UnknownLocaleError(
                f"locale {locale!r} is not loaded; loaded locales: {', '.join(self._order)}"
            ) from None

    def stopwords(self, locale: str) -> frozenset[str]:
        """The locale's stopwords (normalised)."""
        return self._state(locale).stopwords

    def lexicon(self, locale: str) -> Mapping[str, Any]:
        """The locale's ``lexicon.yaml`` (pronouns, ordinals, negations, units, ...)."""
        return self._state(locale).lexicon

    def messages(self, locale: str) -> Mapping[str, str]:
        """The fixed texts a reader of this locale sees.

        A key the locale lacks (an extension locale in progress) falls back to the
        English text when English is loaded; ``guardlex lint`` reports the gap.
        """
        own = self._state(locale).messages
        if locale == "en" or "en" not in self._states:
            return own
        base = self._states["en"].messages
        if all(k in own for k in base):
            return own
        return MappingProxyType({**base, **own})

    def rules(self, locale: str | None = None) -> tuple[CompiledRule, ...]:
        """Compiled active rules, refusal first, in routing order."""
        codes = [locale] if locale else list(self._order)
        out: list[CompiledRule] = []
        for code in codes:
            st = self._state(code)
            out.extend(st.refusal)
            out.extend(st.overview)
        return tuple(out)

    def compile_all(self) -> None:
        """Compile every rule now rather than on first use (for servers and benchmarks)."""
        self._build_index()
        for i in range(len(self._flat)):
            self._pattern(i)
        for st in self._states.values():
            st.first_person_patterns()

    def _build_index(self) -> None:
        """One trie-shaped scan finds every anchor; anchors map to candidate rules."""
        if self._anchor_scan is not None:
            return
        by_anchor: dict[str, set[int]] = {}
        always: set[int] = set()
        for i, rule in enumerate(self._flat):
            if rule.anchors is None:
                always.add(i)
                continue
            for a in rule.anchors:
                by_anchor.setdefault(a, set()).add(i)
        self._always = frozenset(always)
        try:  # an Aho-Corasick automaton finds every anchor in one linear pass
            from ahocorasick_rs import AhoCorasick
        except ImportError:  # same candidates, found with a slower trie-shaped regex
            # the trie reports the longest anchor at a position: add its prefixes' rules
            closure: dict[str, tuple[int, ...]] = {}
            for a in by_anchor:
                found: set[int] = set()
                for k in range(1, len(a) + 1):
                    found |= by_anchor.get(a[:k], set())
                closure[a] = tuple(sorted(found))
            self._anchor_rules = closure
            self._anchor_scan = regex.compile("(?=(" + trie_source(by_anchor) + "))")
        else:
            words = sorted(by_anchor)
            self._ac = AhoCorasick(words)
            self._ac_rules = [tuple(sorted(by_anchor[w])) for w in words]
            self._anchor_scan = regex.compile("(?!)")

    def _pattern(self, i: int) -> regex.Pattern[str]:
        pat = self._patterns.get(i)
        if pat is None:
            pat = self._patterns[i] = regex.compile(self._flat[i].source())
        return pat

    def _candidates(self, text: str) -> list[int]:
        """Indexes (in routing order) of the rules that can match ``text``."""
        self._build_index()
        assert self._anchor_scan is not None
        found = set(self._always)
        if self._ac is not None:
            ac_rules = self._ac_rules
            for k in {m[0] for m in self._ac.find_matches_as_indexes(text, overlapping=True)}:
                found.update(ac_rules[k])
            return sorted(found)
        rules = self._anchor_rules
        for m in self._anchor_scan.finditer(text, timeout=REGEX_TIMEOUT):
            found.update(rules[m.group(1)])
        return sorted(found)

    # -- routing --------------------------------------------------------------------
    def route(self, text: str, previous: str | None = None) -> Route:
        """Refusal rules of every locale, then overview rules, else retrieve.

        Within a scan the leftmost match wins; at one position, the rule written first.
        Locales are tried in ``self.locales`` order. A follow-up is checked alone first,
        then joined with ``previous``:

        1. a refusal match in the joined text that reaches into ``text`` refuses
           ("How much does she" + "charge per day?");
        2. an elliptical follow-up inherits a refusal of ``previous`` ("Is she free in
           May?" + "And in June?"); ``span`` is then None. Elliptical means: it matches
           no rule on its own and has at most ``FOLLOW_UP_SHORT_WORDS`` words, or at
           most ``FOLLOW_UP_MAX_WORDS`` words of which fewer than two are significant,
           by the measure keyword coverage uses (``significant_words``). "What did she
           write about caching?" after a refused question has six words, two of them
           significant ("write", "caching"), and is judged on its own;
        3. overview rules: alone, then a joined match reaching into ``text``.

        A self-contained follow-up ("What are her skills?") is never refused because the
        previous question was.
        """
        _check_input(text, "text")
        if previous is not None:
            _check_input(previous, "previous")
        cur = normalise_with_offsets(text)
        prev = normalise(previous) if previous else ""
        joined = f"{prev} {cur.text}" if prev else ""
        offset = len(prev) + 1
        try:
            alone = self._candidates(cur.text)
            together = self._candidates(joined) if joined else []
            hit = self._scan("refusal", cur.text, 0, alone)
            if hit is None and joined:
                hit = self._scan("refusal", joined, offset, together)
            if hit is not None:
                return self._route("refuse", hit, cur)
            overview = self._scan("overview", cur.text, 0, alone)
            if overview is None and joined and self._elliptical(text):
                inherited = self._scan("refusal", prev, 0, self._candidates(prev))
                if inherited is not None:
                    return self._route("refuse", inherited, None)
            if overview is None and joined:
                overview = self._scan("overview", joined, offset, together)
            if overview is not None:
                return self._route("overview", overview, cur)
        except TimeoutError:
            log.warning("guardlex: a rule scan timed out; the question is refused (fail closed)")
            return Route(kind="refuse", rule_id=TIMEOUT_RULE_ID)
        return Route(kind="retrieve")

    def _elliptical(self, text: str) -> bool:
        """True for a follow-up with no content of its own ("and on weekends?")."""
        from guardlex.normalise import count_words

        words = count_words(text)
        if words <= FOLLOW_UP_SHORT_WORDS:
            return True
        return words <= FOLLOW_UP_MAX_WORDS and len(self.significant_words(text)) < 2

    def significant_words(self, text: str) -> frozenset[str]:
        """The distinct significant words of ``text``, as keyword coverage counts them.

        Normalised keywords (Chinese segmented with jieba) minus the stopwords of every
        loaded locale and the subject's pronouns and names; at least 3 characters, or 2
        for a word of Han characters.
        """
        from guardlex.normalise import is_han, keywords

        if self._ignored_words is None:
            ignored: set[str] = set()
            for code in self._order:
                state = self._states[code]
                ignored |= state.stopwords
                ignored.update(normalise(str(p)) for p in state.lexicon.get("pronouns") or ())
            for name in self.subject_names:
                ignored.update(keywords(name))
            self._ignored_words = frozenset(ignored)
        ignored_words = self._ignored_words
        return frozenset(
            w
            for w in keywords(text)
            if w not in ignored_words and len(w) >= (2 if is_han(w[0]) else 3)
        )

    @staticmethod
    def _route(kind: str, hit: tuple[CompiledRule, int, int], cur: NormalisedLike | None) -> Route:
        rule, start, end = hit
        return Route(
            kind=kind,
            category=rule.category,
            locale=rule.locale,
            rule_id=rule.id,
            span=_span(cur, start, end) if cur is not None else None,
            topic=rule.topic,
        )

    def _scan(
        self, section: str, text: str, offset: int, candidates: list[int]
    ) -> tuple[CompiledRule, int, int] | None:
        """The leftmost match of the first locale with one; ``offset`` > 0: joined text."""
        for code in self._order:
            begin, end = self._ranges[(section, code)]
            best: tuple[int, int, int] | None = None
            for i in candidates:
                if i < begin or i >= end:
                    continue
                pat = self._pattern(i)
                if offset == 0:
                    m = pat.search(text, timeout=REGEX_TIMEOUT)
                    if m is not None and (best is None or m.start() < best[1]):
                        best = (i, m.start(), m.end())
                    continue
                for m in pat.finditer(text, overlapped=True, timeout=REGEX_TIMEOUT):
                    if m.end() > offset:
                        if best is None or m.start() < best[1]:
                            best = (i, m.start(), m.end())
                        break
            if best is not None:
                i, start, stop = best
                return self._flat[i], max(start, offset) - offset, stop - offset
        return None

    # -- first person ---------------------------------------------------------------
    def first_person(self, text: str, locale: str | None = None) -> FirstPersonHit | None:
        """The first first-person word in ``text``, or None.

        With ``locale`` only that locale's lexicon is used (the caller knows the answer's
        language). Without it, the detected language of ``text`` is used, plus the
        locale of every other script present (Cyrillic, Devanagari, Han, Arabic): words
        like Persian من and Arabic من ("from") collide after normalisation, so checking
        every lexicon on every text would flag ordinary sentences.
        """
        _check_input(text, "text")
        if locale is not None:
            codes = [self._state(locale).code]
        else:
            codes = self._first_person_locales(text)
        # Match on the plain normalised text and map offsets only for a hit: the gate
        # calls this once per sentence, and almost every sentence has no hit.
        flat = normalise(text)
        first: tuple[int, int, str] | None = None  # (start, end, locale) in ``flat``
        try:
            for code in codes:
                fp, fx = self._states[code].first_person_patterns()
                if fp is None:
                    continue
                blocked: list[tuple[int, int]] = []
                if fx is not None:
                    blocked = [
                        m.span() for m in fx.finditer(flat, overlapped=True, timeout=REGEX_TIMEOUT)
                    ]
                for m in fp.finditer(flat, overlapped=True, timeout=REGEX_TIMEOUT):
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

    def _first_person_locales(self, text: str) -> list[str]:
        codes = [self.detect_locale(text)]
        for script, locs in _SCRIPT_LOCALES.items():
            code = locs[0]
            if (
                len(locs) == 1
                and code not in codes
                and _SCRIPTS[script].search(text, timeout=REGEX_TIMEOUT)
            ):
                codes.append(code)
        return [c for c in codes if c in self._states]

    # -- language of the reader ------------------------------------------------------
    def detect_locale(self, text: str) -> str:
        """The reader's language, from script and stopword overlap (default "en").

        Used to pick the language of fixed messages; never for routing, which checks
        every locale.
        """
        _check_input(text, "text")
        counts = {name: len(p.findall(text, timeout=REGEX_TIMEOUT)) for name, p in _SCRIPTS.items()}
        script = max(counts, key=lambda k: (counts[k], k == "latn"))
        default = "en" if "en" in self._states else (self._order[0] if self._order else "en")
        if counts[script] == 0:
            return default
        tokens = _TOKEN.findall(normalise(text), timeout=REGEX_TIMEOUT)

        def score(code: str) -> int:
            st = self._states.get(code)
            return sum(1 for t in tokens if t in st.signal_words) if st else -1

        if script in ("han", "deva", "cyrl"):
            code = _SCRIPT_LOCALES[script][0]
            return code if code in self._states else default
        if script == "arab":
            fa = score("fa") + 2 * sum(1 for ch in text if ch in _PERSIAN_ONLY)
            ar = score("ar") + 2 * sum(1 for ch in text if ch in _ARABIC_ONLY)
            if "fa" in self._states and (fa > ar or "ar" not in self._states):
                return "fa"
            return "ar" if "ar" in self._states else default
        latin = [c for c in self._order if c in ("en", "es", "pt", "fr", "de")]
        if not latin:
            return default
        scores = {}
        for c in latin:
            hint = _LATIN_HINTS.get(c, frozenset())
            scores[c] = score(c) + sum(1 for ch in text.lower() if ch in hint)
        best = max(scores.values())
        if "en" in scores and scores["en"] == best:
            return "en"
        return min(c for c, v in scores.items() if v == best)


def _span(cur: NormalisedLike, start: int, end: int) -> tuple[int, int] | None:
    if start >= end:
        return None
    return tuple(cur.source_span(start, end))  # type: ignore[return-value]


def frozen_mapping(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view, so callers cannot change a shared pack by accident."""
    return MappingProxyType(dict(d))
