"""Literal anchors: strings at least one of which must occur wherever a regex matches.

Routing a question through hundreds of rules one regex at a time is slow; most rules
cannot match most questions. For every rule source we compute a small set of literal
strings ("anchors") such that any match contains one of them. One scan of the question
for all anchors of all rules then yields the few candidate rules worth running.

The analysis is conservative: when a construct is not understood (a flag group, an
unknown escape) the source gets no anchors and its rule is run on every question.
Correctness never depends on the anchors, only speed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import regex

Anchors = frozenset[str] | None  # None: "no usable anchor, always run"

_ZERO_WIDTH_ESCAPES = frozenset("bBmMAZGK")
_CLASS_ESCAPES = frozenset("wWsSdDhHvVX")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


_T = 1.0  # seconds; these patterns are fixed and linear, the timeout is a backstop
_QUANT = regex.compile(r"\{(\d*)(,?)(\d*)\}")
_HEX = regex.compile(r"\\x([0-9a-fA-F]{2})")
_U4 = regex.compile(r"\\u([0-9a-fA-F]{4})")
_U8 = regex.compile(r"\\U([0-9a-fA-F]{8})")
_LOOK = regex.compile(r"\(\?(?:<[=!]|[=!])")
_GROUP = regex.compile(r"\(\?(?::|P?<[A-Za-z_]\w*>|>)")


class _Unsupported(Exception):
    pass


class _Parser:
    """A recursive-descent reader for the subset of regex syntax packs use."""

    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def parse(self) -> Anchors:
        result = self.alternation()
        if self.i != len(self.s):
            raise _Unsupported("trailing input")
        return result

    def alternation(self) -> Anchors:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        if len(branches) == 1:
            return branches[0]
        out: set[str] = set()
        for b in branches:
            if b is None:
                return None
            out |= b
        return frozenset(out)

    def sequence(self) -> Anchors:
        candidates: list[frozenset[str]] = []
        run: list[str] = []

        def flush() -> None:
            if run:
                candidates.append(frozenset(["".join(run)]))
                run.clear()

        while self.i < len(self.s) and self.s[self.i] not in "|)":
            kind, value = self.atom()
            lo = self.quantifier()
            if kind == "char":
                if lo is None:
                    run.append(value)  # type: ignore[arg-type]
                    continue
                flush()
                if lo >= 1:
                    candidates.append(frozenset([value]))  # type: ignore[list-item]
                continue
            if kind == "zero":
                continue  # lookarounds and boundaries consume nothing
            flush()
            if kind == "group" and value is not None and (lo is None or lo >= 1):
                candidates.append(value)  # type: ignore[arg-type]
        flush()
        if not candidates:
            return None
        return max(candidates, key=_quality)

    def quantifier(self) -> int | None:
        """The minimum count of a following quantifier, or None when there is none."""
        ch = self.peek()
        lo: int | None = None
        if not ch:
            return None
        if ch in "*?":
            lo = 0
            self.i += 1
        elif ch == "+":
            lo = 1
            self.i += 1
        elif ch == "{":
            m = _QUANT.match(self.s, self.i, timeout=_T)
            if not m:
                return None  # a literal brace
            lo = int(m.group(1) or 0)
            self.i = m.end()
        else:
            return None
        if self.peek() and self.peek() in "?+":
            self.i += 1  # lazy or possessive
        return lo

    def atom(self) -> tuple[str, object]:
        ch = self.peek()
        if ch == "(":
            return self.group()
        if ch == "[":
            self.char_class()
            return "other", None
        if ch == ".":
            self.i += 1
            return "other", None
        if ch in "^$":
            self.i += 1
            return "zero", None
        if ch == "\\":
            return self.escape()
        if ch == "{" and _QUANT.match(self.s, self.i, timeout=_T):
            raise _Unsupported("quantifier without atom")
        self.i += 1
        return "char", ch

    def escape(self) -> tuple[str, object]:
        nxt = self.s[self.i + 1 : self.i + 2]
        if not nxt:
            raise _Unsupported("trailing backslash")
        if nxt in _ZERO_WIDTH_ESCAPES:
            self.i += 2
            return "zero", None
        if nxt in _CLASS_ESCAPES:
            self.i += 2
            return "other", None
        if nxt in "pPN":
            end = self.s.find("}", self.i)
            if self.s[self.i + 2 : self.i + 3] != "{" or end == -1:
                raise _Unsupported("property escape")
            self.i = end + 1
            return "other", None
        if nxt == "x":
            m = _HEX.match(self.s, self.i, timeout=_T)
            if not m:
                raise _Unsupported("hex escape")
            self.i = m.end()
            return "char", chr(int(m.group(1), 16))
        if nxt in "uU":
            width = 4 if nxt == "u" else 8
            m = (_U4 if width == 4 else _U8).match(self.s, self.i, timeout=_T)
            if not m:
                raise _Unsupported("unicode escape")
            self.i = m.end()
            return "char", chr(int(m.group(1), 16))
        if nxt in _SIMPLE_ESCAPES:
            self.i += 2
            return "char", _SIMPLE_ESCAPES[nxt]
        if nxt.isalnum():
            raise _Unsupported(f"escape \\{nxt}")  # backreferences, \L<...>, ...
        self.i += 2
        return "char", nxt

    def char_class(self) -> None:
        depth = 0
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == "[":
                depth += 1
            elif ch == "]":
                if depth == 0:
                    self.i += 1
                    return
                depth -= 1
            self.i += 1
        raise _Unsupported("unterminated class")

    def group(self) -> tuple[str, object]:
        zero = False
        m = _LOOK.match(self.s, self.i, timeout=_T)
        if m:
            zero = True
            self.i = m.end()
        else:
            m = _GROUP.match(self.s, self.i, timeout=_T)
            if m:
                self.i = m.end()
            elif self.s.startswith("(?", self.i):
                raise _Unsupported("flags or special group")
            else:
                self.i += 1
        inner = self.alternation()
        if self.peek() != ")":
            raise _Unsupported("unbalanced group")
        self.i += 1
        return ("zero", None) if zero else ("group", inner)


def _quality(anchors: frozenset[str]) -> tuple[int, int]:
    """Prefer sets whose shortest string is longest (rarer), then smaller sets."""
    return (min(len(a) for a in anchors), -len(anchors))


def anchors_of(source: str) -> Anchors:
    """Anchors of one regex source, or None if every question must run it.

    >>> sorted(anchors_of(r"\\mhow much (?:does|do) (?:she|he) charge\\M"))
    ['how much ']
    >>> anchors_of(r"\\w+") is None
    True
    """
    try:
        result = _Parser(source).parse()
    except (_Unsupported, IndexError, ValueError):
        return None
    if result is None or any(not a.strip() for a in result):
        return None
    return result


def rule_anchors(sources: Iterable[str]) -> Anchors:
    """Anchors of a rule (the union over its sources), or None."""
    out: set[str] = set()
    for s in sources:
        a = anchors_of(s)
        if a is None:
            return None
        out |= a
    return frozenset(out)


def trie_source(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, factored as a trie (much faster to scan).

    Longer words win at a position, so a caller that needs every anchor occurring at a
    position must also count the anchors that are prefixes of the one reported.
    """
    root: dict[str, Any] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [regex.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root) or "(?!)"
