"""Linter checks on the template tree (rule language 2): what a linguist can fix in words.

Each check works on what the parser (``template.py``) and the compiler
(``compiler.py``) make of the pack, the same tree and forms routing uses, so a finding
is exact, not a guess from the text:

- a template that does not parse (an unclosed bracket, a stem under three letters, an
  unknown placeholder such as ``{sujbect}``) and an unknown concept;
- unused concepts (defined, never referred to by a rule or by a used concept);
- terms normalisation empties, splits or makes identical to another term;
- frames that can never match (an item both required and forbidden, ``$`` or ``^`` in
  the middle of a template, ``within`` smaller than the number of required items);
- shadowed templates: every form of a template contains the form of a template of a rule
  that comes first, so it never decides a route;
- terms that are a frequent word (stopword) of another loaded locale: routing checks
  every locale, so such a term fires on ordinary text of that language;
- templates that expand to very many forms (a concept says the same once).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from guardlex.errors import PackError
from guardlex.rules._text import normalise
from guardlex.rules.loader import LocaleData, RuleSpec

ERROR = "ERROR"
WARNING = "WARNING"
#: A template expanding to more forms than this gets a warning (the compiler stops at
#: ``compiler.MAX_FORMS``).
MANY_FORMS = 256
_CATEGORY_ORDER = ("engagement", "personal_data", "speculation", "meta", "task")

Found = tuple[str, int, str, str]  # (path, line, level, message)


@dataclass(frozen=True)
class Written:
    """One template as written in a pack: where, by whom, in which role."""

    text: str
    path: str
    line: int
    owner: str  # "rule 'x'" or "concept <c>"
    role: str  # "template", "all", "any", "none", "term"
    rule: RuleSpec | None = None
    concept: str | None = None


def written_templates(data: LocaleData) -> list[Written]:
    """Every template of a merged locale: rule templates, frame items, concept terms."""
    out: list[Written] = []
    for rule in data.rules:
        owner = f"rule '{rule.id}'"
        lines = rule.phrase_lines or (rule.line,) * len(rule.phrases)
        for text, line in zip(rule.phrases, lines, strict=False):
            out.append(Written(text, rule.path, line, owner, "template", rule=rule))
        when = rule.when or {}
        for role in ("all", "any", "none"):
            items = when.get(role) or []
            for item in [items] if isinstance(items, str) else items:
                out.append(
                    Written(str(item), rule.path, rule.when_line or rule.line, owner, role, rule)
                )
    for name, spec in (data.concepts or {}).items():
        owner = f"concept <{name}>"
        for k, term in enumerate(spec.terms):
            line = spec.term_lines[k] if k < len(spec.term_lines) else spec.line
            out.append(Written(term, spec.path, line, owner, "term", concept=name))
    return out


def _message(exc: PackError) -> str:
    text = str(exc)
    prefix = f"{exc.path}:{exc.line}: " if exc.path and exc.line else f"{exc.path}: "
    return text[len(prefix) :] if exc.path and text.startswith(prefix) else text


def _parse(w: Written) -> tuple[Any, list[Any], str | None]:
    """(template, forms, error message) of one written template."""
    from guardlex.rules.compiler import compile_template
    from guardlex.rules.template import parse_template

    try:
        tpl = parse_template(w.text, w.path, w.line)
        forms = compile_template(w.text, w.path, w.line)
    except PackError as exc:
        return None, [], _message(exc)
    return tpl, forms, None


Token = tuple[str, frozenset[str]]  # (kind, values): "lit" + its spellings, or "c" + {name}


def _spellings(el: list[Any]) -> tuple[str, ...]:
    """The literal spellings of a form element: a word run (``w``) or a set of
    alternative words (``a``); empty for other elements."""
    return tuple(str(x) for x in el[1:]) if el and el[0] in ("w", "a") else ()


def _tokens(form: list[Any]) -> list[tuple[str, Token]]:
    """A form as (separator before, token) pairs; a literal with one spelling is split into
    its words, one with several spellings (alternatives, joined/split forms) stays one."""
    out: list[tuple[str, Token]] = []
    sep = ""
    for k, item in enumerate(form):
        if k % 2:
            sep = item
            continue
        spellings = _spellings(item)
        if item[0] == "w" and len(spellings) == 1:
            for j, word in enumerate(spellings[0].split(" ")):
                out.append((sep if j == 0 else " ", ("lit", frozenset([word]))))
        elif spellings:
            out.append((sep, ("lit", frozenset(spellings))))
        else:
            out.append((sep, (str(item[0]), frozenset([str(x) for x in item[1:2]]))))
        sep = ""
    return out


def _covers(small: Token, big: Token) -> bool:
    """Whether token ``small`` matches wherever ``big`` does."""
    return small[0] == big[0] and big[1] <= small[1]


def _contained_at(big: list[tuple[str, Token]], small: list[tuple[str, Token]]) -> list[int]:
    """Where ``small`` matches whenever ``big`` does: the token indexes of ``big`` at which
    ``small``'s tokens cover ``big``'s contiguously, with the same separators (``small``
    has no gap; ``^``/``$`` only where ``big`` has them)."""
    out: list[int] = []
    if not small or len(small) > len(big):
        return out
    if any(sep in ("g", "h") for sep, _ in small[1:]):
        return out
    for start in range(len(big) - len(small) + 1):
        if small[0][1][0] == "^" and start != 0:
            break
        ok = True
        for j, (sep, tok) in enumerate(small):
            bsep, btok = big[start + j]
            if not _covers(tok, btok) or (j and sep != bsep):
                ok = False
                break
        if ok and not (small[-1][1][0] == "$" and start + len(small) != len(big)):
            out.append(start)
    return out


def expansion_size(forms: list[Any]) -> int:
    """How many plain forms the template stands for (collapsed alternatives counted)."""
    total = 0
    for form in forms:
        n = 1
        for el in form[::2]:
            if el[0] == "a":
                n *= max(1, len(el) - 1)
        total += n
    return total


def _wins(b: RuleSpec, a: RuleSpec, order: Mapping[int, int], same_start: bool) -> bool:
    """Whether ``b`` decides the route whenever both match and ``b``'s match lies inside
    ``a``'s (docs/packs.md, precedence): refusal before overview; then higher priority;
    then the leftmost match (``same_start``: both start at the same word); then the
    category order; then the order the rules are written in."""
    if b.section != a.section:
        return b.section == "refusal"
    if b.priority != a.priority:
        return b.priority > a.priority
    if not same_start:
        return False  # a's match starts first: a wins

    def key(r: RuleSpec) -> tuple[Any, ...]:
        cat = _CATEGORY_ORDER.index(r.category) if r.category in _CATEGORY_ORDER else 99
        return (cat, order.get(id(r), 0))

    return key(b) < key(a)


def _normalisation_findings(w: Written, tpl: Any, out: list[Found]) -> None:
    from guardlex.rules.tree import Word, walk

    for node in walk(tpl.root):
        if not isinstance(node, Word):
            continue
        norm = normalise(node.text).strip()
        if not norm:
            out.append(
                (
                    w.path,
                    w.line,
                    ERROR,
                    f"{w.owner}: the word {node.text!r} in {w.text!r} is empty after "
                    "normalisation (only punctuation or marks), so it matches nothing; "
                    "write letters or remove it",
                )
            )
        elif len(norm.split()) != len(node.text.replace("\u200c", " ").split()):
            # (a ZWNJ is meant: the template accepts the joined and the split form)
            out.append(
                (
                    w.path,
                    w.line,
                    WARNING,
                    f"{w.owner}: normalisation reads {node.text!r} as {norm!r} "
                    f"({len(norm.split())} words), so the template {w.text!r} matches that; "
                    "write it as it will be matched",
                )
            )


def tree_findings(
    data: LocaleData,
    other_stopwords: Mapping[str, frozenset[str]] = {},
    names: Mapping[str, str] = {},
) -> list[Found]:
    """Every tree-level finding of one merged locale (see the module docstring).

    ``other_stopwords``: normalised stopwords of the other loaded locales, by code;
    ``names``: locale names for messages.
    """
    from guardlex.rules.template import BUILTIN_CONCEPTS

    out: list[Found] = []
    concepts = dict(data.concepts or {})
    known = sorted({*concepts, *BUILTIN_CONCEPTS})
    parsed: list[tuple[Written, Any, list[Any]]] = []
    for w in written_templates(data):
        tpl, forms, error = _parse(w)
        if error is not None:
            if "unknown concept" not in error:
                out.append((w.path, w.line, ERROR, f"{w.owner}: {error}"))
            tpl = _parse_tree_only(w)
            if tpl is None:
                continue
        parsed.append((w, tpl, forms))
    # unknown and unused concepts
    refs: dict[str, set[str]] = {}  # concept -> concepts its terms name
    used_by_rules: set[str] = set()
    for w, tpl, _ in parsed:
        names_used = tpl.concepts()
        for name in sorted(names_used):
            if name not in concepts and name not in BUILTIN_CONCEPTS:
                import difflib

                close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
                hint = f"; did you mean <{close[0]}>?" if close else ""
                out.append(
                    (
                        w.path,
                        w.line,
                        ERROR,
                        f"{w.owner}: unknown concept <{name}> in {w.text!r}{hint} "
                        "Define it in concepts.yaml, or fix the name",
                    )
                )
        if w.concept is not None:
            refs.setdefault(w.concept, set()).update(names_used)
        elif w.rule is not None and w.rule.enabled and w.rule.id not in data.disabled:
            used_by_rules.update(names_used)
    reached: set[str] = set()
    todo = [n for n in used_by_rules if n in concepts]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo.extend(n for n in refs.get(name, ()) if n in concepts)
    for name, spec in sorted(concepts.items()):
        if name not in reached:
            out.append(
                (
                    spec.path,
                    spec.line,
                    WARNING,
                    f"concept <{name}> is not used by any rule; use it in a template or a "
                    "frame, or remove it",
                )
            )
    # per template: normalisation, expansion size, anchors in the middle
    for w, tpl, forms in parsed:
        _normalisation_findings(w, tpl, out)
        size = expansion_size(forms)
        if size > MANY_FORMS:
            out.append(
                (
                    w.path,
                    w.line,
                    WARNING,
                    f"{w.owner}: {w.text!r} expands to {size} forms; put the "
                    "alternatives in a concept and write <concept> (faster, and said once)",
                )
            )
        for form in forms:
            kinds = [el[0] for el in form[::2]]
            bad = [k for i, k in enumerate(kinds) if (k == "$" and i != len(kinds) - 1)]
            bad += [k for i, k in enumerate(kinds) if (k == "^" and i != 0)]
            if bad:
                out.append(
                    (
                        w.path,
                        w.line,
                        ERROR,
                        f"{w.owner}: {w.text!r} can never match: '{bad[0]}' stands in the "
                        "middle, but '^' is the start and '$' the end of the question",
                    )
                )
                break
    _frame_findings(data, out)
    _duplicate_term_findings(parsed, out)
    _shadow_findings(data, parsed, out)
    _collision_findings(parsed, other_stopwords, names, data.stopwords, out)
    return out


def _parse_tree_only(w: Written) -> Any:
    from guardlex.rules.template import parse_template

    try:
        return parse_template(w.text, w.path, w.line)
    except PackError:
        return None


def _items(when: Mapping[str, Any], key: str) -> list[str]:
    value = when.get(key) or []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _frame_findings(data: LocaleData, out: list[Found]) -> None:
    for rule in data.rules:
        when = rule.when
        if not when:
            continue
        line = rule.when_line or rule.line

        required, anyof, forbidden = (_items(when, k) for k in ("all", "any", "none"))
        norm = {normalise(t).strip(): t for t in forbidden}
        for t in required:
            if normalise(t).strip() in norm:
                out.append(
                    (
                        rule.path,
                        line,
                        ERROR,
                        f"rule '{rule.id}': the frame can never match: {t!r} is required "
                        "(all) and forbidden (none); remove it from one of them",
                    )
                )
        if anyof and all(normalise(t).strip() in norm for t in anyof):
            out.append(
                (
                    rule.path,
                    line,
                    ERROR,
                    f"rule '{rule.id}': the frame can never match: every 'any' item is also "
                    "forbidden by 'none'",
                )
            )
        within = when.get("within")
        if isinstance(within, int) and not isinstance(within, bool) and within < len(required):
            out.append(
                (
                    rule.path,
                    line,
                    WARNING,
                    f"rule '{rule.id}': 'within: {within}' is smaller than the {len(required)} "
                    "items 'all' requires; they can only match if they overlap: raise 'within'",
                )
            )


def _duplicate_term_findings(
    parsed: list[tuple[Written, Any, list[Any]]], out: list[Found]
) -> None:
    seen: dict[tuple[str, str], Written] = {}
    for w, _, forms in parsed:
        if w.role not in ("template", "term") or not forms:
            continue
        key = (w.owner, repr(sorted(repr(f) for f in forms)))
        first = seen.get(key)
        if first is None:
            seen[key] = w
            continue
        same = "the same text" if first.text == w.text else "the same after normalisation"
        out.append(
            (
                w.path,
                w.line,
                WARNING,
                f"{w.owner}: {w.text!r} and {first.text!r} (line {first.line}) are {same}; "
                "keep one",
            )
        )


def _shadow_findings(
    data: LocaleData, parsed: list[tuple[Written, Any, list[Any]]], out: list[Found]
) -> None:
    active = {r.id for r in data.active_rules()}
    entries: list[tuple[Written, RuleSpec, list[list[tuple[str, Token]]]]] = []
    for w, _, forms in parsed:
        if w.role == "template" and w.rule is not None and w.rule.id in active and forms:
            entries.append((w, w.rule, [_tokens(f) for f in forms]))
    # index the shadowing side by its first token: a form of B is contained in A only
    # where A has (one of the values of) B's first token
    by_first: dict[tuple[str, str], list[tuple[Written, RuleSpec, list[tuple[str, Token]]]]]
    by_first = {}
    for w, rule, toks in entries:
        for t in toks:
            if t and not any(sep in ("g", "h") for sep, _ in t[1:]):
                kind, values = t[0][1]
                for v in values or {""}:
                    by_first.setdefault((kind, v), []).append((w, rule, t))
    order = {id(r): k for k, r in enumerate(data.rules)}
    for w, rule, toks in entries:
        shadow: tuple[Written, RuleSpec] | None = None
        for form in toks:
            found = None
            first = 1 if form and form[0][1][0] == "^" else 0
            present = {(tok[0], v) for _, tok in form for v in tok[1] or {""}}
            for tok in present:
                for bw, brule, bt in by_first.get(tok, ()):
                    if brule is rule or (rule.reads_pasted and not brule.reads_pasted):
                        continue
                    starts = _contained_at(form, bt)
                    if starts and _wins(brule, rule, order, first in starts or 0 in starts):
                        found = (bw, brule)
                        break
                if found:
                    break
            if found is None:
                shadow = None
                break
            shadow = shadow or found
        if shadow is not None:
            bw, brule = shadow
            if brule.section == rule.section == "overview":
                same = brule.topic == rule.topic
                outcome = "the same topic" if same else f"overview/{brule.topic}"
            elif brule.section == rule.section and brule.category == rule.category:
                outcome = "the same category"
            else:
                outcome = f"{brule.section}/{brule.category or brule.topic}"
            out.append(
                (
                    w.path,
                    w.line,
                    WARNING,
                    f"rule '{rule.id}': the template {w.text!r} never decides a route: "
                    f"whenever it matches, {bw.text!r} of rule '{brule.id}' ({outcome}) matches "
                    "too and comes first (see the precedence in docs/packs.md); remove it, "
                    "or give this rule a higher priority",
                )
            )


def _collision_findings(
    parsed: list[tuple[Written, Any, list[Any]]],
    other_stopwords: Mapping[str, frozenset[str]],
    names: Mapping[str, str],
    own_stopwords: Iterable[str],
    out: list[Found],
) -> None:
    own = {normalise(w) for w in own_stopwords}
    for w, _, forms in parsed:
        if w.role not in ("term", "template", "any", "all"):
            continue
        for form in forms:
            if len(form) != 1:
                continue  # only a single word can be mistaken for a frequent word
            hits: list[str] = []
            for word in _spellings(form[0]):
                if " " in word or word in own:
                    continue  # own stopwords: a different problem, not this one
                hits = sorted(c for c, words in other_stopwords.items() if word in words)
                if hits:
                    break
            if hits:
                langs = ", ".join(f"{names.get(c) or c} ({c})" for c in hits)
                out.append(
                    (
                        w.path,
                        w.line,
                        WARNING,
                        f"{w.owner}: {word!r} is a frequent word in {langs}; routing checks "
                        "every locale, so ordinary text in that language matches it: "
                        "use a longer phrase, or add a guard",
                    )
                )
                break


__all__ = ["MANY_FORMS", "Written", "tree_findings", "written_templates"]
