"""The streaming sentence gate: hold text until a sentence ends, check it, release it.

Four checks, each a fact about strings (docs/gates.md), in this order:

1. ``marker_out_of_range``: every citation marker ``[n]`` names a supplied source
   (``1 <= n <= len(sources)``; ``[1][3]`` and ``[1, 3]`` cite two);
2. ``first_person``: no first-person word (``Packs.first_person``, in the reader's
   locale when the gate knows it, else the sentence's own);
3. ``marker_missing``: a sentence with a value, or with at least ``min_words`` words
   (``count_words``), carries a marker; a short connective sentence may pass without;
4. ``unsupported_value``: every number, URL and e-mail address occurs as a whole token
   in a *cited* source, after normalisation (``۲۰`` is ``20``, ``1,500`` is ``1500``,
   ``20`` is not supported by ``2025`` or ``200``).

Then, with ``forbidden=True`` (the default), ``forbidden_content``: a rate, an e-mail
address or a phone number said of the subject is stopped even when a cited source
contains it (``guardlex.gates.forbidden``).

With ``faithful=True`` (the default) a sentence that passed those is also audited
against its cited sources for a changed unit, a flipped polarity, an "unlimited" given
as a number and a number moved to another subject, with the codes of ``audit``.

On a violation the sentences already released stay, the violating one is never
released, the cancellation hook runs, and the reader gets the fixed gate-stop message;
a stream that ends mid-sentence gets the truncation notice instead.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any

import regex

from guardlex.gates._text import (
    TIMEOUT,
    check_size,
    count_words,
    normalise,
    normalise_with_offsets,
    require_str,
    require_texts,
    supported,
    value_keys,
    values,
)
from guardlex.gates._vocab import default_packs, vocab_for
from guardlex.gates.errors import GateSettingError
from guardlex.gates.forbidden import Forbidden
from guardlex.gates.numerals import with_numerals
from guardlex.gates.segment import MARKER, MAX_SENTENCE_CHARS, Segmenter
from guardlex.gates.types import (
    FIRST_PERSON,
    FORBIDDEN_CONTENT,
    MARKER_MISSING,
    MARKER_OUT_OF_RANGE,
    NUMBER_NOT_IN_QUOTE,
    SENTENCE_TOO_LONG,
    UNSUPPORTED_VALUE,
    Event,
    PacksLike,
    Released,
    Stopped,
    Truncated,
    Verdict,
)
from guardlex.rules.locale_info import (
    LocaleInfo,
    root_locale,
    shipped_locale_infos,
    shipped_messages,
)

log = logging.getLogger("guardlex.gates")

#: A sentence with at least this many words (``count_words``) is substantive and needs a
#: marker. Shorter sentences without values ("In short:", "Here are the details.") pass.
MIN_WORDS = 6
#: Limits: characters per source and for all sources together.
MAX_SOURCE_CHARS = 1_000_000
MAX_SOURCES_CHARS = 5_000_000
#: Limits: number of sources, number of subject names and characters per subject name.
MAX_SOURCES = 10_000
MAX_SUBJECTS = 1_000
MAX_SUBJECT_CHARS = 1_000

_MARKER_WITH_SPACE = regex.compile(r"[ \t\u00a0\u202f\u3000]*" + MARKER.pattern)
_MARKER_OPENERS = frozenset("[［【")

#: The answer's language is detected on its first characters (at least this many), then kept.
LOCALE_SAMPLE_CHARS = 400


def _info(packs: Any, locale: str) -> LocaleInfo | None:
    """The facts (locale.yaml) of ``locale``: from the packs when they know it, else shipped."""
    getter = getattr(packs, "locale_info", None)
    if getter is not None:
        try:
            info: LocaleInfo = getter(locale)
            if info.path:
                return info
        except LookupError:
            pass
    return shipped_locale_infos().get(locale) or shipped_locale_infos().get(locale.split("-")[0])


def _foreign_letter(scripts: tuple[str, ...]) -> regex.Pattern[str]:
    inside = "".join(r"\p{sc=" + s + "}" for s in scripts)
    return regex.compile(r"(?=\p{L})[^" + inside + "]")


_FOREIGN_LETTER: dict[tuple[str, ...], regex.Pattern[str]] = {}


def _other_script(text: str, scripts: tuple[str, ...]) -> bool:
    """Whether ``text`` has a letter outside ``scripts`` (ISO 15924, from locale.yaml)."""
    scripts = scripts or ("Latn",)
    if scripts == ("Latn",) and text.isascii():
        return False
    pattern = _FOREIGN_LETTER.get(scripts)
    if pattern is None:
        pattern = _FOREIGN_LETTER.setdefault(scripts, _foreign_letter(scripts))
    return pattern.search(text, timeout=TIMEOUT) is not None


def strip_markers(text: str) -> str:
    """The text as a reader sees it: citation markers and the space before them removed."""
    return _MARKER_WITH_SPACE.sub("", text, timeout=TIMEOUT)


def _marker_numbers(marker: str) -> list[int]:
    """The source numbers a marker cites: ``[1, ３]`` -> ``[1, 3]`` (any script's digits)."""
    numbers = []
    digits = ""
    for ch in marker:
        if ch.isdecimal():
            digits += ch
        elif digits:
            numbers.append(int(digits))
            digits = ""
    if digits:
        numbers.append(int(digits))
    return numbers


class SentenceGate:
    """Check sentences of a model's answer against the numbered sources it was given.

    ``sources`` are the texts shown to the model as ``[1]``, ``[2]`` ... in order. Their
    value tokens are computed once here, so ``check`` costs one normalisation of the
    sentence. ``packs`` default to the shipped packs. ``locale`` is the reader's locale
    (for the first-person list and the fixed messages); without it both follow the
    detected language of the text. ``on_cancel`` is called once when a stream is
    stopped, so the caller can cancel generation.
    """

    def __init__(
        self,
        sources: Sequence[str],
        packs: PacksLike | None = None,
        locale: str | None = None,
        min_words: int = MIN_WORDS,
        on_cancel: Callable[[], Any] | None = None,
        *,
        faithful: bool = True,
        forbidden: bool = True,
        subjects: Sequence[str] = (),
        max_sentence_chars: int = MAX_SENTENCE_CHARS,
    ) -> None:
        sources = require_texts(sources, "sources", limit=MAX_SOURCES)
        require_str(locale, "locale", optional=True)
        subjects = require_texts(subjects, "subjects", limit=MAX_SUBJECTS)
        for i, name in enumerate(subjects, 1):
            check_size(name, MAX_SUBJECT_CHARS, f"subject {i}")
        for i, src in enumerate(sources, 1):
            check_size(src, MAX_SOURCE_CHARS, f"source [{i}]")
        check_size(sum(len(s) for s in sources), MAX_SOURCES_CHARS, "the sources together")
        if min_words < 1:
            raise GateSettingError(f"min_words must be at least 1, not {min_words}")
        if max_sentence_chars < 1:
            raise GateSettingError(f"max_sentence_chars must be positive, not {max_sentence_chars}")
        self.sources = tuple(sources)
        self.packs: PacksLike = packs if packs is not None else default_packs()
        self.locale = locale
        if locale is not None:
            self.packs.messages(locale)  # an unknown locale fails here, not mid-stream
        self.min_words = min_words
        self.on_cancel = on_cancel
        self.max_sentence_chars = max_sentence_chars
        self._vocab = vocab_for(self.packs)
        self._keys = [self._source_keys(normalise(s)) for s in self.sources]
        self._union: dict[tuple[int, ...], frozenset[str]] = {}
        self._fp_takes_locale = "locale" in inspect.signature(self.packs.first_person).parameters
        self._forbidden = Forbidden(self.packs, self._vocab) if forbidden else None
        self._auditor = None
        if faithful:
            from guardlex.gates.faith.auditor import Auditor

            self._auditor = Auditor(self.sources, packs=self.packs, subjects=subjects)

    # -- one sentence -----------------------------------------------------------------
    def check(self, sentence: str) -> Verdict:
        """The verdict on one complete sentence (markers included, as the model wrote it)."""
        require_str(sentence, "sentence")
        check_size(sentence, self.max_sentence_chars, "the sentence")
        return self._verdict(sentence)

    def _verdict(self, sentence: str, answer_locale: str | None = None) -> Verdict:
        text = sentence.strip()
        cited: list[int] = []
        plain = text
        if not _MARKER_OPENERS.isdisjoint(text):
            for m in MARKER.finditer(text, timeout=TIMEOUT):
                for n in _marker_numbers(m.group()):
                    if not 1 <= n <= len(self.sources):
                        return Verdict(False, MARKER_OUT_OF_RANGE, m.group())
                    if n not in cited:
                        cited.append(n)
            if cited:
                plain = strip_markers(text)
        if not plain.strip():
            return Verdict(True)
        norm = normalise(plain)
        found = values(norm, skip_enumerator=True)
        if self._vocab.numeral_digits:  # Chinese numerals of two or more characters: 二十
            found = with_numerals(norm, found, self._vocab, min_han=2)
        hit = self._first_person(plain, answer_locale)
        if hit is not None:
            return Verdict(False, FIRST_PERSON, hit.word)
        if not cited:
            if found or count_words(plain) >= self.min_words:
                return Verdict(False, MARKER_MISSING, "")
            return Verdict(True)
        if found:
            keys = self._cited_keys(tuple(cited))
            for v in found:
                if not supported(v, keys):
                    # offsets are costly, so they are computed only to report a violation
                    a, b = normalise_with_offsets(plain).source_span(v.start, v.end)
                    return Verdict(False, UNSUPPORTED_VALUE, plain[a:b].strip() or v.text)
        # what must never be said, even when a cited (poisoned) source supports it: a rate,
        # an e-mail address or a phone number of the subject
        if self._forbidden is not None:
            span = self._forbidden.check(plain, norm, found)
            if span is not None:
                a, b = normalise_with_offsets(plain).source_span(*span)
                return Verdict(False, FORBIDDEN_CONTENT, plain[a:b].strip() or norm[slice(*span)])
        if self._auditor is not None and self._auditor.relevant(
            norm, any(v.kind == "number" for v in found)
        ):
            problems = self._auditor.audit(
                plain,
                which=[n - 1 for n in cited],
                numbers=False,
                one_sentence=True,
                prepared=(norm, found),
            )
            if problems:
                code = problems[0].code
                # a number written as a word that no cited source has ("twenty seats")
                if code == NUMBER_NOT_IN_QUOTE:
                    code = UNSUPPORTED_VALUE
                return Verdict(False, code, problems[0].token)
        return Verdict(True)

    def _source_keys(self, norm: str) -> frozenset[str]:
        """The comparable keys of a source's values, numerals and number words included
        (a source's "twenty seats" or 二十 supports an answer's 20)."""
        keys = value_keys(norm)
        extra = with_numerals(norm, [], self._vocab, min_han=1, words=True)
        if not extra:
            return keys
        return keys | {f"number:{k}" for v in extra for k in v.keys}

    def _cited_keys(self, cited: tuple[int, ...]) -> frozenset[str]:
        keys = self._union.get(cited)
        if keys is None:
            keys = frozenset().union(*(self._keys[n - 1] for n in cited))
            if len(self._union) < 256:
                self._union[cited] = keys
        return keys

    def _first_person(self, text: str, answer_locale: str | None = None) -> Any:
        """The reader's locale when known; else the locale detected on the whole answer so
        far (a short sentence such as "Eu acho [1]." is hard to detect alone), plus the
        packs' own per-sentence choice when the sentence has letters of another script
        (an English answer quoting a Russian "Я думаю")."""
        if not self._fp_takes_locale:
            return self.packs.first_person(text)
        if self.locale is not None:
            return self.packs.first_person(text, locale=self.locale)
        if answer_locale is None:
            return self.packs.first_person(text)
        hit = self.packs.first_person(text, locale=answer_locale)
        info = _info(self.packs, answer_locale)
        if hit is None and _other_script(text, info.scripts if info else ()):
            hit = self.packs.first_person(text)
        return hit

    def message(self, key: str, text: str = "") -> tuple[str, str]:
        """The fixed message ``key`` in the reader's locale, and that locale."""
        locale = self.locale or (self.packs.detect_locale(text) if text.strip() else "")
        infos = shipped_locale_infos()
        locale = locale or root_locale(infos) or "en"
        chain = [locale]
        info = _info(self.packs, locale)
        while info is not None and info.fallback and info.fallback not in chain:
            chain.append(info.fallback)  # locale.yaml 'fallback': whose messages fill gaps
            info = _info(self.packs, info.fallback)
        for loc in chain:
            try:
                msg = self.packs.messages(loc).get(key)
            except LookupError:
                msg = None
            if msg:
                return str(msg).strip(), loc
        for loc in chain[1:]:  # a fallback locale that is not loaded: its shipped text
            msg = shipped_messages(loc).get(key)
            if msg:
                return str(msg).strip(), loc
        return key, locale

    # -- streams ------------------------------------------------------------------------
    def open(self) -> GateStream:
        """A push-style stream: ``feed(chunk)`` and ``finish()`` return events."""
        return GateStream(self)

    def stream(self, chunks: Iterable[str]) -> Iterator[Event]:
        """Gate a stream of text chunks; yields ``Released``, then at most one ``Stopped``
        or ``Truncated``. After a stop the chunk iterator is closed (when it can be)."""
        run = self.open()
        iterator = iter(chunks)
        try:
            for chunk in iterator:
                yield from run.feed(chunk)
                if run.done:
                    return
            yield from run.finish()
        finally:
            if run.stopped:
                close = getattr(iterator, "close", None)
                if callable(close):
                    close()

    async def astream(self, chunks: AsyncIterable[str]) -> AsyncIterator[Event]:
        """The async variant of ``stream`` for async token streams."""
        run = self.open()
        iterator = chunks.__aiter__()
        try:
            async for chunk in iterator:
                for event in run.feed(chunk):
                    yield event
                if run.done:
                    return
            for event in run.finish():
                yield event
        finally:
            if run.stopped:
                aclose = getattr(iterator, "aclose", None)
                if callable(aclose):
                    await aclose()


class GateStream:
    """One answer passing through a gate, fed chunk by chunk (see ``SentenceGate.open``)."""

    def __init__(self, gate: SentenceGate) -> None:
        self.gate = gate
        self._seg = Segmenter(gate._vocab.is_abbreviation, max_chars=gate.max_sentence_chars)
        self._seen: list[str] = []
        self._seen_chars = 0
        self._answer_locale: str | None = None
        self._detected_at = 0
        self.done = False
        self.stopped = False

    def feed(self, chunk: str) -> list[Event]:
        """Add a chunk; return the events it completes (nothing after a stop)."""
        if self.done:
            return []
        if not isinstance(chunk, str):
            raise TypeError(f"chunks must be str, not {type(chunk).__name__}")
        events = self._handle(self._seg.feed(chunk))
        if not self.done and self._seg.too_long:
            events.append(self._stop(SENTENCE_TOO_LONG, "", self._seg.pending))
        return events

    def finish(self) -> list[Event]:
        """End of stream: the last sentences, then a ``Truncated`` for an unfinished tail."""
        if self.done:
            return []
        sentences, tail = self._seg.finish()
        events = self._handle(sentences)
        if self.done:
            return events
        if self._seg.too_long:
            events.append(self._stop(SENTENCE_TOO_LONG, "", tail))
            return events
        self.done = True
        if tail:
            message, locale = self.gate.message("truncated", "".join(self._seen) + tail)
            events.append(Truncated(message, tail.strip(), locale))
        return events

    def _handle(self, pieces: list[str]) -> list[Event]:
        events: list[Event] = []
        for piece in pieces:
            verdict = self.gate._verdict(piece, self._locale_with(piece))
            if not verdict.ok:
                events.append(self._stop(verdict.reason or "", verdict.token, piece))
                break
            self._seen.append(piece)
            self._seen_chars += len(piece)
            body = piece.strip()
            lead = piece[: len(piece) - len(piece.lstrip())]
            shown = strip_markers(body)
            if shown:
                markers = tuple(
                    dict.fromkeys(
                        n
                        for m in MARKER.finditer(body, timeout=TIMEOUT)
                        for n in _marker_numbers(m.group())
                    )
                )
                events.append(Released(lead + shown, markers))
        return events

    def _locale_with(self, piece: str) -> str | None:
        """The answer's detected locale, the new sentence included (the reader's locale
        when the gate has one). Detection runs until the answer has
        ``LOCALE_SAMPLE_CHARS`` characters, then the result is kept."""
        if self.gate.locale is not None or not self.gate._fp_takes_locale:
            return self.gate.locale
        size = self._seen_chars + len(piece)
        # detection costs ~0.2 ms: run it again only when the sample has doubled
        if size >= 2 * self._detected_at and self._detected_at < LOCALE_SAMPLE_CHARS:
            sample = "".join(self._seen) + piece
            if sample.strip():
                self._answer_locale = self.gate.packs.detect_locale(
                    strip_markers(sample[: LOCALE_SAMPLE_CHARS * 2])
                )
                self._detected_at = max(size, 1)
        return self._answer_locale

    def _stop(self, reason: str, token: str, sentence: str) -> Stopped:
        self.done = True
        self.stopped = True
        message, locale = self.gate.message("gate_stop", "".join(self._seen) + sentence)
        if self.gate.on_cancel is not None:
            try:
                self.gate.on_cancel()
            except Exception:  # the reader must still get the stop message
                log.exception("guardlex: the gate's on_cancel hook raised")
        return Stopped(reason, token, message, sentence.strip(), locale)
