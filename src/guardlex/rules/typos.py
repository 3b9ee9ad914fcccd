"""Typo tolerance: a question word one edit away from exactly one pack word is read as it.

People mistype the very word a rule waits for ("how much does she chrage", "Gehlat",
"зарплта"). The router reads such a question a second way, with each mistyped word
replaced (``Packs.route``: the typo reading, tried like the other disguised readings).
Whole words only, never stems (on stems typo tolerance reads "technical" as "teach*").
A word of the question is read as a pack word when all of these hold:

- it has at least ``MIN_LETTERS`` letters and holds no Han character;
- it is written in a script of which real words are loaded (``locales/<code>/words.txt``,
  generated from wordfreq by ``tools/gen_wordlists.py``; Chinese and Hindi have none, see
  ``tools/wordlists.yaml``);
- it is no word the loaded locales know: not a word of their packs, not a stopword, not
  one of their real words, not a subject name;
- exactly one pack word lies one slip away (a letter left out, a letter too many, or two
  neighbours swapped; never at the first or the last letter, where inflection lives; a
  changed letter is no slip: it too often makes another real word, "плотные" dense and
  "платные" paid, except a change between two letters a loaded locale lists as typed for
  each other, ``locale.yaml`` ``typos.changes``: Russian "стоет" for "стоит"), and
  no real word that is not a pack word does ("ratng" could be "rating" as well as
  "dating": it is left alone). A changed letter is tried only when no slip reaches a
  pack word or a real word: "opinon" is "opinion" (a letter left out) even where a
  change would also reach the Spanish "opinan".

The word lists are read once, at the first question that needs them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import regex

__all__ = ["MIN_LETTERS", "Typos", "read_words"]

#: Shorter words are never read as typos: one edit makes another short word too easily.
MIN_LETTERS = 5
_TOKEN = regex.compile(r"[\p{L}\p{M}]+")
_HAN = regex.compile(r"\p{Han}")
_TIMEOUT = 0.5


def read_words(path: Path) -> list[str]:
    """The words of a ``words.txt`` file (one per line after its ``#`` comment lines)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return [w for w in lines[start:] if w]


def _script(ch: str) -> str:
    """The script of a letter, as the first word of its Unicode name (LATIN, ARABIC...)."""
    return unicodedata.name(ch, "").split(" ", 1)[0]


class Typos:
    """The typo reading of questions for one set of loaded packs.

    ``targets``: the single words of the loaded packs (what a typo may be read as);
    ``known``: every other word that is never a typo (stopwords, names); ``real``: one
    list of real words per loaded language (each in one script).
    """

    def __init__(
        self,
        targets: Iterable[str],
        known: Iterable[str],
        real: Iterable[Sequence[str]],
        changes: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.targets = frozenset(
            w for w in targets if len(w) >= MIN_LETTERS - 1 and not _HAN.search(w)
        )
        lists = [words for words in real if words]
        self.real: frozenset[str] = frozenset().union(*lists)
        self.known = frozenset(known)
        # the letters a slip may add, per script; a script without real words loaded is
        # never corrected: without them a typo cannot be told from an unknown word
        with_words = {_script(words[len(words) // 2][0]) for words in lists}
        letters: dict[str, set[str]] = {}
        for ch in set().union(*self.targets):
            letters.setdefault(_script(ch), set()).add(ch)
        self.alphabets = {
            script: "".join(sorted(chs)) for script, chs in letters.items() if script in with_words
        }
        pairs: dict[str, set[str]] = {}
        for a, b in changes:
            if a != b:
                pairs.setdefault(a, set()).add(b)
                pairs.setdefault(b, set()).add(a)
        #: letter -> the letters a slip may change it into (both ways)
        self.changes = {ch: "".join(sorted(to)) for ch, to in pairs.items()}

    def neighbours(self, word: str) -> set[str]:
        """Every string one slip away from ``word`` (a letter dropped or added, two letters
        swapped) that keeps its first and last letters (the end of a word is where
        inflection lives: "jailbreak-her", "окошка")."""
        alphabet = self.alphabets.get(_script(word[0]), "")
        n = len(word)
        out = {word[:i] + word[i + 1 :] for i in range(1, n - 1)}
        out.update(word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(1, n - 2))
        for i in range(1, n):
            head, tail = word[:i], word[i:]
            out.update(head + ch + tail for ch in alphabet)  # undoes a letter left out
        out.discard(word)
        return out

    def changed(self, word: str) -> set[str]:
        """Every string one change of a letter for its pair (``typos.changes``) away from
        ``word``, inside the word."""
        changes = self.changes
        out = set()
        for i in range(1, len(word) - 1):
            for ch in changes.get(word[i], ""):
                out.add(word[:i] + ch + word[i + 1 :])
        out.discard(word)
        return out

    def correct(self, word: str) -> str | None:
        """The pack word ``word`` is a typo of, or None (see the module doc)."""
        if (
            len(word) < MIN_LETTERS
            or _script(word[0]) not in self.alphabets
            or word in self.targets
            or word in self.real
            or word in self.known
            or _HAN.search(word)
        ):
            return None
        # slips first; a changed letter only when no slip reaches a real or pack word
        for near in (self.neighbours(word), self.changed(word)):
            hits = near & self.targets
            if hits or near & self.real:
                if len(hits) != 1 or not (near & self.real) <= hits:
                    return None
                return next(iter(hits))
        return None

    def reading(self, text: str) -> str | None:
        """``text`` (normalised) with every mistyped word replaced, or None if none is."""
        out: list[str] = []
        last = 0
        changed = False
        # matches first: the time limit runs while the iterator lives, and the first
        # correction builds the word tables
        for m in list(_TOKEN.finditer(text, timeout=_TIMEOUT)):
            fixed = self.correct(m.group())
            if fixed is not None:
                out.append(text[last : m.start()])
                out.append(fixed)
                last = m.end()
                changed = True
        if not changed:
            return None
        out.append(text[last:])
        return "".join(out)


def pack_words(keys: Iterable[str]) -> Iterator[str]:
    """The words of ``keys`` (``Matcher.words``) written in letters only: no digits,
    apostrophes or hyphens, which no slip of a letter reaches."""
    for key in keys:
        if key.isalpha() or (
            " " not in key and key and _TOKEN.fullmatch(key, timeout=_TIMEOUT)
        ):  # (isalpha first: C speed; letters with marks, as in Devanagari, need the regex)
            yield key
