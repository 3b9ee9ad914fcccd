"""Incremental sentence segmentation whose result does not depend on chunking.

The streaming gate must release the same sentences whether the model's text arrives
one character at a time or all at once. The segmenter therefore only *decides* a
sentence end when every character the decision depends on has arrived:

* after a terminator (``. ! ? …`` and ``。！？ ؟ । ۔``) it needs the rest of the
  terminator run, any closing quotes or brackets, and the first non-space character
  after them: that character tells whether citation markers follow (``… in 2023.[2]``
  or ``… in 2023. [2]``, which belong to the sentence before them), whether a ``.`` is
  inside a token (``3.5``, ``example.com``, ``a.b@c.de``), and a partial marker such as
  ``[1`` waits until it is closed or proven not to be a marker;
* an abbreviation (``Dr.``, ``z. B.``, ``т. е.``, from the packs' lexicons), an initial
  (``J. Smith``), ``e.g.``-style dotted letters and a one- or two-digit number before the
  dot (a list enumerator ``1.``, a German ordinal ``2. Mai``) never end a sentence, and
  neither does a ``.`` followed by a lower-case letter (``900 руб. в месяц``);
* a line break ends a line that has content (list items and headings are units);
* the final flush (``finish``) decides whatever waited for more text.

Every decision is a function of the text up to a bounded lookahead, made in text order
and never revised, so any split of the same text gives the same sentences.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import regex

from guardlex.gates._text import TIMEOUT, normalise

#: Terminators after which the next character must be a space (or the text ends).
SPACED_TERMINATORS = frozenset(".!?…‼⁇⁈⁉")
#: Terminators that end a sentence whatever follows (scripts written without spaces).
FREE_TERMINATORS = frozenset("。！？｡؟।॥۔")
TERMINATORS = SPACED_TERMINATORS | FREE_TERMINATORS
#: Closing punctuation that stays with the sentence it closes.
CLOSERS = frozenset("\"'”’»›)}」』）〉》*_`")
MARKER_OPENERS = frozenset("[［【")

#: A citation marker: ``[2]``, ``[1, 3]``, footnote style ``[^2]``; Unicode digits and
#: full-width brackets allowed.
MARKER = regex.compile(r"[\[［【]\^?\s*\d{1,4}(?:\s*[,，、]\s*\^?\d{1,4})*\s*[\]］】]")

_INITIAL = regex.compile(r"[\p{Latin}\p{Cyrillic}\p{Greek}]\.")
_DOTTED = regex.compile(r"(?:[\p{L}]\.){2,}")
_SHORT_NUMBER = regex.compile(r"\d{1,2}\.")
_OPENING = "([{«“‘\"'„¿¡"

#: A sentence longer than this is stopped (``sentence_too_long``) rather than held forever.
MAX_SENTENCE_CHARS = 4000


@dataclass(frozen=True)
class _Cut:
    end: int | None  # where the sentence ends; None: undecided (wait) or none found
    wait: bool = False
    too_long: bool = False


class Segmenter:
    """Split a growing text into sentences; ``feed`` pieces, then ``finish``.

    ``is_abbreviation`` receives normalised candidates (``"dr."``, ``"z. b."``,
    ``"z.b."``) and says whether the dot belongs to an abbreviation.
    """

    def __init__(
        self,
        is_abbreviation: Callable[[Iterable[str]], bool] | None = None,
        max_chars: int = MAX_SENTENCE_CHARS,
    ) -> None:
        self._is_abbr = is_abbreviation or (lambda _c: False)
        self._max = max_chars
        self._buf = ""
        self._scan = 0  # every position before it is decided: not a sentence end
        self._content = False  # whether the text before ``_scan`` has a non-space
        self.too_long = False

    @property
    def pending(self) -> str:
        """Text received but not yet part of a decided sentence."""
        return self._buf

    def feed(self, text: str) -> list[str]:
        """Add text; return the sentences now complete (each with its leading whitespace)."""
        self._buf += text
        return self._drain(final=False)

    def finish(self) -> tuple[list[str], str]:
        """End of text: the remaining complete sentences and the unfinished tail ("" if none)."""
        out = self._drain(final=True)
        tail = self._buf
        self._buf = ""
        self._scan = 0
        self._content = False
        return out, (tail if tail.strip() else "")

    def _drain(self, final: bool) -> list[str]:
        out: list[str] = []
        while self._buf and not self.too_long:
            cut = self._next_cut(final)
            if cut.too_long:
                self.too_long = True
                break
            if cut.end is None:
                break
            out.append(self._buf[: cut.end])
            self._buf = self._buf[cut.end :]
            self._scan = 0
            self._content = False
        return out

    def _next_cut(self, final: bool) -> _Cut:
        buf = self._buf
        n = len(buf)
        i = self._scan
        content = self._content
        while i < n:
            if i >= self._max and content:
                return _Cut(None, too_long=True)
            ch = buf[i]
            if ch == "\n" and content:
                return _Cut(i)
            if ch in TERMINATORS and content:
                decided = self._at_terminator(i, final)
                if decided.wait:
                    self._scan = i
                    self._content = content
                    return decided
                if decided.end is not None:
                    return decided
                # not a boundary: skip the terminator run
                while i < n and buf[i] in TERMINATORS:
                    i += 1
                continue
            if not ch.isspace():
                content = True
            i += 1
        self._scan = i
        self._content = content
        if final and content and len(buf) > self._max:
            return _Cut(None, too_long=True)
        return _Cut(None)

    def _at_terminator(self, i: int, final: bool) -> _Cut:
        buf = self._buf
        n = len(buf)
        j = i
        while j < n and buf[j] in TERMINATORS:
            j += 1
        if j == n and not final:
            return _Cut(None, wait=True)
        k = j
        while True:
            while k < n and buf[k] in CLOSERS:
                k += 1
            # French spacing: "Vraiment ? »" closes the quote after a space
            q = _skip_space(buf, k)
            if q == n and not final:
                return _Cut(None, wait=True)
            if q < n and q > k and buf[q] in "»›":
                k = q + 1
                continue
            break
        if k == n and not final:
            return _Cut(None, wait=True)
        # citation markers after the terminator belong to this sentence
        p = _skip_space(buf, k)
        if p == n and not final:
            return _Cut(None, wait=True)
        markers_end = k
        while p < n and buf[p] in MARKER_OPENERS:
            m = MARKER.match(buf, p, partial=True, timeout=TIMEOUT)
            if m is None:
                break
            if m.partial:
                if not final:
                    return _Cut(None, wait=True)
                break
            markers_end = m.end()
            p = _skip_space(buf, markers_end)
            if p == n and not final:
                return _Cut(None, wait=True)
        if markers_end > k:
            return _Cut(markers_end)
        run = buf[i:j]
        if not any(c in FREE_TERMINATORS for c in run):
            if k < n and not buf[k].isspace():
                return _Cut(None)  # inside a token: 3.5, example.com, a.b@c.de, Yahoo!Inc
            if run == "." and k < n:
                # a lower-case letter cannot start a sentence in a cased script
                # ("900 руб. в месяц", "approx. twenty"); nor can the word after an abbreviation
                if p < n and unicodedata.category(buf[p]) == "Ll":
                    return _Cut(None)
                if self._abbreviation_before(i):
                    return _Cut(None)
        return _Cut(k)

    def _abbreviation_before(self, dot: int) -> bool:
        """Whether the ``.`` at ``dot`` closes an abbreviation, an initial or an ordinal."""
        head = self._buf[: dot + 1]
        tokens = head.split()
        if not tokens:
            return False
        last = tokens[-1].lstrip(_OPENING)
        if (
            _INITIAL.fullmatch(last, timeout=TIMEOUT)
            or _DOTTED.fullmatch(last, timeout=TIMEOUT)
            or _SHORT_NUMBER.fullmatch(last, timeout=TIMEOUT)
        ):
            return True
        candidates: list[str] = []
        for size in (1, 2, 3):
            if len(tokens) < size:
                break
            words = [t.lstrip(_OPENING) if idx == 0 else t for idx, t in enumerate(tokens[-size:])]
            joined = normalise(" ".join(words))
            candidates.append(joined)
            candidates.append(joined.replace(" ", ""))
        return self._is_abbr(candidates)


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def split_sentences(
    text: str,
    is_abbreviation: Callable[[Iterable[str]], bool] | None = None,
) -> list[str]:
    """All sentences of a complete text, stripped; an unfinished tail is the last item."""
    seg = Segmenter(is_abbreviation, max_chars=max(MAX_SENTENCE_CHARS, len(text) + 1))
    out = seg.feed(text)
    more, tail = seg.finish()
    pieces = [*out, *more]
    if tail:
        pieces.append(tail)
    return [p.strip() for p in pieces if p.strip()]
