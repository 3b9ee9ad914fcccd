"""Money next to a number: currency signs, codes and words are the money unit of a number,
not a noun that breaks its unit chain ("8 EUR per seat", "900 руб. в месяц")."""

from __future__ import annotations

import functools
import unicodedata

from guardlex.gates._text import (
    normalise,
)
from guardlex.gates.faith.common import _is_han
from guardlex.rules.locale_info import locale_infos, shipped_locale_infos


def _letter(ch: str) -> bool:
    """A letter or a combining mark outside Han (Devanagari रुपये has vowel signs)."""
    return (ch.isalpha() or unicodedata.category(ch)[0] == "M") and not _is_han(ch)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and (text[pos].isspace() or text[pos] == "-"):
        pos += 1
    return pos


#: Currency and magnitude words read as the money unit next to a number, not as a noun
#: ("8 EUR per seat", "900 руб. в месяц", "500 هزار تومان"): ``money.currency`` and
#: ``money.magnitudes`` of each shipped locale's ``locale.yaml``. Currency signs (Unicode
#: category Sc: € $ ¥ ₹ ₽ ﷼) count too. Matched after normalisation (lower case, no accents).
MONEY_WORDS = tuple(
    dict.fromkeys(w for info in shipped_locale_infos().values() for w in info.money_words)
)


@functools.cache
def _money_words() -> frozenset[str]:
    """The money words of every discovered locale (shipped and entry points), as written
    and normalised."""
    out: set[str] = set()
    for info in locale_infos().values():
        for word in info.money_words:
            out.add(word)
            out.add(normalise(word))
    return frozenset(out)


def _money_at(text: str, pos: int) -> int:
    """End of a currency sign or money word at ``pos`` (with an abbreviation's dot), or
    ``pos``."""
    if pos >= len(text):
        return pos
    ch = text[pos]
    if unicodedata.category(ch) == "Sc":
        return pos + 1
    money = _money_words()
    if _is_han(ch):
        for size in (3, 2, 1):
            if text[pos : pos + size] in money:
                return pos + size
        return pos
    end = pos
    while end < len(text) and _letter(text[end]):
        end += 1
    if end == pos:
        return pos
    if end < len(text) and text[end] == "." and text[pos : end + 1] in money:
        return end + 1
    return end if text[pos:end] in money else pos


def _money_before(text: str, start: int) -> bool:
    """A currency sign or code right before a number: "$8", "R$ 49", "€ 8", "EUR 8"."""
    q = start
    while q > 0 and text[q - 1].isspace():
        q -= 1
    if q == 0:
        return False
    if unicodedata.category(text[q - 1]) == "Sc":
        return True
    b = q
    while b > 0 and _letter(text[b - 1]):
        b -= 1
    return b < q and text[b:q] in _money_words()


def _skip_token(text: str, pos: int) -> int:
    """End of one skippable token at ``pos`` (a currency, a classifier 个, a word), or ``pos``."""
    if pos >= len(text):
        return pos
    ch = text[pos]
    if _is_han(ch) or ch == "%" or unicodedata.category(ch) == "Sc":
        return pos + 1
    end = pos
    while end < len(text) and _letter(text[end]):
        end += 1
    return end
