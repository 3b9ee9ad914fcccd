"""The one compiler: template trees into matching programs (rule language 2, docs/packs.md).

A template expands into a few *forms*; a form is a flat sequence of elements joined by
separators. Elements are what one pass over the question finds (``matcher``):

- ``["w", text]``: normalised literal text (one or more words, whole words at its edges);
- ``["s"]``: the subject (pronouns of the locale, configured names, titles, possessives);
- ``["c", name]``: an occurrence of a concept (its terms are forms too);
- ``["t", prefix]``: one word beginning with a stem (``["t", "*" + part]``: one word
  containing ``part``, a head stem ``*part*``);
- ``["n"]``: a run of digits (built-in ``<number>``);
- ``["b", name]``: a built-in found by the shape of the original question (``<name>``,
  ``<code>``, ``<pasted>``: ``guardlex.rules.builtins``);
- ``["^"]`` / ``["$"]``: the start and the end of the question.

Separators: ``" "`` one space; ``"?"`` an optional space (next to Han text, and for a
ZWNJ written in the template); ``""`` nothing (glued items); ``"g"`` a gap of up to three
words; ``"h"`` a gap of up to eight characters (next to Han text). A form is stored as
``[element, separator, element, ...]``: plain JSON, so the pack cache stores programs,
never pickled objects.

Words are normalised one by one (memoised). The 0.1.0 phrase compiler normalised a run
of words at once; ``tests/rules/test_template_matching.py`` checks that both give the
same literal for every template of every shipped pack, so converted phrases match
exactly what they did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from guardlex.errors import PackError
from guardlex.rules._text import is_han
from guardlex.rules.compile import ZWNJ, normalise_literal
from guardlex.rules.template import BUILTIN_CONCEPTS, HEAD, parse_template
from guardlex.rules.tree import (
    Alternative,
    ConceptRef,
    End,
    Gap,
    Node,
    Optional,
    Sequence,
    Start,
    Stem,
    SubjectRef,
    Word,
)

#: Most forms one template may expand to (alternatives times optionals); beyond this a
#: concept is the right tool, and the compiler says so.
MAX_FORMS = 4096

Element = list[str]
Form = list[Any]  # [element, separator, element, ...]

# a flat token before words are merged and normalised: (kind, value, glued)
_Tok = tuple[str, str, bool]


@dataclass(frozen=True)
class ConceptSpec:
    """A concept as written: its name, what it means, its terms and where they are."""

    name: str
    about: str
    terms: tuple[str, ...]
    path: str
    line: int
    term_lines: tuple[int, ...] = ()
    match: tuple[str, ...] = ()
    no_match: tuple[str, ...] = ()


def _expand(node: Node, budget: list[int]) -> list[list[_Tok]]:
    if isinstance(node, Word):
        return [[("w", node.text, node.glued)]]
    if isinstance(node, SubjectRef):
        return [[("s", "", node.glued)]]
    if isinstance(node, Gap):
        return [[("g", "", node.glued)]]
    if isinstance(node, Start):
        return [[("^", "", node.glued)]]
    if isinstance(node, End):
        return [[("$", "", node.glued)]]
    if isinstance(node, Stem):
        if node.head:  # a word containing the part (``HEAD``: the matcher's mark)
            return [[("t", HEAD + node.prefix, node.glued)]]
        if ZWNJ in node.prefix:
            # a written ZWNJ is optional, as in a word (``split_literal``): the stem joined,
            # and its last part a stem after the words before it (اجاره‌نشین*)
            parts = [x for x in node.prefix.split(ZWNJ) if x]
            split: list[_Tok] = [
                ("w", x, node.glued if k == 0 else False) for k, x in enumerate(parts[:-1])
            ]
            return [[("t", "".join(parts), node.glued)], [*split, ("t", parts[-1], False)]]
        return [[("t", node.prefix, node.glued)]]
    if isinstance(node, ConceptRef):
        kind = "n" if node.name == "number" else "b" if node.name in BUILTIN_CONCEPTS else "c"
        return [[(kind, node.name, node.glued)]]
    if isinstance(node, Sequence):
        out: list[list[_Tok]] = [[]]
        for item in node.items:
            variants = _expand(item, budget)
            out = [a + b for a in out for b in variants]
            if len(out) > budget[0]:
                raise _TooMany
        return out
    if isinstance(node, Alternative):
        if budget[1] and _plain_words(node):
            texts = [
                "".join((" " if k and not w.glued else "") + w.text for k, w in enumerate(o.items))  # type: ignore[union-attr]
                for o in node.options
            ]
            return [[("a", ALT_SEP.join(texts), node.glued)]]
        res: list[list[_Tok]] = []
        for opt in node.options:
            for v in _expand(opt, budget):
                if v:
                    v = [(v[0][0], v[0][1], node.glued or v[0][2]), *v[1:]]
                res.append(v)
        return res
    if isinstance(node, Optional):
        return [[], *_expand(node.item, budget)]
    raise TypeError(f"unknown node {node!r}")


class _TooMany(Exception):
    pass


#: Joins the options of a collapsed alternative inside a flat token.
ALT_SEP = "\x1f"
#: A template with more forms than this keeps its word-only alternatives as one
#: ``["a", spelling, ...]`` element instead of expanding them (the linter warns here too).
COLLAPSE_FROM = 256


def _plain_words(alt: Alternative) -> bool:
    """Every option is one or more plain words (no placeholder, gap, stem or nesting)."""
    return len(alt.options) > 1 and all(
        o.items and all(isinstance(i, Word) for i in o.items) for o in alt.options
    )


#: A run of words with more optional spaces than this is split into separate literals
#: (each a whole word) instead of being expanded into every joined/split spelling.
MAX_OPTIONAL_SPACES = 6


def _atoms(chunk: str) -> list[tuple[str, list[str]]]:
    """Normalise a run of words into literals: ``[(separator_before, spellings), ...]``.

    A space between Han characters and a written ZWNJ are optional: the literal gets
    each joined and split spelling (one literal, so no word boundary is required
    inside it, as in 0.1.0). Other spaces stay inside the literal.
    """
    return [(sep, list(sps)) for sep, sps in _atoms_cached(chunk)]


@lru_cache(maxsize=262144)
def _word_literal(word: str) -> tuple[str, bool]:
    """One written word normalised (spaces stripped), and whether it holds a ZWNJ or a
    Han character (only then can a literal get optional spaces: ``split_literal``)."""
    lit = normalise_literal(word).strip(" ")
    return lit, ZWNJ in lit or any(is_han(ch) for ch in lit)


@lru_cache(maxsize=65536)
def _atoms_cached(chunk: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``_atoms`` memoised (immutable): the same runs recur across many templates."""
    # word by word (memoised: words repeat across thousands of templates); the test
    # suite checks this equals normalising the run at once for every shipped template
    words = [_word_literal(x) for x in chunk.split()]
    lit = " ".join(w for w, _ in words if w)
    if not any(special for _, special in words):
        # no ZWNJ and no Han character: no optional space, one literal as written
        return ((" ", (lit,)),) if lit else ()
    return tuple((sep, tuple(sps)) for sep, sps in split_literal(lit))


def split_literal(lit: str) -> list[tuple[str, list[str]]]:
    """``_atoms`` of an already normalised run of words."""
    if not lit.strip(" " + ZWNJ):
        return []
    pieces: list[str] = []  # text, then optional separators between pieces
    cur: list[str] = []
    for i, ch in enumerate(lit):
        if ch == ZWNJ or (ch == " " and (is_han(lit[i - 1 : i]) or is_han(lit[i + 1 : i + 2]))):
            pieces.append("".join(cur).strip(" "))
            cur = []
            continue
        cur.append(ch)
    pieces.append("".join(cur).strip(" "))
    pieces = [p for p in pieces if p]
    if not pieces:
        return []
    if len(pieces) - 1 > MAX_OPTIONAL_SPACES:
        return [(" " if k == 0 else "?", [p]) for k, p in enumerate(pieces)]
    spellings = [pieces[0]]
    for p in pieces[1:]:
        spellings = [x + sep + p for x in spellings for sep in ("", " ")]
    return [(" ", spellings)]


def _han_edge(el: Element, last: bool) -> bool:
    """Does a literal element end (``last``) or begin with a Han character?"""
    if el[0] in ("w", "t"):
        return is_han(el[1][-1] if last else el[1][0])
    if el[0] == "a":
        return any(is_han(sp[-1] if last else sp[0]) for sp in el[1:])
    return False


def _forms(tokens: list[_Tok]) -> list[Form]:
    """The forms of one flat token list: one per combination of literal spellings."""
    if not tokens:
        return []  # the empty choice of a template made only of optional parts: "[a] [b]"
    if all(t[0] == "w" for t in tokens):
        # words only (most concept terms): one run of words, as ``_form`` merges it
        chunk = tokens[0][1] + "".join(("" if g else " ") + v for _, v, g in tokens[1:])
        atoms = _atoms_cached(chunk)
        if not atoms:
            return []
        if len(atoms) == 1:
            return [[["w", sp]] for sp in atoms[0][1]]
    form = _form(tokens)
    if form is None:
        return []
    out: list[Form] = [[]]
    for k, item in enumerate(form):
        if k % 2 == 0 and item[0] == "w":
            out = [[*f, ["w", sp]] for f in out for sp in item[1:]]
        else:
            out = [[*f, item] for f in out]
    return out


def _form(tokens: list[_Tok]) -> Form | None:
    """Merge words, normalise them and choose the separators of one flat token list.

    Literal elements come back as ``["w", spelling, spelling, ...]``; ``_forms``
    expands them.
    """
    # 1. runs of words become literal chunks (glued words join without a space)
    items: list[tuple[str, str, bool]] = []
    for kind, value, glued in tokens:
        if kind == "w" and items and items[-1][0] == "w":
            prev = items[-1]
            items[-1] = ("w", prev[1] + ("" if glued else " ") + value, prev[2])
        else:
            items.append((kind, value, glued))
    # 2. normalise; a chunk may split into several literals (optional spaces)
    flat: list[tuple[str, Element, bool]] = []  # (separator hint, element, glued)
    for kind, value, glued in items:
        if kind == "w":
            for k, (sep, spellings) in enumerate(_atoms(value)):
                flat.append((sep if k else " ", ["w", *spellings], glued if k == 0 else False))
        elif kind == "a":
            options: list[str] = []
            for option in value.split(ALT_SEP):
                for _sep, sps in _atoms(option):
                    options.extend(x for x in sps if x not in options)
            if options:
                flat.append((" ", ["a", *options], glued))
        elif kind == "g":
            if flat and flat[-1][1][0] == "g":
                continue
            flat.append((" ", ["g"], glued))
        else:
            if kind == "t":  # a stem is matched on normalised text too (تعليمات* -> تعلیمات)
                head = HEAD if value.startswith(HEAD) else ""
                bare = value[len(head) :]
                value = head + (normalise_literal(bare).strip(" ") or bare)
            el = [kind, value] if kind in ("c", "t", "b") else [kind]
            flat.append((" ", el, glued))
    while flat and flat[0][1][0] == "g":
        flat.pop(0)
    while flat and flat[-1][1][0] == "g":
        flat.pop()
    if not flat or all(f[1][0] in ("^", "$") for f in flat):
        return None
    # 3. separators: decided by the neighbours (every spelling has the same edges)
    form: Form = []
    for i, (hint, el, glued) in enumerate(flat):
        if el[0] == "g":
            continue
        if form:
            gap = flat[i - 1][1][0] == "g"
            before = flat[i - 2][1] if gap else flat[i - 1][1]
            han = _han_edge(before, last=True) or _han_edge(el, last=False)
            if gap:
                sep = "h" if han else "g"
            elif el[0] == "$" or before[0] == "^" or glued:
                sep = ""
            elif hint == "?" or han:
                sep = "?"
            else:
                sep = " "
            form.append(sep)
        form.append(el)
    return form


def compile_template(
    text: str,
    path: str = "<template>",
    line: int = 1,
    memo: dict[str, list[Form]] | None = None,
) -> list[Form]:
    """Every form of one template (see the module docstring), in written order.

    ``memo`` (one per ``compile_program``): forms already compiled for the same text,
    which do not depend on where the text is written. The forms are shared, not copied:
    programs are read, never changed.
    """
    if memo is not None:
        got = memo.get(text)
        if got is None:
            got = memo[text] = compile_template(text, path, line)
        return list(got)
    tpl = parse_template(text, path, line)
    try:
        try:
            flat = _expand(tpl.root, [COLLAPSE_FROM, 0])
        except _TooMany:  # keep word alternatives as one element each
            flat = _expand(tpl.root, [MAX_FORMS, 1])
    except _TooMany:
        raise PackError(
            f"the template {text!r} has more than {MAX_FORMS} forms (alternatives times "
            "optional parts); put the alternatives in a concept and write <concept>",
            path,
            line,
        ) from None
    out: list[Form] = []
    if len(flat) == 1:
        out = _forms(flat[0])  # distinct already: one per spelling of distinct literals
    else:
        seen: set[tuple[Any, ...]] = set()
        for tokens in flat:
            for form in _forms(tokens):
                key = tuple(x if isinstance(x, str) else tuple(x) for x in form)
                if key not in seen:
                    seen.add(key)
                    out.append(form)
    if not out:
        raise PackError(
            f"the template {text!r} matches nothing; write at least one word", path, line
        )
    return out


def check_concepts(
    used: Iterable[tuple[str, str, int]], concepts: Mapping[str, ConceptSpec]
) -> None:
    """Unknown concepts and cycles are ``PackError`` at load time.

    ``used``: (concept name, file, line) of every reference in the rules.
    """
    known = sorted({*concepts, *BUILTIN_CONCEPTS})
    for name, path, line in used:
        if name not in concepts and name not in BUILTIN_CONCEPTS:
            import difflib

            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"; did you mean <{close[0]}>?" if close else ""
            raise PackError(
                f"unknown concept <{name}>{hint} Define it in concepts.yaml "
                f"(known: {', '.join(known) or 'none'})",
                path,
                line,
            )
    # cycles: depth-first over concept -> concepts its terms name
    refs: dict[str, list[tuple[str, int]]] = {}
    for c in concepts.values():
        found: list[tuple[str, int]] = []
        for k, term in enumerate(c.terms):
            tline = c.term_lines[k] if k < len(c.term_lines) else c.line
            for name in sorted(parse_template(term, c.path, tline).concepts()):
                if name not in concepts and name not in BUILTIN_CONCEPTS:
                    check_concepts([(name, c.path, tline)], concepts)
                found.append((name, tline))
        refs[c.name] = found
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2 or name not in refs:
            return
        if state.get(name) == 1:
            cycle = [*trail[trail.index(name) :], name]
            c = concepts[name]
            raise PackError(
                "concepts refer to each other in a circle: "
                + " -> ".join(f"<{n}>" for n in cycle)
                + "; one of them must be written out",
                c.path,
                c.line,
            )
        state[name] = 1
        for ref, _ in refs[name]:
            visit(ref, [*trail, name])
        state[name] = 2

    for name in sorted(refs):
        visit(name, [])


def form_concepts(forms: Iterable[Form]) -> set[str]:
    return {el[1] for f in forms for el in f[::2] if el[0] == "c"}


def compile_concepts(
    concepts: Mapping[str, ConceptSpec], memo: dict[str, list[Form]] | None = None
) -> dict[str, list[Form]]:
    """Forms of every concept (the union over its terms)."""
    out: dict[str, list[Form]] = {}
    for name, c in concepts.items():
        forms: list[Form] = []
        for k, term in enumerate(c.terms):
            tline = c.term_lines[k] if k < len(c.term_lines) else c.line
            forms.extend(compile_template(term, c.path, tline, memo))
        out[name] = forms
    return out


def compile_frame(
    when: Mapping[str, Any], path: str, line: int, memo: dict[str, list[Form]] | None = None
) -> dict[str, Any]:
    """A ``when:`` frame: each item's forms, and ``within``."""
    frame: dict[str, Any] = {}
    for key in ("all", "any", "none"):
        items = when.get(key) or []
        if isinstance(items, str):
            items = [items]
        frame[key] = [
            {"text": str(t), "forms": compile_template(str(t), path, line, memo)} for t in items
        ]
    within = when.get("within")
    if within is not None and (
        not isinstance(within, int) or isinstance(within, bool) or within < 1
    ):
        raise PackError(
            f"'within' must be a whole number of words (1 or more), not {within!r}", path, line
        )
    frame["within"] = within
    if not frame["all"] and not frame["any"]:
        raise PackError(
            "a frame needs 'all' or 'any' (with only 'none' it would match everything)", path, line
        )
    return frame


def compile_program(data: Any) -> dict[str, Any]:
    """The matching program of one merged locale (``loader.LocaleData``), as plain JSON.

    Both pack formats go through here: a v1 phrase is a template (the syntax is a subset)
    and a v1 pattern is an escape-hatch regex. Subject names are not part of the program
    (they are occurrences found at run time), so the program, and its cache entry, do not
    depend on them.
    """
    from guardlex.rules.anchors import anchors_of
    from guardlex.rules.compile import (
        _titles_source,
        normalise_literal,
        pattern_source,
        subject_source,
        subject_words,
    )
    from guardlex.rules.matcher import regex_subject_source

    concepts: Mapping[str, ConceptSpec] = getattr(data, "concepts", None) or {}
    used: list[tuple[str, str, int]] = []
    rules: list[dict[str, Any]] = []
    memo: dict[str, list[Form]] = {}  # template text -> forms, for this program only
    for r in data.active_rules():
        forms: list[Form] = []
        for k, text in enumerate(r.phrases):
            line = r.phrase_lines[k] if k < len(r.phrase_lines) else r.line
            got = compile_template(text, r.path, line, memo)
            used.extend((name, r.path, line) for name in sorted(form_concepts(got)))
            forms.extend(got)
        frame = None
        if r.when:
            frame = compile_frame(r.when, r.path, r.when_line or r.line, memo)
            for part in ("all", "any", "none"):
                for item in frame[part]:
                    used.extend(
                        (name, r.path, r.when_line or r.line)
                        for name in sorted(form_concepts(item["forms"]))
                    )
        rx = []
        for pat in r.patterns:
            source = pattern_source(pat, "(?&subject)")
            anchors = anchors_of(pattern_source(pat, "."))
            rx.append({"source": source, "anchors": None if anchors is None else sorted(anchors)})
        rules.append(
            {
                "id": r.id,
                "section": r.section,
                "category": r.category,
                "topic": r.topic,
                "about": r.about,
                "priority": getattr(r, "priority", 0),
                "reads_pasted": getattr(r, "reads_pasted", False),
                "forms": forms,
                "regex": rx,
                "frame": frame,
            }
        )
    check_concepts(used, concepts)
    info = getattr(data, "info", None)
    titles = tuple(getattr(info, "titles", ()) or ())
    titles_after = tuple(getattr(info, "titles_after", ()) or ())
    pronouns = data.lexicon.get("pronouns", [])
    return {
        "rules": rules,
        "concepts": compile_concepts(concepts, memo),
        "pronouns": subject_words(pronouns, ()),
        "proclitics": sorted(
            {normalise_literal(p).strip(" ") for p in data.lexicon.get("proclitics", [])} - {""}
        ),
        "titles": [list(titles), list(titles_after)],
        "regex_subject": regex_subject_source(
            subject_source(pronouns, ()), _titles_source(titles), _titles_source(titles_after)
        ),
    }
