"""Parsing templates (rule language 2, docs/packs.md) into the typed tree of ``tree``.

A template is written in the natural orthography of its language::

    how much (does | would) {subject} charge [per (hour | day)]
    <price> ... {subject}
    cobr* ... $

Syntax: words; ``(a | b c)`` one of the alternatives (nestable); ``[a]`` or ``[a | b]``
optional; ``<concept>`` a concept of the locale (or a built-in such as ``<number>``);
``{subject}``; ``stem*``; ``...`` or ``…`` a gap; ``^`` and ``$`` the edges of the
question. A backslash makes the next character an ordinary letter (``\\(``). Anything
else (letters, digits, apostrophes, hyphens, other punctuation) is part of a word.

A mistake is a ``PackError`` naming the file and line, with the column and a sentence a
linguist understands ("unclosed '(' in template ...").
"""

from __future__ import annotations

import difflib
from functools import lru_cache

from guardlex.errors import PackError
from guardlex.rules.tree import (
    Alternative,
    ConceptRef,
    End,
    Gap,
    Loc,
    Node,
    Optional,
    Sequence,
    Start,
    Stem,
    SubjectRef,
    Template,
    Word,
)

#: The placeholders a template may use inside braces.
PLACEHOLDERS = ("subject",)
#: Concepts every locale has without writing them (provided by the engine).
BUILTIN_CONCEPTS = ("number", "name", "code", "math", "pasted")
#: Shortest stem before ``*``, in letters (Han characters: ``MIN_STEM_HAN``).
MIN_STEM = 3
MIN_STEM_HAN = 1
#: Shortest part of a head stem ``*part*`` (a word containing it: German compounds).
MIN_HEAD_STEM = 4
#: Marks a head stem in a compiled stem element: ``["t", HEAD + part]`` (``*part*``).
HEAD = "*"
_SPECIAL = frozenset("()[]|<>{}")
_SPACE = frozenset(" \t\n\r\u00a0")
_CLOSER = {"(": ")", "[": "]"}


def _is_han(ch: str) -> bool:
    o = ord(ch)
    return 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3134F


def _name_ok(name: str) -> bool:
    return bool(name) and name[0].isalpha() and all(c.isalnum() or c == "_" for c in name)


class _Parser:
    def __init__(self, text: str, file: str, line: int) -> None:
        self.s = text
        self.i = 0
        self.file = file
        self.line = line

    # -- helpers ----------------------------------------------------------------------
    def loc(self, i: int | None = None) -> Loc:
        return Loc(self.file, self.line, (self.i if i is None else i) + 1)

    def fail(self, message: str, at: int | None = None) -> PackError:
        col = (self.i if at is None else at) + 1
        return PackError(f"{message} (column {col} of template {self.s!r})", self.file, self.line)

    def skip_space(self) -> bool:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in _SPACE:
            self.i += 1
        return self.i > start

    # -- grammar ----------------------------------------------------------------------
    def parse(self) -> Template:
        root = self.alternation(opener=None)
        if self.i < len(self.s):  # only a stray closer stops the top level early
            raise self.fail(f"unexpected {self.s[self.i]!r} with no opening bracket before it")
        if not any(_matches_something(o) for o in root.options):
            raise self.fail("the template is empty; write at least one word", 0)
        return Template(self.s, root, self.loc(0))

    def alternation(self, opener: tuple[str, int] | None) -> Alternative:
        start = self.i
        options = [self.sequence()]
        while self.i < len(self.s) and self.s[self.i] == "|":
            bar = self.i
            self.i += 1
            seq = self.sequence()
            if not seq.items:
                raise self.fail(
                    "an alternative is empty ('|' with nothing on one side); "
                    "remove the extra '|' or use [ ] for something optional",
                    bar,
                )
            options.append(seq)
        if len(options) > 1 and not options[0].items:
            raise self.fail("an alternative is empty ('|' with nothing before it)", start)
        return Alternative(tuple(options), self.loc(start))

    def sequence(self) -> Sequence:
        start = self.i
        items: list[Node] = []
        glued = False
        while True:
            spaced = self.skip_space()
            if self.i >= len(self.s):
                break
            ch = self.s[self.i]
            if ch in "|)]":
                break
            item = self.item(glued=bool(items) and not spaced)
            items.append(item)
        return Sequence(tuple(items), self.loc(start), glued)

    def item(self, glued: bool) -> Node:
        s, i = self.s, self.i
        ch = s[i]
        if ch in "([":
            self.i += 1
            inner = self.alternation(opener=(ch, i))
            if self.i >= len(s) or s[self.i] != _CLOSER[ch]:
                if self.i < len(s):
                    raise self.fail(
                        f"{s[self.i]!r} closes the {ch!r} opened at column {i + 1}; "
                        f"write {_CLOSER[ch]!r} instead",
                    )
                raise self.fail(
                    f"unclosed {ch!r} (opened at column {i + 1}); add {_CLOSER[ch]!r}", i
                )
            self.i += 1
            if ch == "[":
                if not any(o.items for o in inner.options):
                    raise self.fail("empty '[]'; write the optional words inside", i)
                return Optional(inner, self.loc(i), glued)
            if len(inner.options) == 1 and not inner.options[0].items:
                raise self.fail("empty '()'; write the alternatives inside, separated by '|'", i)
            return _replace_glued(inner, glued)
        if ch == "<":
            end = s.find(">", i)
            if end == -1:
                raise self.fail("unclosed '<'; a concept is written <name>", i)
            name = s[i + 1 : end].strip()
            if not _name_ok(name):
                raise self.fail(
                    f"<{name}> is not a concept name; use letters, digits and '_' (e.g. <price>)", i
                )
            self.i = end + 1
            return ConceptRef(name, self.loc(i), glued)
        if ch == "{":
            end = s.find("}", i)
            if end == -1:
                raise self.fail("unclosed '{'; the placeholder is written {subject}", i)
            name = s[i + 1 : end].strip()
            if name not in PLACEHOLDERS:
                close = difflib.get_close_matches(name, PLACEHOLDERS, n=1, cutoff=0.5)
                hint = f"; did you mean {{{close[0]}}}?" if close else "; the only one is {subject}"
                raise self.fail(f"unknown placeholder {{{name}}}{hint}", i)
            self.i = end + 1
            return SubjectRef(self.loc(i), glued)
        if ch in ">}":
            raise self.fail(f"unexpected {ch!r} with no opening bracket before it", i)
        if s.startswith("...", i):
            self.i += 3
            return Gap(self.loc(i), glued)
        if ch == "…":
            self.i += 1
            return Gap(self.loc(i), glued)
        if ch == "^":
            self.i += 1
            return Start(self.loc(i), glued)
        if ch == "$":
            self.i += 1
            return End(self.loc(i), glued)
        return self.word(glued)

    def word(self, glued: bool) -> Node:
        s, start = self.s, self.i
        out: list[str] = []
        if s[self.i] == "*":
            return self.head_stem(glued)
        while self.i < len(s):
            ch = s[self.i]
            if ch == "\\" and self.i + 1 < len(s):
                out.append(s[self.i + 1])
                self.i += 2
                continue
            if ch in _SPACE or ch in _SPECIAL or ch in "^$…" or s.startswith("...", self.i):
                break
            if ch == "*":
                self.i += 1
                prefix = "".join(out)
                need = MIN_STEM_HAN if prefix and _is_han(prefix[-1]) else MIN_STEM
                letters = sum(1 for c in prefix if c.isalnum())
                if letters < need:
                    raise self.fail(
                        f"the stem {prefix + '*'!r} is too short: write at least {need} letters "
                        "before '*', or list the words",
                        start,
                    )
                nxt = s[self.i] if self.i < len(s) else " "
                if nxt not in _SPACE and nxt not in _SPECIAL and nxt not in "$…":
                    raise self.fail("'*' ends a stem; put a space after it", self.i - 1)
                return Stem(prefix, self.loc(start), glued)
            out.append(ch)
            self.i += 1
        if not out:
            raise self.fail(f"unexpected {s[start]!r}", start)
        return Word("".join(out), self.loc(start), glued)

    def head_stem(self, glued: bool) -> Node:
        """``*part*``: one word that contains ``part`` (a compound's head or middle,
        "Herbstgedicht" for ``*gedicht*``), with any letters before and after it."""
        s, start = self.s, self.i
        self.i += 1
        out: list[str] = []
        while self.i < len(s) and s[self.i] != "*":
            ch = s[self.i]
            if ch in _SPACE or ch in _SPECIAL or ch in "^$…" or s.startswith("...", self.i):
                raise self.fail(
                    "a word that starts with '*' is a head stem and ends with '*' too: "
                    "write *part* (a word containing 'part'), or a stem as part*",
                    start,
                )
            if ch == "\\" and self.i + 1 < len(s):
                self.i += 1
                ch = s[self.i]
            out.append(ch)
            self.i += 1
        if self.i >= len(s):
            raise self.fail(
                "a word that starts with '*' is a head stem and ends with '*' too: "
                "write *part* (a word containing 'part')",
                start,
            )
        self.i += 1  # the closing '*'
        part = "".join(out)
        if any(_is_han(c) for c in part) or "\u200c" in part:
            raise self.fail(
                f"the head stem {'*' + part + '*'!r} cannot hold a Han character or a ZWNJ: "
                "a head stem is for words written joined (compounds)",
                start,
            )
        letters = sum(1 for c in part if c.isalnum())
        if letters < MIN_HEAD_STEM:
            raise self.fail(
                f"the head stem {'*' + part + '*'!r} is too short: write at least "
                f"{MIN_HEAD_STEM} letters between the stars, or list the words",
                start,
            )
        nxt = s[self.i] if self.i < len(s) else " "
        if nxt not in _SPACE and nxt not in _SPECIAL and nxt not in "$…":
            raise self.fail("'*' ends a head stem; put a space after it", self.i - 1)
        return Stem(part, self.loc(start), glued, head=True)


def _replace_glued(alt: Alternative, glued: bool) -> Alternative:
    return alt if alt.glued == glued else Alternative(alt.options, alt.loc, glued)


def _matches_something(node: Node) -> bool:
    if isinstance(node, Sequence):
        return any(_matches_something(i) for i in node.items)
    if isinstance(node, Alternative):
        return any(_matches_something(o) for o in node.options)
    if isinstance(node, Optional):
        return _matches_something(node.item)
    return not isinstance(node, (Gap, Start, End))


_HARD = frozenset("()[]|<>*^$\\")
_PLAIN_BREAKERS = frozenset("{}…\t\n\r\u00a0")


def _parse_plain(text: str, file: str, line: int) -> Template | None:
    """The common case, fast: words, ``{subject}`` and gaps separated by spaces."""
    if _HARD.intersection(text):
        return None
    items: list[Node] = []
    col = 0
    for token in text.split(" "):
        if token:
            loc = Loc(file, line, col + 1)
            if token == "{subject}":
                items.append(SubjectRef(loc))
            elif token == "..." or token == "…":
                items.append(Gap(loc))
            elif _PLAIN_BREAKERS.intersection(token) or "..." in token:
                return None
            else:
                items.append(Word(token, loc))
        col += len(token) + 1
    if not any(_matches_something(i) for i in items):
        return None
    first = Loc(file, line, 1)
    return Template(text, Alternative((Sequence(tuple(items), first),), first), first)


@lru_cache(maxsize=131072)
def _parse_cached(text: str, file: str, line: int) -> Template:
    return _parse_plain(text, file, line) or _Parser(text, file, line).parse()


def parse_template(text: str, file: str = "<template>", line: int = 1) -> Template:
    """Parse one template; a mistake raises ``PackError`` with ``file`` and ``line``.

    >>> t = parse_template("how much (does | would) {subject} charge")
    >>> [type(n).__name__ for n in t.root.options[0].items]
    ['Word', 'Word', 'Alternative', 'SubjectRef', 'Word']
    """
    if not isinstance(text, str):
        raise PackError(
            f"a template must be text, not {type(text).__name__}; put it in quotes", file, line
        )
    return _parse_cached(text, file, line)
