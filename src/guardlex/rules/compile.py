"""Text helpers of the compiler: literals, subject forms and escape-hatch regex sources.

Templates are compiled by ``guardlex.rules.compiler`` (into forms matched from
occurrences, not into regexes). What is left here serves the escape hatch and the word
lists: normalising a written literal (``normalise_literal``, which keeps a written ZWNJ),
the forms the subject is referred to by (``subject_words``), the regex of the subject
pronouns and titles for ``regex:`` entries, and ``{subject}``/ZWNJ expansion in them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import regex

from guardlex.rules._text import WORD_END, WORD_START, is_han, normalise

SUBJECT = "{subject}"
ZWNJ = "\u200c"
_SEPARATOR = regex.compile("([ \u200c])")
_NAME_SEPARATORS = regex.compile(r"[ ·・•‧]+")


def _alternation(words: Iterable[str]) -> str:
    """A non-capturing alternation, longest first so the longest form wins."""
    uniq = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(uniq) + ")" if uniq else "(?!)"


def literal_source(text: str) -> str:
    """Escape normalised literal text; spaces between Han characters become optional.

    A ZWNJ in the *written* text was turned into a marker by ``normalise_literal``; it
    becomes an optional space, which accepts the joined and the split spelling.
    """
    if " " not in text and ZWNJ not in text:
        return regex.escape(text)
    # each space is decided by its neighbours: optional next to a Han character
    result: list[str] = []
    pos = 0
    for i, piece in enumerate(_SEPARATOR.split(text, timeout=1.0)):
        if i % 2 == 0:
            result.append(regex.escape(piece))
            pos += len(piece)
            continue
        if piece == ZWNJ:
            result.append(" ?")
        else:
            prev = text[pos - 1] if pos else ""
            nxt = text[pos + 1] if pos + 1 < len(text) else ""
            result.append(" ?" if is_han(prev) or is_han(nxt) else " ")
        pos += 1
    return "".join(result)


@lru_cache(maxsize=65536)
def normalise_literal(text: str) -> str:
    """Normalise a phrase fragment, keeping each written ZWNJ as a ZWNJ marker.

    The normaliser turns a ZWNJ between Persian letters into a space, so the pieces on
    either side are normalised separately and joined by the marker instead.
    """
    pieces = [normalise(p) for p in text.split(ZWNJ)]
    return ZWNJ.join(p for p in pieces if p) if len(pieces) > 1 else pieces[0]


def subject_words(pronouns: Sequence[str], names: Sequence[str]) -> list[str]:
    """Normalised forms the subject is referred to by: pronouns, each name, each name part.

    "Dana Reyes" yields "dana reyes", "dana" and "reyes", so "Is Dana available?" is
    read like "Is she available?". Names split on spaces and middle dots (达娜·雷耶斯);
    parts shorter than three letters (two Han characters) are left out.
    """
    out: list[str] = []
    for p in pronouns:
        n = normalise(p)
        if n and n not in out:
            out.append(n)
    for name in names:
        n = normalise(name)
        if not n:
            continue
        for form in [n, *_NAME_SEPARATORS.split(n, timeout=1.0)]:
            long_enough = len(form) >= (2 if is_han(form[:1]) else 3)
            if form and (form == n or long_enough) and form not in out:
                out.append(form)
    return out


def _titles_source(titles: Sequence[str]) -> str:
    """Alternation of normalised titles without their trailing dot (the dot is optional)."""
    forms = {normalise(t).rstrip(".").strip() for t in titles}
    return "|".join(sorted((literal_source(f) for f in forms if f), key=lambda s: (-len(s), s)))


def subject_source(
    pronouns: Sequence[str],
    names: Sequence[str],
    titles: Sequence[str] = (),
    titles_after: Sequence[str] = (),
) -> str:
    """Regex source for ``{subject}``: whole words; a name may carry a title before it
    (``titles`` of locale.yaml: "Dr. Reyes") or after it (``titles_after``: 达娜博士), and
    a Latin-script name may be possessive ("Dana's", German "Danas", "Reyes'")."""
    forms = []
    name_forms = set(subject_words((), names))
    before = _titles_source(titles)
    after = _titles_source(titles_after)
    for w in subject_words(pronouns, names):
        src = literal_source(w)
        if w in name_forms:
            if before:
                src = f"(?:(?:{before})\\.? )?" + src
            if after:
                src += f"(?: ?(?:{after}))?"
            if w[-1:].isascii():
                src += "(?:['’]?s|['’])?"
        if not is_han(w[0]):
            src = WORD_START + src
        if not is_han(w[-1]):
            src += WORD_END
        forms.append(src)
    if not forms:
        return "(?!)"
    uniq = sorted(set(forms), key=lambda s: (-len(s), s))
    return "(?:" + "|".join(uniq) + ")"


def pattern_source(pattern: str, subject: str) -> str:
    """A pattern with ``{subject}`` expanded and each ZWNJ made an optional space."""
    return pattern.replace(SUBJECT, subject).replace(ZWNJ, " ?")
