"""De-obfuscated variants of a question, and Latin words spelled in look-alike letters.

``normalise`` gives one text per question. Some disguises cannot be undone there without
changing ordinary text: letters spaced out ("p r i c e"), separators or digits inside a
word ("pr-ice", "pr1ce"), letters repeated ("priiice"), a word broken over two lines,
HTML entities and percent-encoding, a ZWNJ in the middle of a Persian word, spaces
between Chinese characters, a Hindi word written with (or without) nukta. ``variants``
returns the question undone each of these ways; a router checks every variant and a
refusal found in any of them wins.

``confusable_fold`` needs to know which words exist: a token written entirely in
Cyrillic or Greek letters that look like Latin ones ("сһаrgе") is read as the Latin word
when that word is one of ``latin_words``, which the router takes from its loaded
Latin-script packs.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Callable, Collection
from functools import cache
from itertools import pairwise

import regex

from guardlex.normalise import _tables as T
from guardlex.normalise import steps as S
from guardlex.normalise._core import MAX_CHARS, check_length, normalise
from guardlex.normalise.words import HAN_CLASS

__all__ = [
    "MAX_VARIANTS",
    "MAX_VARIANTS_CHARS",
    "confusable_fold",
    "strip_nukta",
    "variants",
]

#: ``variants`` returns at most this many texts (the normalised question first).
MAX_VARIANTS = 12
#: The longest text ``variants`` accepts (it normalises the text about ten times).
MAX_VARIANTS_CHARS = 100_000

NUKTA = "\u093c"

_LETTER = r"\p{L}\p{M}*"
# One unit of a spaced-out word: a letter with its marks (a whole Devanagari conjunct),
# or an apostrophe (q u ' e l l e).
_UNIT = r"(?:(?=\p{L})\X|['’])"
_NOT_WORD = r"[^\p{L}\p{M}\p{N}]"
# Single letters (not Han) separated by spaces or punctuation: "p r i c e", "p.r.i.c.e".
_SEP = r"[ .\-_*·/|+~,:]+"
_SPACED = (
    rf"(?<![\p{{L}}\p{{M}}\p{{N}}])(?:(?![{HAN_CLASS}]){_UNIT}{_SEP}){{2,}}"
    rf"(?![{HAN_CLASS}]){_UNIT}(?![\p{{L}}\p{{M}}\p{{N}}])"
)
# Single Han characters separated by spaces or punctuation: "价 格", "价·格", "价，格".
_HAN_SEP = r"[ ·・‧,、.\-_*/|]+"
_HAN_SPACED = (
    rf"(?<![{HAN_CLASS}])(?:[{HAN_CLASS}]{_HAN_SEP}(?![{HAN_CLASS}]{{2}}))+"
    rf"[{HAN_CLASS}](?![{HAN_CLASS}])"
)
# Any such separator between two Han characters ("咨询费 用", "费，用").
_HAN_GAP = rf"(?<=[{HAN_CLASS}]){_HAN_SEP}(?=[{HAN_CLASS}])"
# Separators inside a word: "pr-ice", "pri.ce", "p_rice", "pri'ce".
_INWORD = r"(?<=\p{L}\p{M}*)[.\-_*·'’]+(?=\p{L})"
# Digits and symbols standing for letters inside a word: "pr1ce", "ph0ne", "$alary".
_LEET_RUN = r"(?<=\p{L}\p{M}*)[0-9@$]+|[0-9@$]+(?=\p{L})|(?<=\p{L}\p{M}*)[!|]+(?=\p{L})"
_LEET = {"0": "o", "1": "i", "2": "z", "3": "e", "4": "a", "5": "s", "6": "g", "7": "t"}
_LEET.update({"8": "b", "9": "g", "@": "a", "$": "s", "!": "i", "|": "l"})
_REPEAT_ALL = r"(\p{L})\1+"
_REPEAT_3 = r"(\p{L})\1\1+"
# Spaced-out runs of four or more, keeping the last (or first) single apart: in "कि त
# नी है" the last one is a word of its own.
_SPACED_RUN = (
    rf"(?<![\p{{L}}\p{{M}}\p{{N}}])(?:(?![{HAN_CLASS}]){_UNIT}{_SEP}){{3,}}"
    rf"(?![{HAN_CLASS}]){_UNIT}(?![\p{{L}}\p{{M}}\p{{N}}])"
)
_LINE_BREAK = r"(?<=[\p{L}\p{M}])[ \t]*(?:\r\n|[\n\r\v\f\u2028\u2029\x85])[ \t]*(?=\p{L})"
_PERCENT = r"%[0-9A-Fa-f]{2}"
_ENTITY = r"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);?"


def _sub(pattern: str, repl: str | Callable[..., str], text: str) -> str:
    return S._re(pattern).sub(repl, text, timeout=S.timeout_for(text))


def _drop(pattern: str, words: Collection[str] | None = None) -> Callable[..., str]:
    """Remove ``pattern`` inside a match; with ``words``, leave a run alone whose parts
    are all known words of more than one code point (Hindi में क्या है are single letter
    clusters, but words, not a word spelled out)."""

    def repl(m: object) -> str:
        run = str(m.group(0))  # type: ignore[attr-defined]
        if words is not None:
            parts = [p for p in S._re(pattern).split(run, timeout=S.timeout_for(run)) if p]
            if parts and all(len(p) > 1 and p in words for p in parts):
                return run
        return _sub(pattern, "", run)

    return repl


def _unspace(text: str) -> str:
    text = _sub(_SPACED, _drop(_SEP), text)
    return _sub(_HAN_SPACED, _drop(_HAN_SEP), text)


#: A single space between two non-spaces (the letter gaps of "h o w  m u c h").
_SINGLE_GAP = r"(?<=\S) (?=\S)"
#: Longest run that ``_unspace_split`` tries to split into words, and longest word.
_SPLIT_MAX, _WORD_MAX = 400, 24


def _unspace_split(text: str, words: Collection[str]) -> str:
    """Join spaced-out runs and split each back into ``words`` where it has several."""

    def one(run: str) -> str:
        blob = "".join(p for p in S._re(_SEP).split(run, timeout=S.timeout_for(run)) if p)
        return _word_break(blob, words) if len(blob) <= _SPLIT_MAX else blob

    def repl(m: object) -> str:
        run = str(m.group(0))  # type: ignore[attr-defined]
        # a hyphen standing alone between spaced-out letters was inside a word
        # ("p e u t - e l l e" -> "peut-elle")
        return "-".join(one(part) for part in run.split(" - "))

    return _sub(_SPACED, repl, text)


def _word_break(blob: str, words: Collection[str]) -> str:
    """The fewest known words (unknown letters cost 2 each) that spell ``blob``; among
    as few, the one whose later words are the shortest, as one reads left to right
    ("whatareher" is "what are her", not "what ar eher" with a German "eher")."""
    n = len(blob)
    inf = 4 * n + 4
    cost = [0] + [inf] * n
    back: list[tuple[int, bool]] = [(0, False)] * (n + 1)
    for j in range(1, n + 1):
        c, b = cost[j - 1] + 2, (j - 1, False)  # one unknown letter
        for i in range(max(0, j - _WORD_MAX), j):
            if cost[i] + 1 <= c and blob[i:j] in words:
                c, b = cost[i] + 1, (i, True)
        cost[j], back[j] = c, b
    pieces: list[tuple[str, bool]] = []  # right to left: (text, known word)
    j = n
    while j > 0:
        i, known = back[j]
        if not known and pieces and not pieces[-1][1]:
            pieces[-1] = (blob[i:j] + pieces[-1][0], False)  # unknown letters stay together
        else:
            pieces.append((blob[i:j], known))
        j = i
    out = " ".join(piece for piece, _ in reversed(pieces))
    return _sub(_APOSTROPHE_GAP, r"\1", out) if "'" in out or "’" in out else out


_APOSTROPHE_GAP = r" ?(['’]) ?"


def _collapse_unknown(text: str, words: Collection[str]) -> str:
    """Double letters to one, in the words that are not in ``words`` ("priice")."""

    def repl(m: object) -> str:
        token = str(m.group(0))  # type: ignore[attr-defined]
        if token in words or len(token) < 5:
            return token
        return _sub(_REPEAT_ALL, r"\1", token)

    return _sub(_TOKEN, repl, text)


def _unspace_keep(text: str, keep_last: bool) -> str:
    """Join spaced-out runs of four or more but keep the last (or first) one apart."""

    def repl(m: object) -> str:
        run = str(m.group(0))  # type: ignore[attr-defined]
        parts = [p for p in S._re(_SEP).split(run, timeout=S.timeout_for(run)) if p]
        if keep_last:
            return "".join(parts[:-1]) + " " + parts[-1]
        return parts[0] + " " + "".join(parts[1:])

    return _sub(_SPACED_RUN, repl, text)


def _leet(one: str) -> Callable[..., str]:
    table = str.maketrans({**_LEET, "1": one})

    def repl(m: object) -> str:
        return str(m.group(0)).translate(table)  # type: ignore[attr-defined]

    return repl


def _decode(text: str) -> str:
    """HTML entities and percent-encoding, undone (twice, for double encoding)."""
    for _ in range(2):
        before = text
        if "&" in text and S._re(_ENTITY).search(text, timeout=S.timeout_for(text)):
            text = html.unescape(text)
        if "%" in text and S._re(_PERCENT).search(text, timeout=S.timeout_for(text)):
            text = urllib.parse.unquote(text, errors="replace")
        if text == before:
            break
    return text


def strip_nukta(text: str) -> str:
    """Remove the Devanagari nukta (U+093C): फ़ोन and फोन become one spelling.

    ``normalise`` keeps the nukta (क़ and क+़ are already one spelling after NFKC); many
    writers leave it out, so this gives the nukta-less form of a normalised text.

    >>> strip_nukta("फ़ोन नंबर क़ीमत")
    'फोन नंबर कीमत'
    """
    check_length(text, MAX_CHARS, "strip_nukta")
    return text.replace(NUKTA, "")


def _other_fillers(text: str) -> str | None:
    """The reading of the fillers ``visible_text`` did not choose (space <-> nothing)."""
    marked = text.translate(T.visible_map())
    if T.FILLER_MARK not in marked:
        return None
    blanks = marked.count(T.FILLER_MARK)
    gaps = len(marked.split()) - 1
    return marked.replace(T.FILLER_MARK, "" if blanks > gaps else " ")


def _fillers_by_words(text: str, words: Collection[str]) -> str | None:
    """Each filler read on its own: nothing where the letters on both sides join into
    one of ``words`` and are not both words themselves ("char\u3164ge"), a space
    elsewhere ("how\u3164much")."""
    marked = text.translate(T.visible_map())
    if T.FILLER_MARK not in marked:
        return None
    parts = marked.split(T.FILLER_MARK)
    out = [parts[0]]
    for left, right in pairwise(parts):
        a = S._re(r"[\p{L}\p{M}]+$").search(left, timeout=S.timeout_for(left))
        b = S._re(r"^[\p{L}\p{M}]+").search(right, timeout=S.timeout_for(right))
        join = False
        if a and b:
            lw, rw = normalise(a.group(0)), normalise(b.group(0))
            join = lw + rw in words and not (lw in words and rw in words)
        out.append("" if join else " ")
        out.append(right)
    return "".join(out)


def variants(text: str, words: Collection[str] | None = None) -> tuple[str, ...]:
    """The normalised question, then its distinct de-obfuscated variants.

    The first item is always ``normalise(text)``. The others (only those that differ,
    at most ``MAX_VARIANTS`` in all, always in the same order) undo, each on its own:

    * HTML entities and percent-encoding (``&#x70;rice``, ``%70rice``);
    * a ZWNJ inside a Persian or Arabic word (the joined reading: قی‌مت -> قیمت);
    * a line break inside a word (``pri\\nce``);
    * Hangul fillers or braille blanks read the other way (space <-> nothing), and,
      with ``words``, each on its own (nothing where it splits a known word);
    * letters spaced out (``p r i c e``, ``p.r.i.c.e``; ``价 格``, ``价·格``), also
      with the last or first single letter of a long run kept apart (it may be a word);
      a whole question spaced out with wider gaps between its words
      (``h o w  m u c h``) keeps those gaps; with ``words``, a spaced-out run that
      joins into several words (``h o w m u c h`` -> ``howmuch``) is split back into
      them (``how much``);
    * spaces, middle dots and commas between any two Chinese characters removed;
    * separators inside a word (``pr-ice``, ``pri.ce``);
    * digits and symbols for letters (``pr1ce``, ``pr!ce``, ``$alary``; ``1`` read as
      ``i`` and, in a second variant, as ``l``);
    * repeated letters (``priiice``: runs of three or more to one letter, and to two
      for words like "fee"; with ``words``, double letters to one in the words of five
      letters or more that are not among them, ``priice``: a short word with a double
      letter is ordinary spelling, "good" must not become "god");
    * the Devanagari nukta removed (``strip_nukta``);
    * with ``words``: Latin words spelled in Cyrillic or Greek look-alikes
      (``confusable_fold``);
    * and all of the above together (runs of three or more letters to two).

    ``words`` are normalised words of the loaded locales (their stopwords, the words
    of their rules, the configured subject names); the Latin-script ones are what
    ``confusable_fold`` looks for. A text longer than ``MAX_VARIANTS_CHARS`` raises
    ``InputTooLargeError``.

    >>> variants("What is her p r i c e?")[:2]
    ('what is her p r i c e?', 'what is her price?')
    >>> variants("pr1ce")
    ('pr1ce', 'price', 'prlce')
    """
    if type(text) is not str:
        from guardlex.normalise._core import _check

        text = _check(text, "variants")
    check_length(text, MAX_VARIANTS_CHARS, "variants")
    base = normalise(text)
    out: list[str] = [base]
    seen = {base}

    def add(candidate: str) -> None:
        if candidate and candidate not in seen and len(out) < MAX_VARIANTS:
            seen.add(candidate)
            out.append(candidate)

    visible = S.visible_text(text)
    raw = visible  # the raw-text undoings, all together, for the last variant
    decoded = _decode(visible)
    if decoded != visible:
        add(normalise(decoded))
        raw = decoded
    if T.ZWNJ in visible:
        add(normalise(visible.replace(T.ZWNJ, "")))
        raw = raw.replace(T.ZWNJ, "")
    if any(c in visible for c in _BREAKS):
        unbroken = _sub(_LINE_BREAK, "", visible)
        if unbroken != visible:
            add(normalise(unbroken))
            raw = _sub(_LINE_BREAK, "", raw)
    if not _FILLER_SET.isdisjoint(text):
        other = _other_fillers(text)
        if other is not None:
            add(normalise(other))
        if words is not None:
            each = _fillers_by_words(text, words)
            if each is not None:
                add(normalise(each))
    every = normalise(raw) if raw is not visible else base
    han = bool(base) and max(base) >= _HAN_FIRST
    ascii_plain = base.isascii() and not any(c in base for c in _ASCII_SIGNS)
    spaced_like = not ascii_plain and (
        any(c in base for c in _SEPS) or sum(len(t) <= 2 for t in base.split(" ")) >= 2
    )
    if spaced_like:
        spaced = _sub(_SPACED, _drop(_SEP, words), base)
        if han:
            spaced = _sub(_HAN_SPACED, _drop(_HAN_SEP), spaced)
        add(spaced)
        if spaced != base:
            if words is not None:
                add(_unspace_split(base, words))
            if "  " in visible:
                add(normalise(_sub(_SINGLE_GAP, "", visible)))
            add(_unspace_keep(base, keep_last=True))
            add(_unspace_keep(base, keep_last=False))
        every = _sub(_SPACED, _drop(_SEP, words), every)
        if han:
            every = _sub(_HAN_SPACED, _drop(_HAN_SEP), every)
    if han:
        add(_sub(_HAN_GAP, "", base))
        every = _sub(_HAN_GAP, "", every)
    if any(c in base for c in _INWORD_SIGNS):
        add(_sub(_INWORD, "", base))
        every = _sub(_INWORD, "", every)
    if any(c in base for c in _LEET_SIGNS):
        add(_sub(_LEET_RUN, _leet("i"), base))
        if "1" in base:
            add(_sub(_LEET_RUN, _leet("l"), base))
        every = _sub(_LEET_RUN, _leet("i"), every)
    if S._re(_REPEAT_ALL).search(base, timeout=S.timeout_for(base)):
        add(_sub(_REPEAT_3, r"\1", base))
        add(_sub(_REPEAT_3, r"\1\1", base))
        if words is not None:
            add(_collapse_unknown(base, words))
        every = _sub(_REPEAT_3, r"\1\1", every)
    elif every is not base:
        every = _sub(_REPEAT_3, r"\1\1", every)
    if NUKTA in base:
        add(strip_nukta(base))
        every = strip_nukta(every)
    if words is not None:
        add(_fold_normalised(base, words))
        every = _fold_normalised(every, words)
    add(every)  # everything at once
    return tuple(out)


_BREAKS = "\n\r\v\f\u2028\u2029\x85"
_FILLER_SET = frozenset(T.FILLERS)
_HAN_FIRST = "\u2e80"
_ASCII_SIGNS = " .-_*'!|@$0123456789"
_SEPS = ".-_*·/|+~,:"
_INWORD_SIGNS = ".-_*·'’"
_LEET_SIGNS = "0123456789@$!|"


# ------------------------------------------------------------------ confusable_fold

_TOKEN = r"[\p{L}\p{M}]+"
_NON_LATIN_LCG = r"[[\p{Script=Cyrillic}\p{Script=Greek}]&&\p{L}]"
_LATIN = r"[\p{Script=Latin}&&\p{L}]"
_LCG_ONLY = rf"(?:{_LATIN}|{_NON_LATIN_LCG})+"
#: A folded word has at least this many letters (so that Russian а, в, о, он stay).
MIN_FOLD_LETTERS = 3


@cache
def _to_latin() -> dict[str, str]:
    return T.confusable_map()["Latin"]


def confusable_fold(text: str, latin_words: Collection[str]) -> str:
    """``normalise(text)``, with Latin words spelled in Cyrillic or Greek look-alikes
    read as Latin.

    A token (a run of letters) made only of Latin, Cyrillic and Greek letters, with at
    least one Cyrillic or Greek letter, every one of which looks like a Latin letter
    (UTS #39 confusables), is replaced by that Latin spelling when

    * the Latin spelling is one of ``latin_words`` (normalised words of the loaded
      Latin-script locales: their stopwords and the words of their rules) and has at
      least ``MIN_FOLD_LETTERS`` letters, and
    * the text reads as Latin: its Latin tokens and the tokens folded this way together
      are more than twice as many as its other Cyrillic and Greek tokens.

    So "How much does she сһаrgе?" reads "charge", while a Russian sentence, whose
    words mostly contain letters that look like no Latin letter (и, л, д, я ...), keeps
    every word, even "море" or "сор". The result has the same length as
    ``normalise(text)`` and differs from it only letter for letter, so the offsets of
    ``normalise_with_offsets(text)`` apply to it.

    >>> confusable_fold("How much does she сһаrgе?", {"charge", "how", "much"})
    'how much does she charge?'
    >>> confusable_fold("Сор и море", {"cop", "mope"})
    'сор и море'
    """
    if type(text) is not str:
        from guardlex.normalise._core import _check

        text = _check(text, "confusable_fold")
    check_length(text, MAX_CHARS, "confusable_fold")
    return _fold_normalised(normalise(text), latin_words)


def _fold_normalised(norm: str, latin_words: Collection[str]) -> str:
    if norm.isascii() or not _cyrillic_or_greek(norm):
        return norm
    limit = S.timeout_for(norm)
    # Candidates first (cheap): whole tokens made only of ASCII letters and letters
    # with a Latin look-alike, with at least one of the latter.
    folds: list[tuple[int, int, str]] = []
    # matches first: the time limit runs while the iterator lives (the first look-up
    # builds the fold table)
    for m in list(S._re(_candidate_pattern()).finditer(norm, timeout=limit)):
        token = m.group(0)
        if token.isascii():
            continue
        skeleton = token.translate(_to_latin_table())
        if len(skeleton) >= MIN_FOLD_LETTERS and skeleton in latin_words:
            folds.append((m.start(), m.end(), skeleton))
    if not folds:
        return norm
    lcg_only = S._re(_LCG_ONLY)
    non_latin = S._re(_NON_LATIN_LCG)
    latin_tokens = other_tokens = 0
    for m in S._re(_TOKEN).finditer(norm, timeout=limit):
        token = m.group(0)
        if token.isascii():
            latin_tokens += 1
        elif not non_latin.search(token, timeout=limit):
            latin_tokens += 1 if lcg_only.fullmatch(token, timeout=limit) else 0
        else:
            other_tokens += 1
    other_tokens -= len(folds)
    if latin_tokens + len(folds) <= 2 * other_tokens:
        return norm
    parts: list[str] = []
    pos = 0
    for a, b, word in folds:
        parts.append(norm[pos:a])
        parts.append(word)
        pos = b
    parts.append(norm[pos:])
    return "".join(parts)


@cache
def _to_latin_table() -> dict[int, str]:
    return str.maketrans(_to_latin())


@cache
def _candidate_pattern() -> str:
    letters = "".join(sorted(k for k in _to_latin() if len(k) == 1))
    cls = "a-z" + regex.escape(letters)
    return rf"(?<![\p{{L}}\p{{M}}])[{cls}]+(?![\p{{L}}\p{{M}}])"


def _cyrillic_or_greek(text: str) -> bool:
    t = text.encode("utf-8", "surrogatepass").translate(_core_classes())
    return b"C" in t or b"G" in t or b"X" in t


@cache
def _core_classes() -> bytes:
    from guardlex.normalise._core import _BYTE_CLASSES

    return _BYTE_CLASSES
