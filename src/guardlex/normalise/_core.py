"""The fused normaliser, its offset-tracking twin, and ``explain``."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar

from guardlex.normalise import _tables as T
from guardlex.normalise import steps as S
from guardlex.normalise._limits import MAX_CHARS, MAX_OFFSETS_CHARS, check_length
from guardlex.normalise._limits import MAX_EXPANSION as MAX_EXPANSION
from guardlex.normalise._limits import check_expanded as _check_expanded

_MAX_PASSES = 4


def _check(text: object, func: str) -> str:
    if type(text) is str:
        return text
    if isinstance(text, str):
        return str.__str__(text)
    shown = repr(text)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise TypeError(f"{func}() expects a str, got {type(text).__name__}: {shown}")


# The byte classes of UTF-8 (ASCII letters, and the lead bytes of whole blocks) that
# can belong to a Latin letter (L), a combining mark (M), a Greek letter (G, which
# shares its lead bytes with marks), a Cyrillic letter (C, likewise), or to any of those
# (X). A string with no Latin letter and no two of Greek and Cyrillic cannot hold a mark
# after a Latin letter or a token mixing scripts, so the regex that handles those (the
# costliest call for a short line) is skipped. The classes err only towards running it;
# a test checks them against every character.
def _byte_classes() -> bytes:
    cls = bytearray(b"." * 256)
    for b in [*range(0x41, 0x5B), *range(0x61, 0x7B), *range(0xC3, 0xCC)]:
        cls[b] = ord("L")
    for b in [*range(0xD7, 0xE1), 0xE3, 0xCC]:
        cls[b] = ord("M")
    for b in (0xCD, 0xCE, 0xCF):
        cls[b] = ord("G")
    for b in range(0xD0, 0xD4):
        cls[b] = ord("C")
    # Armenian (D4-D6) folds to Latin look-alikes and shares lead bytes with Cyrillic
    # and Hebrew marks; tag characters (F3) spell ASCII letters.
    for b in (0xD4, 0xD5, 0xD6, 0xE1, 0xE2, 0xEA, 0xEF, 0xF0, 0xF3):
        cls[b] = ord("X")
    return bytes(cls)


_BYTE_CLASSES = _byte_classes()


def _maybe_marked_or_mixed(b: bytes) -> bool:
    """Whether UTF-8 ``b`` may contain a Latin letter with a mark, a Cyrillic letter
    with a stress mark, or mixed scripts."""
    t = b.translate(_BYTE_CLASSES)
    if b"X" in t:
        if b"\xe2\x80" in b or b"\xe2\x81" in b:
            # U+2000-U+207F (ZWNJ, bidi marks, dashes, quotes): after NFKC never a
            # letter or a mark, so they do not count (a test checks every one).
            return _maybe_marked_or_mixed(b.replace(b"\xe2\x80", b"").replace(b"\xe2\x81", b""))
        return True
    if b"L" in t:
        return b"M" in t or b"G" in t or b"C" in t
    if b"C" in t:
        return b"G" in t or b"\xcc\x80" in b or b"\xcc\x81" in b
    return False


class _Fused:
    """Tables of the fused pass, looked up once (module attributes are cheaper than
    cached function calls on a path that runs per question)."""

    ready: ClassVar[bool] = False
    table: ClassVar[list[str | int | None]] = []
    astral: ClassVar[dict[int, str | None]] = {}
    letters: ClassVar[frozenset[str]] = frozenset()
    skip: ClassVar[frozenset[str]] = frozenset()
    paren: ClassVar[dict[int, str]] = {}

    @classmethod
    def load(cls) -> None:
        cls.table, cls.astral = T.fused_table()
        cls.letters = T.chars_matching(S.ARABIC_LETTER)
        # Neighbours of a ZWNJ are seen across what steps 0-5 remove.
        cls.skip = frozenset(T.ARABIC_DIACRITICS + T.ZWNJ + T.default_ignorables())
        cls.paren = str.maketrans(T.parenthesized_letters())
        cls.ready = True


def _split_zwnj_early(s: str) -> str:
    """Step 6 applied before step 5: neighbours are found across diacritics and ZWNJ.

    Each ZWNJ becomes a space or nothing; the spaces of one run collapse in step 10.
    The common case, a single ZWNJ between two letters, needs no scanning.
    """
    letters = _Fused.letters
    skip = _Fused.skip
    parts = s.split("\u200c")
    out = [parts[0]]
    for k in range(1, len(parts)):
        left = parts[k - 1][-1:]
        right = parts[k][:1]
        if left in letters and right in letters:
            out.append(" ")
        elif not left or not right or left in skip or right in skip:
            return _split_zwnj_scan(s)
        out.append(parts[k])
    return "".join(out)


def _split_zwnj_scan(s: str) -> str:
    letters = _Fused.letters
    skip = _Fused.skip
    n = len(s)
    out: list[str] = []
    pos = 0
    i = s.find(T.ZWNJ)
    while i != -1:
        k = i - 1
        while k >= 0 and s[k] in skip:
            k -= 1
        j = i + 1
        while j < n and s[j] in skip:
            j += 1
        out.append(s[pos:i])
        if k >= 0 and j < n and s[k] in letters and s[j] in letters:
            out.append(" ")
        pos = i + 1
        i = s.find(T.ZWNJ, pos)
    out.append(s[pos:])
    return "".join(out)


def _one_pass(s: str, limit: int = MAX_CHARS, func: str = "normalise") -> str:
    """One run of every step, fused into as few passes over the string as possible."""
    if s.isascii():
        # ASCII is NFKC-stable, casefolds like lower(), and has no digit, mark, format
        # character or homoglyph to fold: only case and whitespace remain.
        return " ".join(s.lower().split())
    if not _Fused.ready:
        _Fused.load()
    source = s
    if not unicodedata.is_normalized("NFKC", s):
        s = unicodedata.normalize("NFKC", s.translate(_Fused.paren))
        _check_expanded(s, limit, func)
    # Step 2 (casefold) happens inside the table below; see _tables.fused_map.
    if "\u200c" in s:
        s = _split_zwnj_early(s)
    # The UTF-8 form, taken before the table, answers two questions cheaply: are there
    # characters beyond the list table (lead byte F3: the plane-14 tags), and can the
    # text hold a mark after a Latin letter or a mixed-script token. The table only
    # removes characters or maps them into classes already present, so the answer
    # stays conservative after it.
    b = s.encode("utf-8", "surrogatepass")
    s = s.translate(_Fused.table)
    if b"\xf3" in b:
        s = s.translate(_Fused.astral)
    if T.FILLER_MARK in s:
        # Fillers are spaces or nothing depending on the whole text: resolve them on
        # the input, as the reference chain does first of all, and start again.
        return _one_pass(S.visible_text(source), limit, func)
    if "  " in s or s.strip(" ") != s:
        s = " ".join(s.split())
    if not s.isascii() and _maybe_marked_or_mixed(b):
        s = S._re(S.MARKS).sub(r"\1", s, timeout=S.timeout_for(s))
        s = S.fold_homoglyphs(s)
    return s


def _is_fixed(s: str) -> bool:
    """True when one more pass provably changes nothing (the common case).

    Every pass ends case-folded (``casefold`` is idempotent, and the tables only
    produce case-folded characters), so the only thing a further pass can change is
    what NFKC changes: a format character or ZWNJ removed between a letter and its
    combining mark, or the decomposed form ``casefold`` gives letters like 'ΐ'.
    """
    return s.isascii() or unicodedata.is_normalized("NFKC", s)


def normalise(text: str) -> str:
    """Normalise ``text`` as docs/normalise.md describes; every rule works on this form.

    Idempotent and total: any ``str`` of at most ``MAX_CHARS`` characters is accepted
    (lone surrogates and control characters pass through; they are not format
    characters); a longer one, or one that NFKC would make longer than
    ``MAX_EXPANSION * MAX_CHARS``, raises ``InputTooLargeError``; anything else raises
    ``TypeError``. In rare inputs a later step exposes something an earlier step would
    have changed (removing a format character between a letter and its combining mark);
    the steps are then applied again until nothing changes.

    >>> normalise("  Сколько СТОИТ  ёлка?  ")
    'сколько стоит елка?'
    >>> normalise("قيمت اين كتاب چند است؟")
    'قیمت این کتاب چند است؟'
    >>> normalise("Wie viel kostet die Straße?")
    'wie viel kostet die strasse?'
    """
    if type(text) is not str:
        text = _check(text, "normalise")
    if len(text) > MAX_CHARS:
        check_length(text, MAX_CHARS, "normalise")
    if text.isascii():
        return " ".join(text.lower().split())
    out = _one_pass(text)
    if out.isascii() or unicodedata.is_normalized("NFKC", out):
        return out
    for _ in range(_MAX_PASSES):
        nxt = _one_pass(out)
        if nxt == out or _is_fixed(nxt):
            return nxt
        out = nxt
    return out


@dataclass(frozen=True)
class Normalised:
    """Normalised text plus, per output character, where in the input it came from.

    ``offsets[i]`` is the index in the input of the (first) character output character
    ``i`` came from; ``ends[i]`` is the end of that source character or cluster, so a
    match ``[start, end)`` in ``text`` maps back with :meth:`source_span`.
    """

    text: str
    offsets: tuple[int, ...]
    ends: tuple[int, ...] = field(default=(), repr=False, compare=False)
    source_length: int = field(default=-1, repr=False, compare=False)

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The input span ``[a, b)`` that output span ``[start, end)`` came from.

        ``b`` covers the whole of the last source character or cluster (a letter and the
        accents the normaliser removed from it, a ligature, a ZWNJ run).

        >>> n = normalise_with_offsets("Ｃafé\u0301 now")
        >>> n.text
        'cafe now'
        >>> n.source_span(0, 4)
        (0, 5)
        """
        n = len(self.text)
        if not (0 <= start <= end <= n):
            raise ValueError(f"span [{start}, {end}) is outside the text (length {n})")
        if start == end:  # an insertion point: before output char `start`, or after all
            if start < n:
                pos = self.offsets[start]
            elif n == 0:
                pos = 0
            else:
                pos = self.ends[-1] if self.ends else self._guess_end(n - 1)
            return (pos, pos)
        if self.ends:
            return (self.offsets[start], self.ends[end - 1])
        return (self.offsets[start], self._guess_end(end - 1))

    def _guess_end(self, i: int) -> int:
        if i < 0:
            return 0
        here = self.offsets[i]
        for later in self.offsets[i + 1 :]:
            if later > here:
                return later
        return self.source_length if self.source_length >= 0 else here + 1


# ---------------------------------------------------------------------------- offsets
# A working text is a list of units (char, start, end): the output character and the
# input range it stands for. Each function mirrors one fused operation of _one_pass.

_Unit = tuple[str, int, int]


@cache
def _unsafe_starts() -> frozenset[str]:
    """Characters before which NFKC of a concatenation may differ from concatenation.

    A segment boundary is safe before a character whose NFKC starts with a starter that
    never combines with what precedes it (this is ICU's "has boundary before").
    """
    backward: set[str] = set(map(chr, range(0x1161, 0x1176))) | set(map(chr, range(0x11A8, 0x11C3)))
    for cp in range(0x20000):
        ch = chr(cp)
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                pair = chr(int(parts[0], 16)) + chr(int(parts[1], 16))
                if unicodedata.normalize("NFC", pair) == ch:
                    backward.add(pair[1])
    unsafe = set(backward)
    for cp in range(0x20000):
        ch = chr(cp)
        if unicodedata.combining(ch):
            unsafe.add(ch)
            continue
        k = unicodedata.normalize("NFKC", ch)
        if k and k != ch and (unicodedata.combining(k[0]) or k[0] in backward):
            unsafe.add(ch)
    return frozenset(unsafe)


class _CharMap(dict[str, str]):
    """A per-character composition of steps, computed on first sight of a character
    (bounded, so adversarial input cannot grow it without limit)."""

    def __init__(self, func: Callable[[str], str]) -> None:
        super().__init__()
        self.func = func

    def __missing__(self, ch: str) -> str:
        value = self.func(ch)
        if len(self) < 65536:
            self[ch] = value
        return value


_CASEFOLD_A = _CharMap(lambda ch: "".join(T.table_a().get(c, c) for c in ch.casefold()))
_TABLE_B = _CharMap(lambda ch: T.table_b().get(ch, ch))
_NFKC_CHAR = _CharMap(lambda ch: unicodedata.normalize("NFKC", ch))
_PAREN = _CharMap(lambda ch: T.parenthesized_letters().get(ch, ch))
_VISIBLE = _CharMap(lambda ch: ch.translate(T.visible_map()))


def _fused_char(ch: str) -> str:
    cp = ord(ch)
    value = _Fused.table[cp] if cp < len(_Fused.table) else _Fused.astral.get(cp, cp)
    if value is None:
        return ""
    return chr(value) if isinstance(value, int) else value


_FUSED_CHAR = _CharMap(_fused_char)


def _u_map(units: list[_Unit], charmap: _CharMap) -> list[_Unit]:
    out: list[_Unit] = []
    for u in units:
        rep = charmap[u[0]]
        if rep == u[0]:
            out.append(u)
        else:
            out.extend((c, u[1], u[2]) for c in rep)
    return out


def _u_nfkc(units: list[_Unit]) -> list[_Unit]:
    """NFKC per segment; segments start where NFKC can have no effect across."""
    unsafe = _unsafe_starts()
    out: list[_Unit] = []
    i, n = 0, len(units)
    while i < n:
        j = i + 1
        while j < n and units[j][0] in unsafe:
            j += 1
        raw = units[i][0] if j == i + 1 else "".join(u[0] for u in units[i:j])
        norm = _NFKC_CHAR[raw] if j == i + 1 else unicodedata.normalize("NFKC", raw)
        if norm == raw:
            out.extend(units[i:j])
        else:
            a, b = units[i][1], units[j - 1][2]
            out.extend((c, a, b) for c in norm)
        i = j
    return out


def _u_nfkc_casefold_a(units: list[_Unit]) -> list[_Unit]:
    """NFKC per safe segment, then casefold and steps 3-5 per character."""
    if not unicodedata.is_normalized("NFKC", "".join(u[0] for u in units)):
        units = _u_nfkc(_u_map(units, _PAREN))
    return _u_map(units, _CASEFOLD_A)


def _u_visible(units: list[_Unit]) -> list[_Unit]:
    """``steps.visible_text`` on units (needed only when the text holds fillers)."""
    units = _u_map(units, _VISIBLE)
    text = "".join(u[0] for u in units)
    if T.FILLER_MARK not in text:
        return units
    blank = " " if text.count(T.FILLER_MARK) > len(text.split()) - 1 else ""
    out: list[_Unit] = []
    for u in units:
        if u[0] != T.FILLER_MARK:
            out.append(u)
        elif blank:
            out.append((blank, u[1], u[2]))
    return out


def _u_zwnj(units: list[_Unit]) -> list[_Unit]:
    text = "".join(u[0] for u in units)
    if T.ZWNJ not in text:
        return units
    out: list[_Unit] = []
    pos = 0
    for m in S._re(S.ZWNJ_BETWEEN_LETTERS).finditer(text, timeout=S.timeout_for(text)):
        out.extend(units[pos : m.start()])
        out.append((" ", units[m.start()][1], units[m.end() - 1][2]))
        pos = m.end()
    out.extend(units[pos:])
    return out


def _u_table_b(units: list[_Unit]) -> list[_Unit]:
    return _u_map(units, _TABLE_B)


def _u_latin_marks(units: list[_Unit]) -> list[_Unit]:
    """Marks after Latin letters and stress marks after Cyrillic ones: the removed
    marks widen the unit of the character before them."""
    text = "".join(u[0] for u in units)
    out: list[_Unit] = []
    pos = 0
    for m in S._re(S.MARKS).finditer(text, timeout=S.timeout_for(text)):
        out.extend(units[pos : m.start()])
        if m.group(1) is not None:
            ch, a, _ = units[m.start()]
            out.append((ch, a, units[m.end() - 1][2]))
        elif out:
            ch, a, _ = out[-1]
            out[-1] = (ch, a, units[m.end() - 1][2])
        pos = m.end()
    out.extend(units[pos:])
    return out


def _u_whitespace(units: list[_Unit]) -> list[_Unit]:
    out: list[_Unit] = []
    run: list[_Unit] = []
    for u in units:
        if u[0].isspace():
            run.append(u)
            continue
        if run:
            if out:
                out.append((" ", run[0][1], run[-1][2]))
            run = []
        out.append(u)
    return out


def _u_homoglyphs(units: list[_Unit]) -> list[_Unit]:
    text = "".join(u[0] for u in units)
    if text.isascii():
        return units
    folded = S.fold_homoglyph_units(text)
    return [(ch, units[i][1], units[j - 1][2]) for ch, i, j in folded]


def _units_pass(units: list[_Unit]) -> list[_Unit]:
    units = _u_nfkc_casefold_a(units)
    units = _u_zwnj(units)
    units = _u_table_b(units)
    units = _u_latin_marks(units)
    units = _u_whitespace(units)
    return _u_homoglyphs(units)


def normalise_with_offsets(text: str) -> Normalised:
    """Normalise and keep, for each output character, the input offset it came from.

    The text is exactly ``normalise(text)``. Slower than ``normalise`` (it tracks every
    character in Python), so use it where spans in the original text are needed. At
    most ``MAX_OFFSETS_CHARS`` characters (and ``MAX_EXPANSION`` times that after NFKC)
    are accepted; a longer text raises ``InputTooLargeError``.

    >>> n = normalise_with_offsets("  Цена\u00a0за ﻙ ")
    >>> n.text, n.offsets
    ('цена за ک', (2, 3, 4, 5, 6, 7, 8, 9, 10))
    """
    s = _check(text, "normalise_with_offsets")
    check_length(s, MAX_OFFSETS_CHARS, "normalise_with_offsets")
    if not _Fused.ready:
        _Fused.load()
    if s.isascii():
        fast = _fast_offsets(s, s, False)
        if fast is not None:
            return fast
    else:
        in_place = s  # s with NFKC applied, when NFKC maps character to character
        normalised = unicodedata.is_normalized("NFKC", s)
        if not normalised:
            nfkc = unicodedata.normalize("NFKC", s.translate(_Fused.paren))
            _check_expanded(nfkc, MAX_OFFSETS_CHARS, "normalise_with_offsets")
            if len(nfkc) == len(s):
                one = s.translate(_nfkc_one())
                if one == nfkc:
                    in_place, normalised = one, True
        if normalised:
            b = in_place.encode("utf-8", "surrogatepass")
            if not _maybe_marked_or_mixed(b):
                # The common case, as in _one_pass: one table lookup per character,
                # then whitespace. Anything subtler takes the general path below.
                placed = _zwnj_in_place(in_place) if T.ZWNJ in in_place else in_place
                fast = _fast_offsets(s, placed, b"\xf3" in b)
                if fast is not None:
                    return fast
    fillers = not _FILLERS.isdisjoint(s)
    units = [(ch, i, i + 1) for i, ch in enumerate(s)]
    if fillers:
        units = _u_visible(units)
    units = _units_pass(units)
    for _ in range(_MAX_PASSES):
        out = "".join(u[0] for u in units)
        if _is_fixed(out):
            break
        nxt = _units_pass(units)
        if [u[0] for u in nxt] == [u[0] for u in units]:
            break
        units = nxt
    return _normalised(units, len(s))


_FILLERS = frozenset(T.FILLERS)

# The fast path of normalise_with_offsets keeps every character in place: a character
# the fused table deletes becomes _GONE, one it expands (ß -> ss) stops the fast path.
_GONE = "\uffff"
_MANY = "\ufffe"


@T.snapshotted
def _place_tables() -> tuple[list[str | int], dict[int, str | int]]:
    def place(v: str | int | None) -> str | int:
        if v is None:
            return _GONE
        if isinstance(v, str) and len(v) != 1:
            return _MANY
        return v

    lst, astral = T.fused_table()
    return [place(v) for v in lst], {k: place(v) for k, v in astral.items()}


@T.snapshotted
def _nfkc_one() -> list[str | int]:
    """Per character: its NFKC when that is one character (parenthesized letters: the
    letter), else itself. Translating with it equals NFKC when no character composes
    with its neighbours or expands; the caller checks that."""
    table: list[str | int] = list(range(_LIST_SIZE))
    paren = T.parenthesized_letters()
    for cp in range(_LIST_SIZE):
        ch = chr(cp)
        k = paren.get(ch) or unicodedata.normalize("NFKC", ch)
        if len(k) == 1 and k != ch:
            table[cp] = k
    return table


_LIST_SIZE = 0x20000


def _zwnj_in_place(s: str) -> str:
    """Step 6 as in ``_split_zwnj_early``, but each ZWNJ becomes a space or _GONE."""
    letters = _Fused.letters
    skip = _Fused.skip
    n = len(s)
    out: list[str] = []
    pos = 0
    i = s.find(T.ZWNJ)
    while i != -1:
        k = i - 1
        while k >= 0 and s[k] in skip:
            k -= 1
        j = i + 1
        while j < n and s[j] in skip:
            j += 1
        out.append(s[pos:i])
        both = k >= 0 and j < n and s[k] in letters and s[j] in letters
        out.append(" " if both else _GONE)
        pos = i + 1
        i = s.find(T.ZWNJ, pos)
    out.append(s[pos:])
    return "".join(out)


def _fast_offsets(s: str, placed: str, astral: bool) -> Normalised | None:
    """Offsets without per-character objects, when no character expands.

    ``placed`` is ``s`` with steps 1 and 6 applied in place (same length). Returns None
    when the fast path does not apply (a character expands, a filler or a sentinel
    occurs, or the result would need a second pass).
    """
    if not s.isascii() and (_GONE in s or _MANY in s):
        return None
    lst, ast = _place_tables()
    t = placed.translate(lst)
    if astral:
        t = t.translate(ast)
    if not t.isascii() and (_MANY in t or T.FILLER_MARK in t):
        return None
    n = len(s)
    if "  " not in t and t[:1] != " " and t[-1:] != " ":
        if _GONE not in t:
            return _make(t, tuple(range(n)), tuple(range(1, n + 1)), n)
        text = t.replace(_GONE, "")
        if "  " not in text and text[:1] != " " and text[-1:] != " ":
            kept: list[int] = []
            pos = 0
            for piece in t.split(_GONE):
                kept.extend(range(pos, pos + len(piece)))
                pos += len(piece) + 1
            return _make(text, tuple(kept), tuple([k + 1 for k in kept]), n)
    # Whitespace to collapse: walk the space-separated pieces. A gap (spaces, and
    # pieces that are only deleted characters) becomes one space, from its first space
    # to its last, between two visible pieces.
    parts: list[str] = []
    offsets: list[int] = []
    ends: list[int] = []
    pos = 0
    first = last = -1
    size = len(t)
    for piece in t.split(" "):
        k = len(piece)
        if k:
            vis = piece.replace(_GONE, "") if _GONE in piece else piece
            if vis:
                if parts and first >= 0:
                    parts.append(" ")
                    offsets.append(first)
                    ends.append(last + 1)
                parts.append(vis)
                if len(vis) == k:
                    offsets.extend(range(pos, pos + k))
                    ends.extend(range(pos + 1, pos + k + 1))
                else:
                    kept = [pos + i for i, c in enumerate(piece) if c != _GONE]
                    offsets.extend(kept)
                    ends.extend([j + 1 for j in kept])
                first = -1
        space = pos + k
        if space < size:
            if first < 0:
                first = space
            last = space
        pos = space + 1
    return _make("".join(parts), tuple(offsets), tuple(ends), n)


def _make(text: str, offsets: tuple[int, ...], ends: tuple[int, ...], n: int) -> Normalised | None:
    """A ``Normalised`` built without the dataclass's checks, or None when ``text``
    would need a second pass."""
    if not _is_fixed(text):
        return None
    out = object.__new__(Normalised)
    out.__dict__.update(text=text, offsets=offsets, ends=ends, source_length=n)
    return out


def _normalised(units: list[_Unit], source_length: int) -> Normalised:
    return Normalised(
        text="".join([u[0] for u in units]),
        offsets=tuple([u[1] for u in units]),
        ends=tuple([u[2] for u in units]),
        source_length=source_length,
    )


# ---------------------------------------------------------------------------- explain


@dataclass(frozen=True)
class Step:
    """One step of the normaliser that changed the text, for ``--explain``."""

    name: str
    before: str
    after: str


def explain(text: str) -> list[Step]:
    """The steps that changed ``text``, in order, each with the text before and after.

    The last ``after`` equals ``normalise(text)``. When a second pass is needed (see
    ``normalise``), its steps are named with a ``" (pass 2)"`` suffix.

    >>> for step in explain("Ｑué  ﻙ"):
    ...     print(f"{step.name}: {step.before!r} -> {step.after!r}")
    nfkc: 'Ｑué  ﻙ' -> 'Qué  ك'
    casefold: 'Qué  ك' -> 'qué  ك'
    arabic_letters: 'qué  ك' -> 'qué  ک'
    latin_diacritics: 'qué  ک' -> 'que  ک'
    whitespace: 'que  ک' -> 'que ک'
    """
    s = _check(text, "explain")
    check_length(s, MAX_OFFSETS_CHARS, "explain")
    result: list[Step] = []
    for n in range(1, _MAX_PASSES + 2):
        start = s
        for name, func in S.STEPS:
            after = func(s)
            if after != s:
                result.append(Step(name if n == 1 else f"{name} (pass {n})", s, after))
                s = after
        if s == start or _is_fixed(s):
            break
    return result
