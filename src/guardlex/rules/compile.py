"""Turning phrases and patterns into regular-expression sources.

Everything here produces *source text*; compiling happens in ``engine``. Keeping the
expansion separate lets the cache store plain strings (never pickled objects) and lets
the linter inspect what a rule really matches.

Conventions (the contract is ``docs/packs.md``):

- phrases are normalised with ``guardlex.normalise`` and matched as whole words; a Han
  character needs no boundary;
- ``{subject}`` is the locale's subject pronouns plus the configured subject names;
- ``...`` (or ``…``) is a gap of zero to three words (up to eight characters next to Han
  text, which has no spaces);
- a ZWNJ inside a phrase or pattern accepts the joined and the split spelling.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import regex

from guardlex.rules._text import WORD_END, WORD_START, is_han, is_word_char, normalise

SUBJECT = "{subject}"
ZWNJ = "\u200c"
_PLACEHOLDER = regex.compile(r"(\{subject\}|\.\.\.|…)")
GAP_WORDS = r"(?: \S+){0,3}"
GAP_HAN = r"[^\n]{0,8}?"
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


def proclitic_source(proclitics: Sequence[str]) -> str:
    """Optional prefix for a phrase's first word, from the lexicon's ``proclitics``.

    Arabic writes "and"/"so" (و, ف) joined to the next word: «ورقم هاتفها» is "and her
    phone number". A phrase then matches with or without one of them in front.
    """
    forms = [normalise_literal(p).strip(" ") for p in proclitics]
    forms = [f for f in forms if f]
    return f"(?:{'|'.join(regex.escape(f) for f in sorted(set(forms)))})?" if forms else ""


def phrase_source(phrase: str, subject: str, proclitics: str = "") -> str:
    """Regex source for one phrase (see the module docstring for the conventions)."""
    parts = [p for p in _PLACEHOLDER.split(phrase, timeout=1.0)]
    items: list[tuple[str, str]] = []  # (kind, value): lit | subj | gap
    for part in parts:
        if part == SUBJECT:
            items.append(("subj", ""))
        elif part in ("...", "…"):
            items.append(("gap", ""))
        else:
            lit = normalise_literal(part)
            if lit.strip(" " + ZWNJ):
                items.append(("lit", lit.strip(" ")))
    while items and items[0][0] == "gap":
        items.pop(0)
    while items and items[-1][0] == "gap":
        items.pop()
    if not items:
        return "(?!)"
    merged: list[tuple[str, str]] = []
    for item in items:
        if item[0] == "gap" and merged and merged[-1][0] == "gap":
            continue
        merged.append(item)
    out: list[str] = []
    for i, (kind, value) in enumerate(merged):
        if kind == "gap":
            continue
        prev = merged[i - 1] if i else None
        if prev is None:
            if kind == "lit" and is_word_char(value[0]) and not is_han(value[0]):
                out.append(WORD_START + proclitics)
        else:
            before = merged[i - 2] if prev[0] == "gap" else prev
            han = (before[0] == "lit" and is_han(before[1][-1])) or (
                kind == "lit" and is_han(value[0])
            )
            if prev[0] == "gap":
                out.append(GAP_HAN if han else GAP_WORDS + " ")
            else:
                out.append(" ?" if han else " ")
        out.append(subject if kind == "subj" else literal_source(value))
    last = merged[-1]
    if last[0] == "lit" and is_word_char(last[1][-1]) and not is_han(last[1][-1]):
        out.append(WORD_END)
    return "".join(out)


def pattern_source(pattern: str, subject: str) -> str:
    """A pattern with ``{subject}`` expanded and each ZWNJ made an optional space."""
    return pattern.replace(SUBJECT, subject).replace(ZWNJ, " ?")


def rule_sources(
    phrases: Sequence[str], patterns: Sequence[str], subject: str, proclitics: str = ""
) -> list[str]:
    """Every regex source of one rule, in the order written."""
    return [phrase_source(p, subject, proclitics) for p in phrases] + [
        pattern_source(p, subject) for p in patterns
    ]
