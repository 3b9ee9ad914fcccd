"""String facts the gates compare: numbers, URLs and e-mail addresses as whole tokens.

Both gates decide by comparing strings, never meaning, so everything here works on
normalised text (``guardlex.normalise``): Persian and Arabic-Indic digits are already
ASCII, the Arabic decimal separator is ``.``, letters are case-folded. What this module
adds is the notion of a *value token* and its comparable form:

* a number is a maximal run of digits with its separators, so ``2025`` never yields
  ``20`` and ``200`` never matches ``20``; ``1,500``, ``1 500`` and ``1500`` compare
  equal, ``3.50`` and ``3.5`` too, and ``1.500`` may be either 1500 (German) or 1.5
  (English), so it carries both readings;
* URLs compare without scheme, ``www.`` and a trailing slash;
* e-mail addresses compare as written (after normalisation).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import regex

from guardlex.errors import InputTooLargeError
from guardlex.normalise import count_words, normalise, normalise_with_offsets

#: Every regex match in the gates runs with this timeout (seconds).
TIMEOUT = 1.0


__all__ = ["count_words", "normalise", "normalise_with_offsets"]  # one import place for the gates


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def require_str(value: object, name: str, *, optional: bool = False) -> str | None:
    """``value`` if it is a ``str`` (or ``None`` when ``optional``), else a ``TypeError``
    that names the argument and what was passed: a wrong type is never read silently."""
    if isinstance(value, str) or (optional and value is None):
        return value
    kind = "a str or None" if optional else "a str"
    raise TypeError(f"{name} must be {kind}, not {type(value).__name__} ({_shown(value)})")


def require_texts(value: object, name: str, *, limit: int = 100_000) -> list[str]:
    """A list of texts from a list/tuple of ``str``; a bare ``str`` is refused (it would
    otherwise become one text per character) and so is ``None``. More than ``limit``
    items is an ``InputTooLargeError``."""
    if isinstance(value, str):
        raise TypeError(
            f"{name} must be a list of texts, not a str ({_shown(value)}); "
            f"pass [text] for a single one"
        )
    if (
        value is None
        or isinstance(value, (bytes, bytearray, dict))
        or not hasattr(value, "__iter__")
    ):
        raise TypeError(
            f"{name} must be a list of texts (str), not {type(value).__name__} ({_shown(value)})"
        )
    items = list(value)
    if len(items) > limit:
        raise InputTooLargeError(f"{name} has {len(items)} items; the limit is {limit}.")
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(
                f"{name}[{i}] must be a str, not {type(item).__name__} ({_shown(item)})"
            )
    return items


def check_size(text: str | int, limit: int, what: str) -> None:
    """Refuse input above ``limit`` characters (a text, or a count of characters) with a
    message that says what to do."""
    size = text if isinstance(text, int) else len(text)
    if size > limit:
        raise InputTooLargeError(
            f"{what} has {size} characters; the limit is {limit}. "
            "Split it or raise the limit explicitly."
        )


# ---------------------------------------------------------------------------------
# Value tokens

_COMMON_TLDS = (
    "com|org|net|io|dev|ai|co|edu|gov|info|app|me|uk|de|ru|fr|es|pt|br|cn|ir|in|eu|us|"
    "ca|au|it|nl|ch|at|jp|kr|tw|hk|sa|ae|eg|mx|ar|cl|xyz|tech|site|online|blog|page"
)
_URL = regex.compile(
    r"(?:(?:https?|ftp)://|www\.)[^\s<>\"'\[\]{}|\\^`]+"
    r"|(?<![\w@.-])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
    r"\.(?:" + _COMMON_TLDS + r")(?![\w@-])(?:/[^\s<>\"'\[\]{}|\\^`]*)?",
)
_EMAIL = regex.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# thousands grouped with spaces ("1 500", Russian and French; NBSP is a space after
# normalisation) first, then digits with dots and commas
# and thousands grouped with an apostrophe or an underscore (Swiss "1'000", code "1_000"),
# only as a whole token: "5'10" (feet and inches) and "a_1" are not grouped numbers
_NUMBER = regex.compile(
    r"(?<![\w'])\d{1,3}(?:(['_])\d{3})(?:\1\d{3})*(?:[.,]\d+)?(?![\w'])"
    r"|(?<![\d])(?:\d{1,3}(?: \d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)*)(?![\d])"
)
_GROUPING = str.maketrans("", "", " '_")
# "1. Item" or "- 2) item" at the start of a sentence enumerates; it states no value.
_ENUMERATOR = regex.compile(r"^\s*(?:[-*•]\s*)?\d{1,2}[.)](?=\s)")
_ENUMERATOR_START = frozenset("0123456789-*•")
_TRAILING = ".,;:!?)]}'\"»”’、。，；：！？"


class Value(NamedTuple):
    """One value token found in normalised text (a tuple: cheap to build, immutable).

    ``kind`` is ``"number"``, ``"url"`` or ``"email"``; ``text`` the token as it stands in
    the normalised text; ``keys`` the comparable forms (a number may have two readings);
    ``start``/``end`` its span in the normalised text.
    """

    kind: str
    text: str
    keys: frozenset[str]
    start: int
    end: int


def _canon_decimal(integer: str, fraction: str = "") -> str:
    integer = integer.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{integer}.{fraction}" if fraction else integer


def number_readings(token: str) -> list[frozenset[str]]:
    """Comparable readings of a digit run with separators, one set per number it holds.

    A run that is not a well-formed grouped or decimal number (a date ``01.05.2023``, a
    version ``1.2.3``) stands for several numbers, each compared on its own.

    >>> number_readings("1,500")
    [frozenset({'1500'})]
    >>> sorted(number_readings("1.500")[0])
    ['1.5', '1500']
    >>> number_readings("3,50")
    [frozenset({'3.5'})]
    >>> [sorted(r) for r in number_readings("01.05.2023")]
    [['1'], ['5'], ['2023']]
    """
    return list(_readings(token))


@functools.lru_cache(maxsize=4096)
def _readings(token: str) -> tuple[frozenset[str], ...]:
    groups, seps = _split_number(token)
    return tuple(_readings_of(token, groups, seps))


def _split_number(token: str) -> tuple[list[str], list[str]]:
    groups: list[str] = []
    seps: list[str] = []
    start = 0
    for i, ch in enumerate(token):
        if ch in ".,":
            groups.append(token[start:i])
            seps.append(ch)
            start = i + 1
    groups.append(token[start:])
    return groups, seps


def _readings_of(token: str, groups: list[str], seps: list[str]) -> list[frozenset[str]]:
    if not seps:
        return [frozenset({_canon_decimal(token)})]
    kinds = set(seps)
    if len(kinds) == 2:
        dec = seps[-1]
        grouping = seps[:-1]
        well_formed = all(s != dec for s in grouping) and all(len(g) == 3 for g in groups[1:-1])
        if well_formed and 1 <= len(groups[0]) <= 3:
            return [frozenset({_canon_decimal("".join(groups[:-1]), groups[-1])})]
    elif len(seps) == 1:
        head, tail = groups
        if len(tail) == 3 and 1 <= len(head) <= 3:
            if seps[0] == ",":
                return [frozenset({_canon_decimal(head + tail)})]
            return [frozenset({_canon_decimal(head + tail), _canon_decimal(head, tail)})]
        return [frozenset({_canon_decimal(head, tail)})]
    elif 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
        return [frozenset({_canon_decimal("".join(groups))})]
    return [frozenset({_canon_decimal(g)}) for g in groups]


def _url_key(url: str) -> str:
    for scheme in ("https://", "http://", "ftp://"):
        if url.startswith(scheme):
            url = url[len(scheme) :]
            break
    if url.startswith("www."):
        url = url[4:]
    return url.rstrip("/")


_DIGITS = frozenset("0123456789")


def _maybe_url(norm: str) -> bool:
    """Cheap pre-check (regex calls with a timeout cost microseconds): a scheme, ``www.``
    or a dot between a letter or digit and a letter."""
    if "://" in norm or "www." in norm:
        return True
    i = norm.find(".")
    while i != -1:
        if 0 < i < len(norm) - 1 and norm[i - 1].isalnum() and norm[i + 1].isalpha():
            return True
        i = norm.find(".", i + 1)
    return False


def _strip_trailing(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in _TRAILING:
        # keep a closing bracket that has its opening partner inside the token
        if text[end - 1] == ")" and text.count("(", start, end) >= text.count(")", start, end):
            break
        end -= 1
    return end


def values(norm: str, *, skip_enumerator: bool = False) -> list[Value]:
    """Every number, URL and e-mail address in normalised text, in order.

    Numbers inside a URL or an address are part of that token, not numbers of their own.

    >>> [(v.kind, v.text) for v in values("see https://x.org/v2, mail a.b@c.de or call 1,500.")]
    [('url', 'https://x.org/v2'), ('email', 'a.b@c.de'), ('number', '1,500')]
    """
    found: list[Value] = []
    masked_text = norm
    if "@" in norm:
        masked = list(norm)
        for m in _EMAIL.finditer(norm, timeout=TIMEOUT):
            end = _strip_trailing(norm, m.start(), m.end())
            text = norm[m.start() : end]
            found.append(Value("email", text, frozenset({text}), m.start(), end))
            masked[m.start() : end] = " " * (end - m.start())
        masked_text = "".join(masked)
    if _maybe_url(masked_text):
        masked = list(masked_text)
        for m in _URL.finditer(masked_text, timeout=TIMEOUT):
            end = _strip_trailing(masked_text, m.start(), m.end())
            text = norm[m.start() : end]
            if not text or "." not in text:
                continue
            found.append(Value("url", text, frozenset({_url_key(text)}), m.start(), end))
            masked[m.start() : end] = " " * (end - m.start())
        masked_text = "".join(masked)
    if _DIGITS.isdisjoint(masked_text):
        return sorted(found, key=lambda v: (v.start, v.end))
    skip_until = -1
    if skip_enumerator and masked_text.lstrip()[:1] in _ENUMERATOR_START:
        em = _ENUMERATOR.match(masked_text, timeout=TIMEOUT)
        if em:
            skip_until = em.end()
    for m in _NUMBER.finditer(masked_text, timeout=TIMEOUT):
        if m.end() <= skip_until:
            continue
        token = m.group()
        readings = _readings(token.translate(_GROUPING))
        if len(readings) == 1:
            found.append(Value("number", token, readings[0], m.start(), m.end()))
            continue
        pos = m.start()
        for group, keys in zip(_split_number(token)[0], readings, strict=False):
            found.append(Value("number", group, keys, pos, pos + len(group)))
            pos += len(group) + 1
    found.sort(key=lambda v: (v.start, v.end))
    return found


def value_keys(norm: str) -> frozenset[str]:
    """All comparable keys of the values in normalised source text (for set lookups)."""
    keys: set[str] = set()
    for v in values(norm):
        keys.update(_prefixed(v))
    return frozenset(keys)


def _prefixed(v: Value) -> Iterator[str]:
    for k in v.keys:
        yield f"{v.kind}:{k}"


def supported(v: Value, keys: Iterable[str] | frozenset[str]) -> bool:
    """Whether a value token occurs (as a whole token) among the given source keys.

    A space-grouped number ("1 500") is also supported when each of its parts is, since
    "10 200" may be two numbers as well as ten thousand two hundred.
    """
    pool = keys if isinstance(keys, (set, frozenset)) else set(keys)
    if any(k in pool for k in _prefixed(v)):
        return True
    if v.kind == "number" and " " in v.text:
        return all(
            any(f"number:{k}" in pool for k in _readings(part)[0]) for part in v.text.split()
        )
    return False
