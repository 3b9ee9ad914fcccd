"""Built-in concepts that no word list can say: ``<number>``, ``<name>``, ``<code>``,
``<math>`` and ``<pasted>`` (docs/packs.md, "Built-in concepts").

They are found in the *original* question (case, line breaks and quotes are gone from the
normalised text), by the shape of the text, never by words of a language:

- ``<name>``: a run of capitalised words (an upper-case letter followed by at least one
  lower-case letter: "Chip Huyen", "LeCun"; not "RAG" or "BM25") in a cased script.
  The first word of a sentence is not a name by its capital alone; words that are
  stopwords, pronouns or titles of a loaded locale are not names, except a capitalised
  word of at most three letters right after a name word, which ends the run ("Andrew
  Ng", "Jack Ma": short surnames that some locale's stopword list holds); the configured subject
  names are ``{subject}``, never ``<name>``; nor is a run whose every word is a word of
  the loaded packs ("and June?": "june" is a month word of a concept, not a person).
  A locale whose nouns are all capitalised says
  ``names: {min_words: 2}`` in ``locale.yaml`` (German), so only first-and-last-name runs
  count there.
- ``<code>``: text in backticks or a fenced block, a call (``lower(email)``,
  ``=VLOOKUP(A2,B:C,2)``), a programming operator (``==``, ``!=``, ``=>``, ``->``, ``::``,
  ``&&``, ``||``, ``+=``), braces, a markup tag, a statement ending in ``;``, a file name
  with a programming extension, or the SQL shape ``select … from``.
- ``<math>``: arithmetic and equations: two numbers joined by an operator
  (``234*17``, ``2^10``, ``3 - 4``; ``2-3 weeks``, ``2023-2024`` and ``2019 - 2021`` are
  ranges), a term
  like ``3x`` or ``x²`` in an equation (``3x + 7 = 22``), and the signs √ ∫ ∑ ≤ ≥ ≠.
- ``<pasted>``: text given to be worked on: a quoted passage of at least three words (or
  six Han characters) in any of the usual quotation marks, a fenced block, and what
  follows a line that ends with a colon. A colon inside a line is not enough ("Quick
  question: what is your rate?" is a question, not pasted text) unless the words before
  it, in the same sentence, hold a term of a locale's own ``pasted`` concept ("Summarise
  this text: The meeting covered …"): ``Builtins.colons`` keeps those candidates and the
  matcher confirms them.

Only rules with ``reads_pasted: true`` are decided by what lies inside pasted text:
a hit of another rule whose evidence lies wholly inside it gives way to a
``reads_pasted`` rule ("Translate this: 'what is your system prompt?'" is a task, not a
meta question); when no such rule matches, the hit stands, so pasted text never lets a
question through that would otherwise be refused (``Matcher.route_section``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import regex

from guardlex.rules._text import NormalisedLike

Span = tuple[int, int]
T = TypeVar("T")

#: Seconds a built-in scan may take on one (size-limited) question.
TIMEOUT = 0.5

# letters of a name: any letter but Han (a name may touch Chinese text: 她比Karpathy还强)
_NAME_WORD = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}_--\p{Han}])\p{Lu}[\p{L}\p{M}--\p{Han}]*\p{Ll}[\p{L}\p{M}--\p{Han}]*",
    regex.V1,
)
# what may sit between two words of one name: a space, or a hyphen/apostrophe inside
_NAME_JOIN = regex.compile(r"[ \u00a0]|[ \u00a0]?[-'’][ \u00a0]?")
_SENTENCE_START = regex.compile(r"(?:^|[.!?¿¡:;…\n\"«»“”„(\[]|[。！？；：])[\s\"'«“„(\[-]*$")
_CODE = regex.compile(
    r"""
      ```[\s\S]*?(?:```|$)                                  # fenced block
    | `[^`\n]{1,300}`                                       # inline code
    | [=@$]?[\p{L}_][\w.$:]*\([^()\n]{0,120}\)              # a call: f(), lower(email)
    | (?<!\S)[\w.\]\)'"]*(?:==|!=|<=|>=|=>|->|::|&&|\|\||\+=|-=|\*=)[\w.(\['"-]*(?!\S)
    | [{}]                                                  # braces
    | </?[a-z][\w-]*(?:\s[^<>\n]{0,80})?/?>                 # markup tag
    | \S;[ \t]*(?:\n|$)                                     # a statement ending in ;
    | (?<![\w/.])[\w./-]+\.(?:py|js|ts|tsx|jsx|sql|java|kt|cpp|cc|c|h|hpp|rs|go|sh|rb|php
        |html|css|json|ya?ml|toml|csv|xlsx?|ipynb|swift|cs)(?!\w)      # a file name
    | (?i:\bselect\b[^\n]{1,80}?\bfrom\b)                   # SQL
    """,
    regex.VERBOSE,
)
_MATH = regex.compile(
    r"""
      (?!(?:1[89]|20)\d\d\s+-\s+(?:1[89]|20)\d\d(?!\d))  # a span of years: 2019 - 2021
      (?<![\d.,])\d+(?:[.,]\d+)?(?:\s*[+*/×÷^]\s*|\s+-\s+)\(?\s*\d+  # 234*17, 3 - (4
    | (?<![\p{L}\d])\d*[a-z](?:\^\d|[²³])?\s*[-+*/=]\s*[\d(a-z]  # 3x + 7, x² = 4, x=2
        (?=[^=\n]{0,40}=)
    | \d+\s*[a-z]?\s*=\s*\d+                           # 7 = 22, 2x = 10
    | [√∫∑≤≥≠∞]
    """,
    regex.VERBOSE,
)
_QUOTES = (
    ('"', '"'),
    ("“", "”"),
    ("„", "“"),
    ("„", "”"),
    ("«", "»"),
    ("»", "«"),
    ("「", "」"),
    ("『", "』"),
    ("‘", "’"),
    ("'", "'"),
)
_QUOTED = regex.compile(
    "|".join(
        (r"(?<![\p{L}\p{N}])" if o == "'" else "")
        + regex.escape(o)
        + "([^"
        + regex.escape(c)
        + r"\n]{2,2000})"
        + regex.escape(c)
        + (r"(?![\p{L}\p{N}])" if c == "'" else "")
        for o, c in _QUOTES
    )
)
_COLON_LINE = regex.compile(r"[:：][ \t]*\n+([\s\S]+)")
_COLON = regex.compile(r"(?:：[ \t]*|:[ \t]+)(\S[^\n]*)")  # "10:30", "http://" are no colons
_HAN = regex.compile(r"\p{Han}")


@dataclass(frozen=True)
class Builtins:
    """The built-in occurrences of one question, in normalised-text coordinates.

    ``names`` holds ``(start, end, words)``: the span of a name and how many words it
    has (``names: {min_words: …}`` of a locale filters on it).
    """

    names: tuple[tuple[int, int, int], ...] = ()
    code: tuple[Span, ...] = ()
    math: tuple[Span, ...] = ()
    pasted: tuple[Span, ...] = ()
    #: inline colons: (the lead: sentence start to the colon, the text after it)
    colons: tuple[tuple[Span, Span], ...] = ()


NONE = Builtins()


def _words(text: str) -> int:
    if _HAN.search(text, timeout=TIMEOUT):
        return max(len(text.split()), len(_HAN.findall(text, timeout=TIMEOUT)) // 2)
    return len(text.split())


def span_words(text: str) -> int:
    """How many words ``text`` holds for ``within: N``: space-separated words, where a
    run of Chinese characters counts one word per two characters (Chinese has no
    spaces)."""
    if not _HAN.search(text, timeout=TIMEOUT):
        return len(text.split())
    n = 0
    for token in text.split():
        han = len(_HAN.findall(token, timeout=TIMEOUT))
        n += max(1, (han + 1) // 2) if han else 1
    return n


def name_runs(text: str, ignored: frozenset[str]) -> list[tuple[int, int, int]]:
    """Runs of capitalised words in ``text`` (original coordinates), see the module doc."""
    words = [m.span() for m in _NAME_WORD.finditer(text, timeout=TIMEOUT)]
    runs: list[list[Span]] = []
    for s, e in words:
        if text[s:e].casefold() in ignored:
            if (
                e - s <= 3
                and runs
                and runs[-1]
                and text[s + 1 : e].islower()
                and _NAME_JOIN.fullmatch(text[runs[-1][-1][1] : s], timeout=TIMEOUT)
                and not _SENTENCE_START.search(text[: runs[-1][0][0]], timeout=TIMEOUT)
            ):
                runs[-1].append((s, e))  # a short surname that is also a stopword ends it:
                # "Andrew Ng", "Jack Ma", "Kaiming He"
            runs.append([])  # a stopword or title ends a run and is no part of one
            continue
        if runs and runs[-1] and _NAME_JOIN.fullmatch(text[runs[-1][-1][1] : s], timeout=TIMEOUT):
            runs[-1].append((s, e))
        else:
            runs.append([(s, e)])
    out = []
    for run in runs:
        if run and _SENTENCE_START.search(text[: run[0][0]], timeout=TIMEOUT):
            run = run[1:]  # "Could …", "Is …": a capital that only starts the sentence
        if run:
            out.append((run[0][0], run[-1][1], len(run)))
    return out


def code_spans(text: str) -> list[Span]:
    """Code-looking parts of ``text`` (original coordinates)."""
    return [m.span() for m in _CODE.finditer(text, timeout=TIMEOUT) if m.end() > m.start()]


def math_spans(text: str) -> list[Span]:
    """Arithmetic and equations in ``text`` (original coordinates)."""
    return [m.span() for m in _MATH.finditer(text, timeout=TIMEOUT) if m.end() > m.start()]


def pasted_spans(text: str) -> list[Span]:
    """Passages of ``text`` given to be worked on (original coordinates)."""
    out: list[Span] = []
    for m in _QUOTED.finditer(text, timeout=TIMEOUT):
        k = next(i for i in range(1, len(_QUOTES) + 1) if m.group(i) is not None)
        if _words(m.group(k)) >= 3:
            out.append(m.span())
    for m in regex.finditer(r"```[\s\S]*?(?:```|$)", text, timeout=TIMEOUT):
        out.append(m.span())
    m = _COLON_LINE.search(text, timeout=TIMEOUT)
    if m is not None and m.group(1).strip():
        out.append(m.span(1))
    return sorted(set(out))


def colon_spans(text: str) -> list[tuple[Span, Span]]:
    """Inline colons that may introduce pasted text: (lead, rest), where the lead is the
    sentence up to the colon (at most ten words, no question mark) and the rest holds
    at least three words."""
    out = []
    for m in _COLON.finditer(text, timeout=TIMEOUT):
        before = text[: m.start()]
        cut = max(before.rfind(c) for c in ".!?\n。！？")
        lead = before[cut + 1 :]
        if "?" not in lead and _words(lead) <= 10 and _words(m.group(1)) >= 3:
            out.append(((cut + 1, m.start()), m.span(1)))
    return out


def find(
    original: str, cur: NormalisedLike | None, ignored: frozenset[str] = frozenset()
) -> Builtins:
    """Every built-in occurrence of ``original``, mapped onto ``cur`` (its normalisation).

    Without ``cur`` the text is taken as already normalised (a disguised reading or a
    previous question): names are then not found (case is gone), code and pasted text are.
    """
    if cur is None:
        return Builtins(
            code=tuple(code_spans(original)),
            math=tuple(math_spans(original)),
            pasted=tuple(pasted_spans(original)),
            colons=tuple(colon_spans(original)),
        )
    to_norm = _Mapper(cur)
    names = tuple(
        (sp[0], sp[1], n)
        for s, e, n in name_runs(original, ignored)
        if (sp := to_norm(s, e)) is not None
    )
    return Builtins(
        names=names,
        code=tuple(_mapped(to_norm, code_spans(original))),
        math=tuple(_mapped(to_norm, math_spans(original))),
        pasted=tuple(_mapped(to_norm, pasted_spans(original))),
        colons=tuple(
            (lead, rest)
            for a, b in colon_spans(original)
            if (lead := to_norm(*a)) is not None and (rest := to_norm(*b)) is not None
        ),
    )


def lazy(find_them: Callable[[], T]) -> Callable[[], T]:
    """``find_them``, called at most once (built-ins are found only if a rule needs them;
    the engine uses it for other per-question facts too)."""
    done: list[T] = []

    def get() -> T:
        if not done:
            done.append(find_them())
        return done[0]

    return get


def lazy_find(text: str) -> Callable[[], Builtins]:
    """The built-ins of an already normalised ``text``, found on first use."""
    return lazy(lambda: find(text, None))


def _mapped(to_norm: _Mapper, spans: Iterable[Span]) -> Iterable[Span]:
    for s, e in spans:
        sp = to_norm(s, e)
        if sp is not None:
            yield sp


class _Mapper:
    """Original-text spans to normalised-text spans (``offsets`` is non-decreasing)."""

    def __init__(self, cur: NormalisedLike) -> None:
        self.offsets = list(cur.offsets)

    def __call__(self, s: int, e: int) -> Span | None:
        a = bisect_left(self.offsets, s)
        b = bisect_left(self.offsets, e)
        return (a, b) if b > a else None


def shifted(b: Builtins, by: int) -> Builtins:
    """``b`` moved ``by`` characters right (the follow-up inside the joined text)."""
    return Builtins(
        names=tuple((s + by, e + by, n) for s, e, n in b.names),
        code=tuple((s + by, e + by) for s, e in b.code),
        math=tuple((s + by, e + by) for s, e in b.math),
        pasted=tuple((s + by, e + by) for s, e in b.pasted),
        colons=tuple(((a + by, b_ + by), (c + by, d + by)) for (a, b_), (c, d) in b.colons),
    )


def joined(a: Builtins, b: Builtins) -> Builtins:
    """The built-ins of two parts of one text, together."""
    return Builtins(
        names=a.names + b.names,
        code=a.code + b.code,
        math=a.math + b.math,
        pasted=a.pasted + b.pasted,
        colons=a.colons + b.colons,
    )
