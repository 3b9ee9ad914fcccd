"""The normaliser's steps, one small pure ``str -> str`` function each.

``guardlex.normalise`` runs a fused, faster version of these functions; this module is
the readable reference, used by ``explain`` and by the tests, which check that the fused
version and the chain of steps below always agree. The ten steps, in order:

 1. :func:`nfkc`                    7. :func:`remove_format_chars`
 2. :func:`fold_case`               8. :func:`yo_to_ye`
 3. :func:`arabic_to_persian`       9. :func:`strip_latin_diacritics`
 4. :func:`ascii_digits`           10. :func:`collapse_whitespace`
 5. :func:`strip_arabic_diacritics`
 6. :func:`split_zwnj`

and the evasion defences around them: :func:`visible_text` before step 1 (tag
characters, invisible characters, fillers), parenthesized letters inside step 1,
:func:`fold_arabic_variants` after step 3, :func:`strip_cyrillic_stress` and
:func:`fold_lookalikes` before step 9, and :func:`traditional_to_simplified` and
:func:`fold_homoglyphs` at the end. Each touches only characters that ordinary text in
the ten languages does not contain, so the ten steps stay exact for ordinary text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache

import regex

from guardlex.normalise import _tables as T
from guardlex.normalise._limits import MAX_CHARS, MAX_EXPANSION, check_expanded, check_length

__all__ = [
    "STEPS",
    "arabic_to_persian",
    "ascii_digits",
    "collapse_whitespace",
    "fold_arabic_variants",
    "fold_case",
    "fold_homoglyphs",
    "fold_lookalikes",
    "nfkc",
    "remove_format_chars",
    "split_zwnj",
    "strip_arabic_diacritics",
    "strip_cyrillic_stress",
    "strip_latin_diacritics",
    "traditional_to_simplified",
    "visible_text",
    "yo_to_ye",
]

_V1 = regex.V1

#: Arabic-script letters (the neighbours that turn a ZWNJ into a space). Tatweel is a
#: "letter" to Unicode (Lm) but only a stretching stroke, and step 5 has removed it.
ARABIC_LETTER = r"[[\p{Script=Arabic}&&\p{L}]--\u0640]"
LATIN_LETTER = r"[\p{Script=Latin}&&\p{L}]"
CYRILLIC_LETTER = r"[\p{Script=Cyrillic}&&\p{L}]"
GREEK_LETTER = r"[\p{Script=Greek}&&\p{L}]"


def timeout_for(text: str) -> float:
    """A generous regex time limit that grows with the input (all patterns are linear)."""
    return 2.0 + len(text) * 2e-5


@cache
def _re(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, _V1)


#: Step 6: a ZWNJ run between two Arabic-script letters (after step 5).
ZWNJ_BETWEEN_LETTERS = rf"(?<={ARABIC_LETTER})\u200c+(?={ARABIC_LETTER})"
#: Step 9: the combining marks that follow a Latin letter.
LATIN_MARKS = rf"({LATIN_LETTER})\p{{M}}+"
#: Stress marks (acute, grave) among the marks that follow a Cyrillic letter.
CYRILLIC_STRESS_MARKS = rf"(?<={CYRILLIC_LETTER}\p{{M}}*)[{T.CYRILLIC_STRESS}]+"
#: Both, as the fused normaliser runs them (one scan): replace with group 1.
MARKS = f"{LATIN_MARKS}|{CYRILLIC_STRESS_MARKS}"

# A token is a run of letters and combining marks. In the script skeleton of a text
# (see _skeleton) a token is a run of L (Latin letter), C (Cyrillic), G (Greek), o (other
# letter) and m (mark). A token mixes scripts exactly when somewhere in it a letter of
# one of L, C, G is followed, across o and m only, by a letter of another; this pattern
# finds such changes in linear time (possessive runs never backtrack).
SCRIPT_CHANGE = r"L[om]*+[CG]|C[om]*+[LG]|G[om]*+[LC]"


def visible_text(text: str) -> str:
    """What a reader (or a model) sees of ``text``: the step before all others.

    * Tag characters U+E0020-U+E007E, invisible in most fonts, each spell an ASCII
      character: they are decoded to it, so a question hidden in tags is read as text.
    * Every other Default_Ignorable_Code_Point is dropped (zero-width spaces, bidi marks
      and overrides, variation selectors, the combining grapheme joiner, the other tag
      characters, ...), except ZWNJ and ZWJ, which shape Persian and Indic words.
    * The Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) and the braille blank U+2800
      show as blanks. When a text has more of them than it has gaps between words they
      are its spaces, and become spaces; otherwise they are hidden inside words, and are
      dropped.

    Case, width and everything else are left alone, so this is the text to show a model
    when a question has been routed: the router reads exactly ``normalise`` of it.

    >>> visible_text("Hi\U000e0050\U000e0052\U000e0049\U000e0043\U000e0045 pri\u200bce")
    'HiPRICE price'
    >>> visible_text("how\u3164much\u3164is\u3164it"), visible_text("what is the pri\u3164ce")
    ('how much is it', 'what is the price')
    """
    if text.isascii():
        return text
    s = text.translate(T.visible_map())
    if T.FILLER_MARK in s:
        blanks = s.count(T.FILLER_MARK)
        gaps = len(s.split()) - 1
        s = s.replace(T.FILLER_MARK, " " if blanks > gaps else "")
    return s


def nfkc(text: str) -> str:
    """Step 1: Unicode NFKC, so that look-alike encodings of one letter become one.

    Arabic presentation forms, fullwidth letters and digits, ligatures and circled
    letters and numbers all fold to the characters a pattern author types. A
    parenthesized Latin letter becomes the bare letter first (NFKC would give "(p)").

    >>> nfkc("ＧＰＴ ﻙ ﬁ ① ⓟ⒭")
    'GPT ك fi 1 pr'
    """
    check_length(text, MAX_CHARS, "steps.nfkc")
    if unicodedata.is_normalized("NFKC", text):
        return text
    out = unicodedata.normalize("NFKC", text.translate(_paren_table()))
    check_expanded(out, MAX_CHARS, "steps.nfkc")
    return out


def fold_case(text: str) -> str:
    """Step 2: full Unicode case folding, stronger than ``lower()``.

    >>> fold_case("Straße ΣΟΦΟΣ Ёлка")
    'strasse σοφοσ ёлка'
    """
    check_length(text, MAX_EXPANSION * MAX_CHARS, "steps.fold_case")
    return text.casefold()


def arabic_to_persian(text: str) -> str:
    """Step 3: Arabic letter forms to their Persian counterparts.

    Persian keyboards and Arabic keyboards type different code points for "the same"
    yeh and kaf; rules are written once, in the Persian forms. Hamza-carrying alefs and
    the ezafe heh fold to their bare letters; alef madda (آ) stays, it is a different
    letter in Persian.

    >>> arabic_to_persian("كيف حالك؟ مدرسة إلى آخر")
    'کیف حالک؟ مدرسه الی آخر'
    """
    return text.translate(_arabic_table())


def fold_arabic_variants(text: str) -> str:
    """After step 3: Urdu, Kurdish, Pashto and Sindhi letter shapes to Persian letters.

    The heh, yeh, kaf, noon and waw of neighbouring languages look the same as (or
    close to) the Persian letters and would otherwise hide a Persian or Arabic word.
    The table is ``data/arabic_variants.tsv``.

    >>> fold_arabic_variants("قیمت چقدر ھے")
    'قیمت چقدر هی'
    """
    return text.translate(_arabic_variant_table())


def ascii_digits(text: str) -> str:
    """Step 4: every decimal digit of every script to ASCII; Arabic separators too.

    >>> ascii_digits("۱۴۰۳ و ٢٠٢٤ और २०२५, ٣٫٥ و ١٬٠٠٠")
    '1403 و 2024 और 2025, 3.5 و 1,000'
    """
    return text.translate(_digit_table())


def strip_arabic_diacritics(text: str) -> str:
    """Step 5: harakat, superscript alef and tatweel removed (they are optional).

    >>> strip_arabic_diacritics("مُحَمَّد رَحْمٰن كـــتاب")
    'محمد رحمن كتاب'
    """
    return text.translate(_diacritic_table())


def split_zwnj(text: str) -> str:
    """Step 6: ZWNJ between Arabic-script letters -> space; any other ZWNJ removed.

    Persian writes می‌خواهم with a zero-width non-joiner; rules see two tokens, the
    same as the common spelling with a space. A ZWNJ elsewhere is only an evasion (it
    would split a Latin keyword), so it disappears. A run of several ZWNJ counts as one.

    >>> split_zwnj("می\u200cخواهم pr\u200cice")
    'می خواهم price'
    """
    if T.ZWNJ not in text:
        return text
    text = _re(ZWNJ_BETWEEN_LETTERS).sub(" ", text, timeout=timeout_for(text))
    return text.replace(T.ZWNJ, "")


def remove_format_chars(text: str) -> str:
    """Step 7: every other format character (Unicode category Cf) removed.

    Zero-width spaces and joiners, bidi marks, embeddings, overrides and isolates, the
    soft hyphen, BOM and word joiner are invisible and only ever hide a word.

    >>> remove_format_chars("pri\u200bce \u202eabc\u202c \u2066x\u2069 co\u00adst")
    'price abc x cost'
    """
    return text.translate(_format_table())


def yo_to_ye(text: str) -> str:
    """Step 8: Russian ё -> е, as most Russian text is written without the dots.

    >>> yo_to_ye("ещё всё")
    'еще все'
    """
    return text.replace("ё", "е")


def strip_cyrillic_stress(text: str) -> str:
    """After step 8: stress marks (acute U+0301, grave U+0300) on Cyrillic letters go.

    Russian teaching texts mark stress (сто́ит); the marks are optional and would split a
    keyword. Only these two marks go, and only after a Cyrillic letter: й keeps its
    breve. Letters that are a Cyrillic letter plus one of them (ѐ, ѝ) lose it too.

    >>> strip_cyrillic_stress("Ско\u0301лько сто\u0300ит ѐлка й")
    'Сколько стоит елка й'
    """
    text = text.translate(_cyrillic_stress_table())
    if "\u0300" not in text and "\u0301" not in text:
        return text
    return _re(CYRILLIC_STRESS_MARKS).sub("", text, timeout=timeout_for(text))


def fold_lookalikes(text: str) -> str:
    """Before step 9: letters that only look like basic Latin letters become them.

    Latin small capitals (ᴘʀɪᴄᴇ), dotless ı and ȷ, script ɡ, Latin alpha ɑ, Armenian
    and Cherokee letters shaped like Latin ones (հ օ Ꭱ), negative circled and squared
    letters: no locale of guardlex writes them, and they hide Latin words. The table is
    ``data/lookalikes.tsv`` (UTS #39 skeletons and Unicode names).

    >>> fold_lookalikes("ᴘʀɪᴄᴇ ɡօօd Ꮲ")
    'price good p'
    """
    return text.translate(_lookalike_table())


def strip_latin_diacritics(text: str) -> str:
    """Step 9: Latin letters lose their diacritics; other scripts keep their marks.

    Equivalent to NFD, dropping every combining mark that follows a Latin base letter,
    and recomposing: precomposed letters map to their base letter and any combining
    marks still attached to a Latin letter are dropped. Cyrillic й, Devanagari matras
    and nukta keep their marks.

    >>> strip_latin_diacritics("¿cuánto cuesta? ça coûte für naïve x\u0301 й क़")
    '¿cuanto cuesta? ca coute fur naive x й क़'
    """
    text = text.translate(_latin_table())
    return _re(LATIN_MARKS).sub(r"\1", text, timeout=timeout_for(text))


def collapse_whitespace(text: str) -> str:
    """Step 10: every whitespace run -> one ASCII space; ends trimmed.

    Whitespace is what ``str.isspace`` accepts: Unicode White_Space (NBSP, U+202F,
    ideographic space, line and paragraph separators ...) plus the four ASCII
    information separators U+001C-U+001F.

    >>> collapse_whitespace("  price\u00a0list\u202f\u3000 now\\n")
    'price list now'
    """
    return " ".join(text.split())


def traditional_to_simplified(text: str) -> str:
    """Traditional Chinese characters -> Simplified, so one pattern matches both.

    The table is ICU's Traditional-Simplified transform applied one character at a
    time (see ``tools/gen_tables.py``).

    >>> traditional_to_simplified("請問價格多少？")
    '请问价格多少？'
    """
    return text.translate(_t2s_table())


def fold_homoglyphs(text: str) -> str:
    """Fold look-alike letters of a minority script into a token's majority script.

    A token (a run of letters and marks) that mixes Latin, Cyrillic and Greek letters
    is rewritten in the script most of its letters are in, letter by letter through
    ICU's confusables: "phоne" with a Cyrillic о becomes Latin "phone"; "цeна" with a
    Latin e becomes Cyrillic "цена". Tokens written in one script are never touched,
    so Russian and Greek words stay as they are. Ties go to Latin. A letter folded
    into Latin loses its combining marks, as step 9 would have removed them.

    >>> fold_homoglyphs("phоne цeна привет")
    'phone цена привет'
    """
    tokens = _mixed_tokens(text)
    if not tokens:
        return text
    out: list[str] = []
    pos = 0
    for a, b, skel in tokens:
        out.append(text[pos:a])
        out.extend(ch for ch, _, _ in _fold_token(text[a:b], skel))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def fold_homoglyph_units(text: str) -> list[tuple[str, int, int]]:
    """Homoglyph folding that also says where each output character came from.

    Returns ``(char, start, end)`` triples: the output character and the index range of
    ``text`` it replaces (a dropped combining mark widens the range of its letter).
    """
    out: list[tuple[str, int, int]] = []
    pos = 0
    for a, b, skel in _mixed_tokens(text):
        out.extend((ch, i, i + 1) for i, ch in enumerate(text[pos:a], pos))
        out.extend((ch, a + i, a + j) for ch, i, j in _fold_token(text[a:b], skel))
        pos = b
    out.extend((ch, i, i + 1) for i, ch in enumerate(text[pos:], pos))
    return out


class _AstralScripts(dict[int, str]):
    """Skeleton codes of characters above the list table, classified on first sight."""

    def __missing__(self, key: int) -> str:
        code = _classify(chr(key))
        if len(self) < 65536:  # bounded: adversarial input cannot grow it for ever
            self[key] = code
        return code


_ASTRAL_SCRIPTS = _AstralScripts()
_CLASSES = rf"({LATIN_LETTER})|({CYRILLIC_LETTER})|({GREEK_LETTER})|(\p{{L}})|(\p{{M}})"
_CODES = " LCGom"


def _classify(ch: str) -> str:
    m = _re(_CLASSES).match(ch, timeout=5.0)
    return _CODES[m.lastindex or 0] if m else " "


@cache
def _script_table() -> list[str]:
    table = [" "] * 0x20000
    for code, pattern in (
        ("m", r"\p{M}"),
        ("o", r"\p{L}"),
        ("L", LATIN_LETTER),
        ("C", CYRILLIC_LETTER),
        ("G", GREEK_LETTER),
    ):
        for m in _re(f"(?:{pattern})+").finditer(_all_chars(), timeout=60.0):
            table[m.start() : m.end()] = [code] * (m.end() - m.start())
    return table


@cache
def _all_chars() -> str:
    return "".join(map(chr, range(0x20000)))


def _skeleton(text: str) -> str:
    """One code per character: L, C, G (Latin, Cyrillic, Greek letter), o (other
    letter), m (combining mark) or a space (anything else).

    >>> _skeleton("phоne, цeна!")
    'LLCLL  CLCC '
    """
    skel = text.translate(_script_table())
    if not skel.isascii():
        skel = skel.translate(_ASTRAL_SCRIPTS)
    return skel


def _mixed_tokens(text: str) -> list[tuple[int, int, str]]:
    """Bounds and skeletons of the tokens that mix Latin, Cyrillic and Greek letters."""
    if text.isascii():
        return []
    skel = _skeleton(text)
    if ("L" in skel) + ("C" in skel) + ("G" in skel) < 2:
        return []
    # Cheap exact test before the regex scan: with o and m deleted, a change of script
    # inside a token is two adjacent letters of different scripts.
    letters = skel.translate(_DROP_OTHER)
    if not any(pair in letters for pair in ("LC", "LG", "CL", "CG", "GL", "GC")):
        return []
    tokens: list[tuple[int, int, str]] = []
    end = 0
    for m in _re(SCRIPT_CHANGE).finditer(skel, timeout=timeout_for(skel)):
        if m.start() < end:
            continue  # a further change inside a token already taken
        start = skel.rfind(" ", 0, m.start()) + 1
        end = skel.find(" ", m.end())
        if end < 0:
            end = len(skel)
        tokens.append((start, end, skel[start:end]))
    return tokens


def _fold_token(token: str, skel: str) -> list[tuple[str, int, int]]:
    latin, cyrillic, greek = skel.count("L"), skel.count("C"), skel.count("G")
    # The majority script; ties go to Latin, then Cyrillic.
    target = "L" if latin >= max(cyrillic, greek) else ("C" if cyrillic >= greek else "G")
    table = T.confusable_map()[_SCRIPT_NAMES[target]]
    out: list[tuple[str, int, int]] = []
    # After a letter folded into Latin every mark goes (step 9); after one folded into
    # Cyrillic the stress marks go (strip_cyrillic_stress), other marks stay.
    dropping = ""
    for i, ch in enumerate(token):
        code = skel[i]
        if code == "m" and dropping and (dropping == "L" or ch in T.CYRILLIC_STRESS):
            ch0, a, _ = out[-1]
            out[-1] = (ch0, a, i + 1)
            continue
        if code != "m":
            dropping = ""
        if code != target and code in "LCG" and ch in table:
            out.append((table[ch], i, i + 1))
            dropping = target if target in "LC" else ""
        else:
            out.append((ch, i, i + 1))
    return out


_SCRIPT_NAMES = {"L": "Latin", "C": "Cyrillic", "G": "Greek"}
_DROP_OTHER = str.maketrans("", "", "om")


STEPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("invisible", visible_text),
    ("nfkc", nfkc),
    ("casefold", fold_case),
    ("arabic_letters", arabic_to_persian),
    ("arabic_variants", fold_arabic_variants),
    ("digits", ascii_digits),
    ("arabic_diacritics", strip_arabic_diacritics),
    ("zwnj", split_zwnj),
    ("format_chars", remove_format_chars),
    ("yo", yo_to_ye),
    ("cyrillic_stress", strip_cyrillic_stress),
    ("lookalikes", fold_lookalikes),
    ("latin_diacritics", strip_latin_diacritics),
    ("whitespace", collapse_whitespace),
    ("traditional_to_simplified", traditional_to_simplified),
    ("homoglyphs", fold_homoglyphs),
)
"""Every step in order, as ``(name, function)``; the names appear in ``explain``."""


@cache
def _arabic_table() -> dict[int, str]:
    return str.maketrans(T.ARABIC_TO_PERSIAN)


@cache
def _paren_table() -> dict[int, str]:
    return str.maketrans(T.parenthesized_letters())


@cache
def _arabic_variant_table() -> dict[int, str]:
    return str.maketrans(T.arabic_variant_map())


@cache
def _cyrillic_stress_table() -> dict[int, str]:
    return str.maketrans(T.cyrillic_stress_map())


@cache
def _lookalike_table() -> dict[int, str]:
    return str.maketrans(T.lookalike_map())


@cache
def _digit_table() -> dict[int, str]:
    return str.maketrans(T.digit_map())


@cache
def _diacritic_table() -> dict[int, None]:
    return dict.fromkeys(map(ord, T.ARABIC_DIACRITICS))


@cache
def _format_table() -> dict[int, None]:
    return dict.fromkeys(map(ord, T.format_chars()))


@cache
def _latin_table() -> dict[int, str]:
    return str.maketrans(T.latin_base_map())


@cache
def _t2s_table() -> dict[int, str]:
    return str.maketrans(T.t2s_map())
