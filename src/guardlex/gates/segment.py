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
_DOTTED = regex.compile(r"(?:\p{L}\p{M}*\.){2,}")
_AKSHARA = regex.compile(r"\p{Devanagari}\p{M}*\.")
_SHORT_NUMBER = regex.compile(r"\d{1,2}\.")
_OPENING = "([{«“‘\"'„¿¡"
_OPENING_MARKS = frozenset(_OPENING + "`")

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
        # a Vocab's bound ``is_abbreviation`` brings the rest of the locale facts: which
        # abbreviations may end a sentence, and the nouns after a German ordinal
        owner = getattr(is_abbreviation, "__self__", None)
        self._kind: Callable[[Iterable[str]], str | None] = getattr(
            owner, "abbreviation_kind", lambda c: "never" if self._is_abbr(c) else None
        )
        self._ordinal_noun: Callable[[str], bool] = getattr(
            owner, "is_ordinal_noun", lambda _w: False
        )
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
                if "." not in run and _is_cjk(buf[k]):
                    return _Cut(k)  # "你是哪国家?你在中国": Chinese needs no space after ?
                return _Cut(None)  # inside a token: 3.5, example.com, a.b@c.de, Yahoo!Inc
            nxt = buf[p] if p < n else ""
            if ")" in buf[j:k] and nxt and unicodedata.category(nxt) == "Ll":
                return _Cut(None)  # "(spelling??) brothers": inside a parenthesis
            if k < n and _is_ellipsis(run):
                # an ellipsis ends a sentence only before a capital, a digit or an
                # opening mark: "em ... no ...", "trés trés... bonne", "و… فراهم", "(...)"
                if i > 0 and buf[i - 1] in "([" and buf[j : j + 1] in ")]":
                    return _Cut(None)
                if not (nxt.isdigit() or _capital(nxt) or nxt in _OPENING):
                    return _Cut(None)
            elif run == "." and k < n:
                return self._after_dot(i, k, p, final)
        return _Cut(k)

    def _after_dot(self, dot: int, k: int, p: int, final: bool) -> _Cut:
        """A single ``.`` at ``dot`` followed by a space; ``k``: the end of the sentence
        if it ends here (closers included), ``p``: the next non-space character."""
        buf = self._buf
        n = len(buf)
        nxt = buf[p] if p < n else ""
        end = _Cut(k)
        head = buf[: dot + 1]
        tokens = head.split()
        if not tokens:
            return end
        last = tokens[-1].lstrip(_OPENING)
        lower = unicodedata.category(nxt) == "Ll" if nxt else False
        if _SHORT_NUMBER.fullmatch(last, timeout=TIMEOUT):
            # "1. item" enumerates; "am 2. Mai" is a German ordinal; "for 21. American" ends
            if not head[: head.rfind(last)].strip().strip("-*•").strip():
                return _Cut(None)
            if lower:
                return _Cut(None)
            q = p
            while q < n and (buf[q].isalpha() or unicodedata.category(buf[q])[0] == "M"):
                q += 1
            if q == n and not final:
                return _Cut(None, wait=True)
            if q > p and self._ordinal_noun(normalise(buf[p:q])):
                return _Cut(None)
            return end
        kind = self._abbreviation_kind(tokens)
        if kind == "final":
            # an end before a capital or an uncased letter ("etc. The", "م. في"); not before
            # a lower-case letter, a digit or other marks ("etc. and", "a. C. 1600", "hab. /")
            q = p
            while q < n and buf[q] in _OPENING_MARKS:
                q += 1
            if q == n and not final:
                return _Cut(None, wait=True)
            first = buf[q] if q < n else ""
            starts = first.isalpha() and unicodedata.category(first) != "Ll"
            return end if starts or not first else _Cut(None)
        if kind == "never":
            return _Cut(None)
        if _INITIAL.fullmatch(last, timeout=TIMEOUT):
            before = tokens[-2] if len(tokens) > 1 else ""
            # "2° C. De": a unit after a number; "классу S. В": a letter of another script
            if last[0].isupper() and (before[-1:].isdigit() or before[-1:] == "°"):
                return end
            if nxt.isalpha() and _script(nxt) != _script(last[0]):
                return end
            return _Cut(None)
        if _DOTTED.fullmatch(last, timeout=TIMEOUT):
            return _Cut(None)
        if _AKSHARA.fullmatch(last, timeout=TIMEOUT):
            # Devanagari initials "बी. सी. में": one syllable with a dot, next to another
            before = tokens[-2] if len(tokens) > 1 else ""
            if _AKSHARA.fullmatch(before, timeout=TIMEOUT):
                return _Cut(None)
            m = _AKSHARA.match(buf, p, partial=True, timeout=TIMEOUT)
            if m is not None and m.partial and not final:
                return _Cut(None, wait=True)
            if m is not None and not m.partial:
                return _Cut(None)
        return end

    def _abbreviation_kind(self, tokens: list[str]) -> str | None:
        """``never``/``final``/``None`` for the abbreviation ending the last tokens."""
        candidates: list[str] = []
        for size in (1, 2, 3):
            if len(tokens) < size:
                break
            words = [t.lstrip(_OPENING) if idx == 0 else t for idx, t in enumerate(tokens[-size:])]
            joined = normalise(" ".join(words))
            candidates.append(joined)
            candidates.append(joined.replace(" ", ""))
            if size == 1 and "-" in joined[:-1]:
                # "Doninikus-Zimmermann-Str.": the abbreviation is the last part
                candidates.append(joined.rsplit("-", 1)[1])
        candidates.sort(key=len)
        return self._kind(candidates)


def _is_ellipsis(run: str) -> bool:
    return "…" in run or (len(run) >= 2 and set(run) == {"."})


def _capital(ch: str) -> bool:
    return bool(ch) and unicodedata.category(ch) in ("Lu", "Lt")


def _is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch >= "\U00020000"


def _script(ch: str) -> str:
    try:
        return unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return ""


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
