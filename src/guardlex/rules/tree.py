"""The typed tree a template parses into (rule language 2, docs/packs.md).

Every node is a frozen dataclass carrying ``loc``: the pack file, line and column where
it was written, so the compiler and the linter can point a linguist at the exact spot.
The tree says what was written; ``guardlex.rules.compile`` decides what it matches.

Nodes:

- ``Word``: one written word (natural orthography; normalised by the compiler);
- ``Stem``: ``cobr*``, one word beginning with the stem;
- ``ConceptRef``: ``<price>``, any term of a concept (or a built-in: ``<number>``);
- ``SubjectRef``: ``{subject}``;
- ``Gap``: ``...`` (or ``…``), up to three words;
- ``Start`` / ``End``: ``^`` / ``$``, the edges of the question;
- ``Sequence``: items in order; ``Alternative``: one of its options; ``Optional``: its
  item or nothing.

An item's ``glued`` is true when no space separates it from the item before it
(``(her|his)'s``): then no space may separate their matches either.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """Where a node was written: pack file, 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Word:
    text: str
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Stem:
    prefix: str
    loc: Loc
    glued: bool = False
    #: ``*prefix*``: a word containing ``prefix`` anywhere (a compound's head), not
    #: only at its start
    head: bool = False


@dataclass(frozen=True)
class ConceptRef:
    name: str
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class SubjectRef:
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Gap:
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Start:
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class End:
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Sequence:
    items: tuple[Node, ...]
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Alternative:
    options: tuple[Sequence, ...]
    loc: Loc
    glued: bool = False


@dataclass(frozen=True)
class Optional:
    item: Alternative
    loc: Loc
    glued: bool = False


Node = Word | Stem | ConceptRef | SubjectRef | Gap | Start | End | Sequence | Alternative | Optional


@dataclass(frozen=True)
class Template:
    """A parsed template: the text as written and its tree."""

    source: str
    root: Alternative
    loc: Loc

    def concepts(self) -> frozenset[str]:
        """Names of the concepts the template refers to (for the linter and the compiler)."""
        return frozenset(n.name for n in walk(self.root) if isinstance(n, ConceptRef))


def walk(node: Node) -> list[Node]:
    """Every node under ``node`` (itself included), depth first, in written order."""
    out: list[Node] = [node]
    if isinstance(node, Sequence):
        for item in node.items:
            out.extend(walk(item))
    elif isinstance(node, Alternative):
        for opt in node.options:
            out.extend(walk(opt))
    elif isinstance(node, Optional):
        out.extend(walk(node.item))
    return out
