"""The pack linter behind ``guardlex lint``: every problem a linguist can fix, with its line.

Checks, per locale folder: YAML syntax; the JSON Schema of each file (unknown keys,
missing examples, wrong types); ``locale`` equals the folder name and
``schema_version`` is known; ids unique; each rule's own examples (a ``match`` example
must route to the rule's category and should be caught by the rule itself; a
``no_match`` example must not be caught by it); the first-person examples; patterns that
normalisation makes unmatchable (a capital letter, Arabic ي/ك, a non-ASCII digit...);
patterns that do not compile or are prone to catastrophic backtracking; duplicate and
shadowed phrases; missing files and messages.

Messages follow ``path:line: what is wrong, and what to do``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import regex

from guardlex.errors import PackError
from guardlex.rules._schema import FILE_KINDS, PackFile, read_pack_file
from guardlex.rules._text import is_han, normalise
from guardlex.rules.anchors import rule_anchors
from guardlex.rules.checks import (
    backtracking_risks,
    rewritten_chars,
    rule_groups,
)
from guardlex.rules.compile import SUBJECT, ZWNJ, normalise_literal, pattern_source
from guardlex.rules.loader import (
    SHIPPED_DIR,
    LocaleData,
    RuleSpec,
    _merge_file,
    discover,
    schema_problems,
)
from guardlex.rules.locale_info import (
    LocaleInfo,
    example_subjects,
    merge_locale_info,
    root_locale,
    shipped_locale_infos,
)

ERROR = "ERROR"
WARNING = "WARNING"


def example_subject_names(extra: LocaleInfo | None = None) -> tuple[str, ...]:
    """The subject names examples may use: every shipped locale's ``example_subject``
    and its spellings (root locale first), plus those of ``extra`` (a locale being
    linted). Each name's parts count too ("Dana", "Reyes")."""
    infos = shipped_locale_infos()
    root = root_locale(infos)
    ordered = [infos[root]] if root is not None and root in infos else []
    ordered += [i for c, i in infos.items() if c != root]
    if extra is not None:
        ordered.append(extra)
    return example_subjects(ordered)


def __getattr__(name: str) -> tuple[str, ...]:
    # EXAMPLE_SUBJECTS is read from the locale.yaml files on first use, not at import
    if name == "EXAMPLE_SUBJECTS":
        return example_subject_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MESSAGE_KEYS = (
    "refusal",
    "below_threshold",
    "gate_stop",
    "truncated",
    "budget_exhausted",
    "rate_limited",
)


@dataclass(frozen=True, order=True)
class Finding:
    """One linter finding."""

    path: str
    line: int
    level: str  # "ERROR" | "WARNING"
    message: str

    def __str__(self) -> str:
        return f"[{self.level}] {self.path}:{self.line}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


# -- phrase checks ----------------------------------------------------------------------

_PHRASE_REGEXY = regex.compile(r"[\\()\[\]|*+^$]")


def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """The normalised tokens of a phrase (``{subject}`` and ``...`` kept as tokens)."""
    out: list[str] = []
    for part in regex.split(r"(\{subject\}|\.\.\.|…)", phrase, timeout=1.0):
        if part == SUBJECT:
            out.append(SUBJECT)
        elif part in ("...", "…"):
            out.append("...")
        else:
            lit = normalise_literal(part).replace(ZWNJ, "")
            out.extend(t for t in lit.split(" ") if t)
    return tuple(out)


def _contains(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    if len(small) > len(big) or not small:
        return False
    if all(is_han(t[0]) for t in small + big if t not in (SUBJECT, "...")):
        return "".join(small) in "".join(big)
    return any(big[k : k + len(small)] == small for k in range(len(big) - len(small) + 1))


# -- the linter ---------------------------------------------------------------------------


def _rule_findings(data: LocaleData, findings: list[Finding]) -> None:
    from guardlex.rules import _state, compile_locale

    # compile each rule alone to run its examples and check its sources
    from guardlex.rules.compile import proclitic_source, rule_sources, subject_source

    names = example_subject_names(data.info)
    info = data.info or LocaleInfo(code=data.code)
    subject = subject_source(
        data.lexicon.get("pronouns", []), names, info.titles, info.titles_after
    )
    proclitics = proclitic_source(data.lexicon.get("proclitics", []))
    own: dict[str, regex.Pattern[str] | None] = {}
    for rule in data.rules:
        for pat, line in zip(rule.patterns, rule.pattern_lines, strict=True):
            for written, norm in rewritten_chars(pat):
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        "ERROR",
                        f"pattern of rule '{rule.id}' contains {written!r}, which normalisation "
                        f"turns into {norm!r}, so it can never match; write {norm!r} instead",
                    )
                )
            for risk in backtracking_risks(pat):
                findings.append(
                    Finding(rule.path, line, "ERROR", f"pattern of rule '{rule.id}': {risk}")
                )
            try:
                regex.compile(pattern_source(pat, subject))
            except regex.error as exc:
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        "ERROR",
                        f"pattern of rule '{rule.id}' is not a valid regular expression "
                        f"({exc}); fix its syntax",
                    )
                )
        for phrase, line in zip(rule.phrases, rule.phrase_lines, strict=True):
            if _PHRASE_REGEXY.search(phrase, timeout=1.0):
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        "WARNING",
                        f"phrase {phrase!r} of rule '{rule.id}' contains regex syntax, but phrases "
                        "are matched as literal text; move it to 'patterns' or remove the symbols",
                    )
                )
            if not normalise(phrase.replace(SUBJECT, "").replace("...", "")).strip():
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        "ERROR",
                        f"phrase {phrase!r} of rule '{rule.id}' is empty after "
                        "normalisation; write words",
                    )
                )
        sources = rule_sources(rule.phrases, rule.patterns, subject, proclitics)
        if rule.enabled and rule_anchors(sources) is None:
            findings.append(
                Finding(
                    rule.path,
                    rule.line,
                    WARNING,
                    f"rule '{rule.id}' has a phrase or pattern without fixed text (e.g. only "
                    "\\w+ or a class), so it runs on every question; add a literal word",
                )
            )
        try:
            own[rule.id] = regex.compile(
                "|".join(
                    f"(?:{s})"
                    for s in rule_sources(rule.phrases, rule.patterns, subject, proclitics)
                )
            )
        except regex.error:
            own[rule.id] = None

    compiled = compile_locale(data, names)
    from guardlex.rules.engine import Packs

    packs = Packs([_state(compiled)], names, {data.code: info})
    for rule in data.active_rules():
        pattern = own.get(rule.id)
        for example in rule.match:
            route = packs.route(example)
            want = "refuse" if rule.section == "refusal" else "overview"
            if route.kind != want or (want == "refuse" and route.category != rule.category):
                got = route.kind + (f"/{route.category}" if route.category else "")
                by = f" by rule '{route.rule_id}'" if route.rule_id else ""
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        "ERROR",
                        f"example {example!r} of rule '{rule.id}' should route to "
                        f"{want}{'/' + rule.category if rule.category else ''} "
                        f"but routes to {got}{by}; "
                        "add a phrase or pattern that catches it, or move the example",
                    )
                )
            elif pattern is not None and not _search(pattern, example):
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        "WARNING",
                        f"example {example!r} of rule '{rule.id}' is caught by rule "
                        f"'{route.rule_id}', "
                        "not by this rule; add a phrase here or move the example to that rule",
                    )
                )
        for example in rule.no_match:
            if pattern is not None and _search(pattern, example):
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        "ERROR",
                        f"no_match example {example!r} is caught by rule '{rule.id}'; "
                        "make the phrases or patterns more specific",
                    )
                )

    _shadow_findings(data, findings)


def _duplicate_ids(pf: PackFile, seen: dict[str, tuple[str, int]]) -> list[Finding]:
    """Ids used twice in one folder (refusal.yaml and overview.yaml together)."""
    out: list[Finding] = []
    for key, raws in rule_groups(pf):
        for i, raw in enumerate(raws):
            rid = raw.get("id") if isinstance(raw, dict) else None
            if not isinstance(rid, str):
                continue
            line = pf.line((key, i))
            if rid in seen:
                where, first = seen[rid]
                out.append(
                    Finding(
                        str(pf.path),
                        line,
                        ERROR,
                        f"rule id '{rid}' is used twice (first in {where} line {first}); "
                        "give each rule its own id",
                    )
                )
            else:
                seen[rid] = (pf.path.name, line)
    return out


def _search(pattern: regex.Pattern[str], text: str) -> bool:
    return pattern.search(normalise(text), timeout=1.0) is not None


def _shadow_findings(data: LocaleData, findings: list[Finding]) -> None:
    groups: dict[str, list[tuple[RuleSpec, tuple[str, ...], int, str]]] = {}
    for rule in data.active_rules():
        group = rule.category or "overview"
        for phrase, line in zip(rule.phrases, rule.phrase_lines, strict=True):
            groups.setdefault(group, []).append((rule, phrase_tokens(phrase), line, phrase))
        for pat, line in zip(rule.patterns, rule.pattern_lines, strict=True):
            groups.setdefault(group, []).append((rule, ("\0pattern", pat), line, pat))
    for entries in groups.values():
        for a_i, (ra, ta, _la, pa) in enumerate(entries):
            for b_i, (rb, tb, lb, pb) in enumerate(entries):
                if a_i == b_i:
                    continue
                same = ta == tb
                if same and a_i > b_i:
                    continue
                if same:
                    where = "in the same rule" if ra is rb else f"in rule '{ra.id}'"
                    findings.append(
                        Finding(
                            rb.path,
                            lb,
                            "WARNING",
                            f"{pb!r} (rule '{rb.id}') is written twice ({where}); remove one",
                        )
                    )
                elif (
                    ra is not rb
                    and ta[0] != "\0pattern"
                    and tb[0] != "\0pattern"
                    and _contains(ta, tb)
                ):
                    findings.append(
                        Finding(
                            rb.path,
                            lb,
                            "WARNING",
                            f"phrase {pb!r} of rule '{rb.id}' is shadowed by {pa!r} of rule "
                            f"'{ra.id}', which matches whenever it does; remove the longer phrase "
                            "or merge the rules",
                        )
                    )


def _first_person_findings(data: LocaleData, findings: list[Finding]) -> None:
    fp_file = next((f for f in data.files if f.kind == "first_person"), None)
    if fp_file is None:
        return
    from guardlex.rules import _state, compile_locale
    from guardlex.rules.engine import Packs

    packs = Packs([_state(compile_locale(data))])
    examples = data.first_person.get("examples") or {}
    for example in examples.get("match") or ():
        if packs.first_person(example, locale=data.code) is None:
            findings.append(
                Finding(
                    str(fp_file.path),
                    fp_file.line(("examples",)),
                    "ERROR",
                    f"first-person example {example!r} finds no first-person word; "
                    "add the word to pronouns or verb_forms",
                )
            )
    for example in examples.get("no_match") or ():
        hit = packs.first_person(example, locale=data.code)
        if hit is not None:
            findings.append(
                Finding(
                    str(fp_file.path),
                    fp_file.line(("examples",)),
                    "ERROR",
                    f"no_match example {example!r} is flagged by {hit.word!r}; "
                    "remove that entry or add an exception",
                )
            )


def lint_locale(code: str, folders: Sequence[Path], check: Sequence[Path]) -> list[Finding]:
    """Lint one locale merged over ``folders``; file-level checks only for ``check``."""
    findings: list[Finding] = []
    data = LocaleData(code=code)
    try:
        data.info = merge_locale_info(code, folders)
    except PackError:
        data.info = None  # the schema check of locale.yaml below reports it with its line
    broken = False
    ids_seen: dict[str, tuple[str, int]] = {}
    for folder in folders:
        for kind in FILE_KINDS:
            path = folder / f"{kind}.yaml"
            if not path.is_file():
                # concepts are optional: a locale may write its rules with templates only
                if kind != "concepts" and folder == folders[0] and folder in check:
                    findings.append(
                        Finding(
                            str(folder),
                            1,
                            ERROR,
                            f"locale '{code}' has no {kind}.yaml; add it (see docs/packs.md)",
                        )
                    )
                continue
            try:
                pf = read_pack_file(path, kind)
            except PackError as exc:
                findings.append(
                    Finding(
                        exc.path or str(path), exc.line or 1, ERROR, str(exc).split(": ", 1)[-1]
                    )
                )
                broken = True
                continue
            problems = schema_problems(pf, code)
            if folder in check:
                for _, line, message in problems:
                    findings.append(Finding(str(path), line, ERROR, message))
            if problems:
                broken = True
                continue
            if folder in check:
                findings.extend(_duplicate_ids(pf, ids_seen))
            data.files.append(pf)
            _merge_file(data, pf)
        ids_seen.clear()
    if broken:
        return findings
    _rule_findings(data, findings)
    _first_person_findings(data, findings)
    msg_file = next((f for f in data.files if f.kind == "messages"), None)
    if msg_file is not None:
        for key in MESSAGE_KEYS:
            if key not in data.messages:
                findings.append(
                    Finding(
                        str(msg_file.path),
                        msg_file.line(("messages",)),
                        ERROR,
                        f"message '{key}' is missing; add the text readers see",
                    )
                )
    checked = {str(p) for p in check}
    return [f for f in findings if any(f.path.startswith(c) for c in checked)]


def lint(paths: Iterable[str | Path] = ()) -> list[Finding]:
    """Lint the given pack directories (default: shipped packs and entry points)."""
    dirs = [Path(p) for p in paths]
    found = discover(dirs, entry_points=not dirs)
    if dirs:
        roots = [p.resolve() for p in dirs]
        check = {
            code: [
                f
                for f in folders
                if any(f.resolve() == r or r in f.resolve().parents for r in roots)
            ]
            for code, folders in found.items()
        }
    else:
        check = {code: list(folders) for code, folders in found.items()}
    findings: list[Finding] = []
    for code in sorted(found):
        if not check.get(code):
            continue
        findings.extend(lint_locale(code, found[code], check[code]))
    return sorted(set(findings))


__all__ = ["SHIPPED_DIR", "Finding", "backtracking_risks", "lint", "lint_locale", "rewritten_chars"]
