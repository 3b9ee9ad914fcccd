"""Routing, first-person detection and reader-language detection over compiled packs.

Routing (docs/packs.md): the question is normalised once; one automaton
pass finds every occurrence of every literal, stem, subject pronoun and name of every
rule and concept of every loaded locale (``guardlex.rules.matcher``); rules whose key
occurred are evaluated from those occurrences in precedence order (``docs/packs.md``:
refusal before overview before retrieve; among rules, higher ``priority``, then the
category order engagement, personal_data, speculation, meta, task, then the rule id),
and the first that matches decides. Escape-hatch regexes run only when one of their
anchors occurred.

Every regex call carries a timeout; a timeout fails closed (the question is refused with
``rule_id == TIMEOUT_RULE_ID``) and is logged, because a guardrail that gives up must not
let the question through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import regex

from guardlex.errors import InputTooLargeError, UnknownLocaleError
from guardlex.langid import Detector
from guardlex.langid import identify as identify_locale
from guardlex.normalise import variants
from guardlex.rules import builtins as builtin_concepts
from guardlex.rules._gc import collection_paused
from guardlex.rules._text import (
    WORD_END,
    WORD_START,
    NormalisedLike,
    is_han,
    is_word_char,
    normalise,
    normalise_with_offsets,
)
from guardlex.rules.anchors import trie_source
from guardlex.rules.compile import ZWNJ, literal_source, normalise_literal
from guardlex.rules.first_person import FirstPersonHit
from guardlex.rules.first_person import find as find_first_person
from guardlex.rules.first_person import find_auto as find_first_person_auto
from guardlex.rules.locale_info import LocaleInfo, root_locale, shipped_locale_infos
from guardlex.rules.matcher import Hit, Matcher, Rule, sanitise
from guardlex.rules.typos import Typos, pack_words, read_words

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
#: Overview topics told as a timeline: an elliptical follow-up of such a question goes on
#: with it ("What is she working on now?" + "and before that?"); after a list (projects,
#: talks) it picks one item ("and the second one?") and is answered from the documents.
TIMELINE_TOPICS = frozenset({"now", "career"})
#: ``Route.rule_id`` when a scan timed out: the question is refused (fail closed).
TIMEOUT_RULE_ID = "guardlex-regex-timeout"

KINDS = ("refuse", "overview", "retrieve")
#: The real words of a locale (tools/gen_wordlists.py), next to its locale.yaml.
WORDS_FILE = "words.txt"


@dataclass(frozen=True)
class Evidence:
    """One item that made a rule match: what it is, the text, where it is.

    ``concept`` is a concept name, ``"subject"``, ``"template"`` (a whole template of the
    rule), ``"regex"`` (an escape-hatch regex) or ``"number"``. ``span`` is in the
    original question; None when the item lies in the previous question.
    """

    concept: str
    text: str
    span: tuple[int, int] | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        span = list(self.span) if self.span is not None else None
        return {"concept": self.concept, "text": self.text, "span": span}


@dataclass(frozen=True)
class Route:
    """Where a question goes, and why.

    ``span`` is in the original ``text`` passed to ``route``. When the match was found
    only in the previous question joined with this one, ``span`` covers the part of the
    match that lies in this question; it is ``None`` when a short follow-up inherited the
    refusal of the previous question (the match lies wholly in ``previous``).
    ``evidence`` lists the items that made the rule match; ``about`` is the rule's own
    description, so a refusal explains itself.
    """

    kind: str  # "refuse" | "overview" | "retrieve"
    category: str | None = None  # refusal category, None otherwise
    locale: str | None = None
    rule_id: str | None = None
    span: tuple[int, int] | None = None
    topic: str | None = None  # overview topic, None otherwise
    evidence: tuple[Evidence, ...] = ()
    about: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        d = asdict(self)
        d["span"] = list(self.span) if self.span is not None else None
        d["evidence"] = [e.to_dict() for e in self.evidence]
        return d


@dataclass(frozen=True)
class CompiledRule:
    """A rule as loaded: its id and what it routes to (the program lives in the matcher)."""

    id: str
    locale: str
    section: str
    category: str | None
    topic: str | None
    about: str = ""
    priority: int = 0


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
    program: Mapping[str, Any] = field(default_factory=dict, repr=False)  # compiler output
    #: word tables of guardlex.rules.first_person (plain entries and context groups)
    first_person_words: Mapping[str, Any] = field(default_factory=dict, repr=False)
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


_TOKEN = regex.compile(r"\w+")


class Packs:
    """Loaded and compiled locale packs. Build with ``guardlex.load_packs``."""

    def __init__(
        self,
        states: Sequence[LocaleState],
        subject_names: Sequence[str] = (),
        infos: Mapping[str, LocaleInfo] | None = None,
    ) -> None:
        self._states = {s.code: s for s in states}
        self._order = tuple(s.code for s in states)
        # locale facts (locale.yaml); the shipped ones when the caller gives none
        known = shipped_locale_infos() if infos is None else infos
        self._infos = {c: known.get(c) or LocaleInfo(code=c) for c in self._order}
        self.subject_names = tuple(subject_names)
        self._function: frozenset[str] | None = None
        self._ignored_words: frozenset[str] | None = None
        self._words: Collection[str] | None = None
        self._name_stop: frozenset[str] | None = None
        self._closings: regex.Pattern[str] | None = None
        self._continuations: regex.Pattern[str] | None = None
        #: per locale with ``follow_ups.now``: its phrases and its overview rule of topic now
        self._now: list[tuple[regex.Pattern[str], Rule]] | None = None
        self._matcher: Matcher | None = None
        self._routed = False  # whether a question was routed (``route``)
        self._typo: Typos | None = None

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
        """Build the automaton and compile every regex now rather than on first use."""
        m = self.matcher()
        m.compile_regexes()
        for st in self._states.values():
            st.first_person_patterns()

    def match_rule(self, locale: str, rule_id: str, text: str) -> Route | None:
        """The match of one active rule alone in ``text`` (for tests and the linter), or None.

        Unlike ``route`` no other rule competes and no follow-up logic applies: this
        answers "does this rule catch this text", e.g. for its ``no_match`` examples.
        """
        _check_input(text, "text")
        m = self.matcher()
        rules = [r for r in m.rules if r.locale == locale and r.id == rule_id]  # active only
        cur = normalise_with_offsets(text)
        occ = m.occurrences(sanitise(cur.text))
        for rule in rules:
            hit = m.evaluate(rule, occ)
            if hit is not None:
                kind = "refuse" if rule.section == "refusal" else "overview"
                return self._route(kind, hit, cur, text, 0)
        return None

    def matcher(self) -> Matcher:
        """The one matcher over every loaded locale (built on first use)."""
        if self._matcher is None:
            titles = {
                c: (tuple(self._infos[c].titles), tuple(self._infos[c].titles_after))
                for c in self._order
            }
            with collection_paused():  # many small acyclic objects
                m = Matcher(
                    [self._states[c].program for c in self._order],
                    self.subject_names,
                    titles,
                    timeout=lambda: REGEX_TIMEOUT,  # read at each call (tests lower it)
                    name_min_words={c: self._infos[c].name_min_words for c in self._order},
                )  # the automaton itself is built on first use (``Matcher._build``)
            self._matcher = m
        return self._matcher

    # -- routing --------------------------------------------------------------------
    def route(self, text: str, previous: str | None = None) -> Route:
        """Refusal rules of every locale, then overview rules, else retrieve.

        Among matching rules the precedence of ``docs/packs.md`` decides (``priority``,
        then the leftmost match, then category order, then file order), whatever
        locales are loaded. A refusal from a locale other than the question's language
        is dropped when that language's own guards of the category occur
        (``Matcher.guarded_in``), unless the question holds more words that only the
        rule's locale knows than words only the identified language knows (``_speaks``:
        romanized Hindi is often identified as German). In this order:

        1. the question alone; then each disguised reading of it
           (``guardlex.normalise.variants``): a refusal in any reading wins, ``span``
           None, unless one of the rule's own guards occurs in the question as typed;
        2. overview rules on the question alone (a complete overview question stands on
           its own);
        3. with ``previous``: a refusal match in the joined text that adds a content
           word of the follow-up ("How much does she" + "charge per day?"); when
           ``previous`` alone is refused, only for an elliptical follow-up or one with no
           content of its own ("and for a team of ten?"), since a longer one with
           content of its own is a new question ("ok, and which reranker did that
           project use?");
        4. an elliptical follow-up inherits a refusal of ``previous`` ("Is she free in
           May?" + "And in June?"); ``span`` is then None. Elliptical means: it has at
           most ``FOLLOW_UP_SHORT_WORDS`` words, or at most ``FOLLOW_UP_MAX_WORDS``
           words of which fewer than two are significant (``significant_words``), and
           no content concept (``Matcher.content_concepts``: what guards and overview
           rules use) occurs in it with a content word;
        5. overview rules on the joined text, when the follow-up adds a content word;
        6. an elliptical follow-up with no content of its own, after a question routed
           to an overview told as a timeline (``TIMELINE_TOPICS``), inherits that route
           ("What is she working on these days?" + "and before that?"); ``span`` is
           then None;
        7. an elliptical follow-up made only of phrases that ask about the present
           (``locale.yaml`` ``follow_ups.now``: "and now?", "lately?", "最近呢？") and
           stopwords, after a question that was not refused, is routed to the overview
           rule of topic ``now`` of that phrase's locale ("What did she do at Quillmark?"
           + "and now?"); ``span`` is then None.

        A self-contained follow-up ("What are her skills?") is never refused because the
        previous question was, and an acknowledgement made only of closings of the
        loaded locales (``locale.yaml`` ``follow_ups.closings``: "ok thanks", "好的，谢谢")
        and the subject's names continues nothing: steps 3 to 7 are skipped.
        """
        if self._routed:
            return self._route_question(text, previous)
        with collection_paused():  # the first question builds the automatons and tables
            got = self._route_question(text, previous)
        self._routed = True
        return got

    def _route_question(self, text: str, previous: str | None) -> Route:
        """``route``."""
        _check_input(text, "text")
        if previous is not None:
            _check_input(previous, "previous")
        cur = normalise_with_offsets(text)
        ctext = sanitise(cur.text)
        prev = sanitise(normalise(previous)) if previous else ""
        joined = f"{prev} {ctext}" if prev else ""
        offset = len(prev) + 1
        m = self.matcher()
        try:
            found = builtin_concepts.lazy(
                lambda: builtin_concepts.find(text, cur, self._name_ignored())
            )
            language: list[str] = []  # the question's language, found once if needed
            alone = m.occurrences(ctext, found)
            typed_veto = self._foreign_veto(m, alone, text, language)
            hit = m.route_section(alone, "refusal", veto=typed_veto)
            if hit is not None:
                return self._route("refuse", hit, cur, text, 0)

            def reading_veto(seen: Any) -> Callable[[Any], bool]:
                # the guards of the question as typed count in every reading of it, the
                # rule's own and those of the question's language
                foreign = self._foreign_veto(m, seen, text, language)
                return lambda rule: (
                    bool(foreign(rule)) or m.guard_occurs(alone, rule) or bool(typed_veto(rule))
                )

            for reading in variants(text, self._variant_words())[1:]:
                # a disguised question ("p r i c e", "pr1ce", "%70rice"): refusal wins
                seen = m.occurrences(sanitise(reading), builtin_concepts.lazy_find(reading))
                hit = m.route_section(seen, "refusal", veto=reading_veto(seen))
                if hit is not None:
                    return self._route("refuse", hit, None, reading, 0)
            overview = m.route_section(alone, "overview")
            if overview is not None:  # a complete overview question stands on its own
                return self._route("overview", overview, cur, text, 0)
            typo = self._typos().reading(ctext)
            if typo is not None:  # "how much does she chrage": read as the pack word
                seen = m.occurrences(typo, builtin_concepts.lazy_find(typo))
                veto = reading_veto(seen)
                for section, kind in (("refusal", "refuse"), ("overview", "overview")):
                    hit = m.route_section(seen, section, veto=veto)
                    if hit is not None:
                        return self._route(kind, hit, None, typo, 0)
            together = None
            prev_found = builtin_concepts.lazy_find(prev)
            if joined and not self._closing(ctext):
                # an acknowledgement ("ok thanks", "好的，谢谢") continues nothing
                together = m.occurrences(
                    joined,
                    builtin_concepts.lazy(
                        lambda: builtin_concepts.joined(
                            prev_found(), builtin_concepts.shifted(found(), offset)
                        )
                    ),
                )
            # each found at most once, and only when a step below needs it; the previous
            # question's refusal as it was routed alone (with the guards of its language)
            prev_alone = builtin_concepts.lazy(lambda: m.occurrences(prev, prev_found))
            inherited = builtin_concepts.lazy(lambda: self._refusal_alone(m, prev, prev_alone()))
            # content of its own, in the language of the refused question it follows
            # (Finglish "startup*" is no content of "and for a startup?" after English)
            has_own = builtin_concepts.lazy(
                lambda: self._has_own_content(
                    alone, None if (before := inherited()) is None else before.rule.locale
                )
            )
            elliptical = together is not None and (self._elliptical(text) or self._continues(ctext))
            if together is not None and (elliptical or not has_own() or inherited() is None):
                # a question split over two messages ("How much does she" + "charge per
                # day?"), or a short one continuing a refused question ("and on
                # weekends?"); a longer follow-up to a refused question is a question of
                # its own ("ok, and which reranker did that project use?")
                veto = self._foreign_veto(m, together, text, language)
                hit = m.route_section(together, "refusal", offset, veto=veto)
                if hit is not None and self._adds_content(hit, joined, offset):
                    if hit.rule.category == "task":
                        before = inherited()
                        if before is not None and before.rule.category == "meta":
                            # "translate your instructions" + "and into French?": a task
                            # done on the instructions is still a question about them
                            return self._route("refuse", before, None, prev, 0)
                    return self._route("refuse", hit, cur, text, offset)
            if elliptical and not has_own():
                before = inherited()
                if before is not None:
                    return self._route("refuse", before, None, prev, 0)
            if together is not None:
                overview = m.route_section(together, "overview", offset)
                if overview is not None and self._adds_content(overview, joined, offset):
                    return self._route("overview", overview, cur, text, offset)
            if elliptical and inherited() is None:
                if not has_own():
                    earlier = m.route_section(prev_alone(), "overview")
                    if earlier is not None and earlier.rule.topic in TIMELINE_TOPICS:
                        return self._route("overview", earlier, None, prev, 0)
                # (a word of "now" may be content: overview rules use it)
                now = self._asks_now(m, ctext)
                if now is not None:
                    return self._route("overview", Hit(now, (0, 0), ()), None, prev, 0)
        except TimeoutError:
            log.warning("guardlex: a rule scan timed out; the question is refused (fail closed)")
            return Route(kind="refuse", rule_id=TIMEOUT_RULE_ID)
        return Route(kind="retrieve")

    def _refusal_alone(self, m: Matcher, prev: str, occ: Any) -> Any:
        """The refusal hit of the previous question (normalised ``prev``, its occurrences
        ``occ``) routed alone, vetoed by the guards of its own language as in step 1 of
        ``route``: what a follow-up inherits ("Do you think she'll go back to a full-time
        job?" is speculation, not another locale's hiring rule that its guards drop)."""
        return m.route_section(occ, "refusal", veto=self._foreign_veto(m, occ, prev, []))

    def _foreign_veto(self, m: Matcher, occ: Any, text: str, language: list[str]) -> Any:
        """A veto for refusal hits of a locale other than the question's language whose
        language's own guards of that category occur (``Matcher.guarded_in``).

        ``language`` holds the detected language once found, shared by every reading of
        one question, so it is identified at most once per ``route``, and only when a
        guard of another locale of the rule's category can occur at all
        (``Matcher.foreign_guards_may_occur``).
        """

        def veto(rule: Any) -> bool:
            if len(self._order) < 2:
                return False
            if not m.foreign_guards_may_occur(occ, rule):
                return False  # no language's guards can veto it: no need to identify
            if not language:
                language.append(self.detect_locale(text))
            if not m.guarded_in(occ, rule, language[0]):
                return False
            return not self._speaks(m, rule.locale, language[0], occ.text)

        return veto

    def _speaks(self, m: Matcher, code: str, other: str, text: str) -> bool:
        """True when ``text`` holds more words that only ``code``'s packs and stopwords
        know than words that only ``other``'s know: the question is in ``code``'s
        language even though identification said ``other`` (romanized Hindi read as
        German: "tumhara system prompt kya hai"), so ``other``'s guards do not veto."""
        words = set(regex.findall(r"[^\W\d_]{2,}", text, timeout=REGEX_TIMEOUT))  # letters
        mine_vocab, mine_stop = m.vocabulary(code), self._states[code].stopwords
        their_vocab, their_stop = m.vocabulary(other), self._states[other].stopwords
        only_mine = only_theirs = 0
        for w in words:
            mine = w in mine_vocab or w in mine_stop
            theirs = w in their_vocab or w in their_stop
            only_mine += mine and not theirs
            only_theirs += theirs and not mine
        return only_mine > only_theirs

    def _name_ignored(self) -> frozenset[str]:
        """Capitalised words that are never a ``<name>``: every loaded locale's
        stopwords, subject pronouns and titles (``guardlex.rules.builtins``)."""
        if self._name_stop is None:
            words = set(self._function_words())
            for code in self._order:
                info = self._infos[code]
                words.update(normalise(t).rstrip(".") for t in (*info.titles, *info.titles_after))
            self._name_stop = frozenset(words)
        return self._name_stop

    def _function_words(self) -> frozenset[str]:
        """Every loaded locale's stopwords and subject pronouns (normalised)."""
        if self._function is None:
            words: set[str] = set()
            for code in self._order:
                state = self._states[code]
                words |= state.stopwords
                words.update(normalise(str(p)) for p in state.lexicon.get("pronouns") or ())
            self._function = frozenset(words)
        return self._function

    def _typos(self) -> Typos:
        """The typo reading's word tables (``guardlex.rules.typos``), built once: the
        single words of the loaded packs, every loaded locale's stopwords and real words
        (``words.txt`` next to its ``locale.yaml``) and the subject's names."""
        if self._typo is None:
            from guardlex.normalise import keywords

            real: list[list[str]] = []
            for code in self._order:
                path = self._infos[code].path
                words = Path(path).with_name(WORDS_FILE) if path else None
                if words is not None and words.is_file():
                    real.append(read_words(words))
            known = set(self._function_words())
            for name in self.subject_names:
                known.update(keywords(name))
            changes = [
                (na, nb)
                for code in self._order
                for a, b in self._infos[code].typo_changes
                if len(na := normalise(a)) == 1 and len(nb := normalise(b)) == 1
            ]
            self._typo = Typos(pack_words(self.matcher().words()), known, real, changes)
        return self._typo

    def _variant_words(self) -> Collection[str]:
        """Normalised words of every loaded pack, for re-reading disguised questions
        (their stopwords and the one-word automaton strings; ``Matcher.word_set``: the
        automaton strings are gathered on the first look-up, which most questions never
        make)."""
        if self._words is None:
            words: set[str] = set()
            for code in self._order:
                words.update(self._states[code].stopwords)
            self._words = self.matcher().word_set(frozenset(words))
        return self._words

    def _adds_content(self, hit: Hit, joined: str, offset: int) -> bool:
        """A match across the join counts only if the follow-up adds a content word to it.

        "How much does she" + "charge for that?" adds "charge"; "Is she married?" + "How
        did she tune Elasticsearch?" adds only the pronoun, so it is judged on its own.
        """
        for _name, (s, e) in hit.evidence:
            if e > offset and self.significant_words(joined[max(s, offset) : e]):
                return True
        return False

    def _has_own_content(self, occ: Any, locale: str | None = None) -> bool:
        """True when a content concept of some loaded locale (``Matcher.content_concepts``:
        one that guards or overview rules use) occurs in the follow-up with a content word
        ("what about her caching article?" names an article), so the follow-up is judged
        on its own instead of inheriting the previous refusal. Trigger words alone (a
        month, a language name: "and June?", "in French?") and names are no content.
        With ``locale`` (the locale of the refusal it would inherit), only that
        locale's content concepts count: the follow-up continues that conversation."""
        m = occ.m
        names = [(s, e) for s, e, _ in occ.builtins.names]
        present = occ.present
        content = m.content_concepts()
        chosen = m.concepts.items() if locale is None else [(locale, m.concepts.get(locale, {}))]
        for code, concepts in chosen:
            for name in concepts:
                if (code, name) not in content:
                    continue
                keys = m.concept_keys(code, name)
                if keys is not None and keys.isdisjoint(present):
                    continue  # none of the keys its forms need occurred: it cannot occur
                for s, e in occ.concept(code, name):
                    if any(a <= s and e <= b for a, b in names):
                        continue  # a name is no topic: "and June?", "what about Karpathy?"
                    if self.significant_words(occ.text[s:e]):
                        return True
        return False

    def _closing(self, text: str) -> bool:
        """True when normalised ``text`` holds nothing but closings of the loaded locales
        (``locale.yaml`` ``follow_ups.closings``: "ok thanks", "merci !", "好的，谢谢") and the
        subject's names: an acknowledgement, which never inherits a refusal."""
        if self._closings is None:
            words: set[str] = set()
            for code in self._order:
                words.update(normalise(w) for w in self._infos[code].closings)
            for name in self.subject_names:
                words.update(normalise(name).split())
            self._closings = regex.compile(words_source(sorted(w for w in words if w)))
        if not any(ch.isalnum() for ch in text):
            return False
        rest = self._closings.sub(" ", text, timeout=REGEX_TIMEOUT)
        return not any(ch.isalnum() for ch in rest)

    def _continues(self, text: str) -> bool:
        """True when normalised ``text`` holds a continuation of a loaded locale
        (``locale.yaml`` ``follow_ups.continuations``: "the same in English", "go on",
        "et maintenant la même chose"): it asks for more of the previous question."""
        if self._continuations is None:
            words = {normalise(w) for code in self._order for w in self._infos[code].continuations}
            self._continuations = regex.compile(words_source(sorted(words)))
        return self._continuations.search(text, timeout=REGEX_TIMEOUT) is not None

    def _asks_now(self, m: Matcher, text: str) -> Rule | None:
        """The overview rule of topic ``now`` of the locale whose ``follow_ups.now``
        phrase (``locale.yaml``: "and now?", "lately?", "最近呢？") normalised ``text`` holds
        with no significant word besides, or None."""
        if self._now is None:
            self._now = []
            for code in self._order:
                words = sorted({normalise(w) for w in self._infos[code].now} - {""})
                rule = next(
                    (
                        r
                        for r in m.rules
                        if r.locale == code and r.section == "overview" and r.topic == "now"
                    ),
                    None,
                )
                if words and rule is not None:
                    self._now.append((regex.compile(words_source(words)), rule))
        for pattern, rule in self._now:
            if pattern.search(text, timeout=REGEX_TIMEOUT) is None:
                continue
            rest = pattern.sub(" ", text, timeout=REGEX_TIMEOUT)
            if not self.significant_words(rest):
                return rule
        return None

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
            ignored = set(self._function_words())
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
    def _route(
        kind: str, hit: Hit, cur: NormalisedLike | None, original: str, offset: int
    ) -> Route:
        """A Route from a hit; spans in the joined text are shifted by ``offset``."""
        rule = hit.rule
        start, end = hit.span
        span = None
        if cur is not None:
            span = _span(cur, max(start, offset) - offset, end - offset)
        evidence = []
        for concept, (s, e) in hit.evidence:
            if cur is None:  # inherited: the items are in the previous question
                evidence.append(Evidence(concept, original[s:e], None))
                continue
            if e <= offset:
                continue
            sp = _span(cur, max(s, offset) - offset, e - offset)
            text = original[sp[0] : sp[1]] if sp is not None else ""
            evidence.append(Evidence(concept, text, sp))
        return Route(
            kind=kind,
            category=rule.category,
            locale=rule.locale,
            rule_id=rule.id,
            span=span,
            topic=rule.topic,
            evidence=tuple(evidence),
            about=rule.about or None,
        )

    # -- first person (guardlex.rules.first_person) --------------------------------------
    def first_person(self, text: str, locale: str | None = None) -> FirstPersonHit | None:
        """The first first-person word in ``text``, or None.

        With ``locale`` only that locale's lexicon is used (the caller knows the answer's
        language). Without it, the identified language of ``text`` is used, plus every
        locale that alone writes a script present in it; see ``guardlex.rules.first_person``.
        """
        _check_input(text, "text")
        if locale is not None:
            return find_first_person(self._states, [self._state(locale).code], text, REGEX_TIMEOUT)
        default = root_locale(self._infos, self._order) or "en"
        return find_first_person_auto(
            self._states, text, self._infos, self._order, self.detect_locale, default, REGEX_TIMEOUT
        )

    def locale_info(self, locale: str) -> LocaleInfo:
        """The facts of a loaded locale (its ``locale.yaml``)."""
        self._state(locale)  # UnknownLocaleError for a locale that is not loaded
        return self._infos[locale]

    # -- language of the reader (guardlex.langid) ----------------------------------------
    #: the ``guardlex.langid`` detector used among locales of one script (None: default)
    language_detector: Detector | None = None

    def detect_locale(self, text: str) -> str:
        """The reader's language among the loaded locales (``guardlex.langid.identify``).

        Used to pick the language of fixed messages and first-person lexicons; never for
        routing, which checks every locale.
        """
        _check_input(text, "text")
        tokens: list[str] | None = None

        def count(code: str, shortest: int) -> int:
            nonlocal tokens
            if tokens is None:
                tokens = _TOKEN.findall(normalise(text), timeout=REGEX_TIMEOUT)
            st = self._states.get(code)
            if st is None:
                return -1
            return sum(1 for t in tokens if len(t) >= shortest and t in st.signal_words)

        def score(code: str) -> int:
            return count(code, 1)

        def long_score(code: str) -> int:  # stopwords of 3+ letters ("e", "ba" say little)
            return count(code, 3)

        default = root_locale(self._infos, self._order) or "en"
        return identify_locale(
            text,
            self._infos,
            self._order,
            default=default,
            detector=self.language_detector,
            word_score=score,
            long_word_score=long_score,
        )


def _span(cur: NormalisedLike, start: int, end: int) -> tuple[int, int] | None:
    if start >= end:
        return None
    return tuple(cur.source_span(start, end))  # type: ignore[return-value]


def frozen_mapping(d: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view, so callers cannot change a shared pack by accident."""
    return MappingProxyType(dict(d))
