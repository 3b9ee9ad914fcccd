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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import regex

from guardlex.errors import PackError
from guardlex.rules._schema import FILE_KINDS, PackFile, _stringify_keys, read_pack_file
from guardlex.rules._text import normalise
from guardlex.rules.checks import (
    backtracking_risks,
    rewritten_chars,
    rule_groups,
)
from guardlex.rules.compile import pattern_source
from guardlex.rules.loader import (
    SHIPPED_DIR,
    LocaleData,
    RuleSpec,
    _merge_file,
    discover,
    load_locale,
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


# -- the linter ---------------------------------------------------------------------------


def _regex_findings(data: LocaleData, findings: list[Finding]) -> None:
    """The escape hatch: regexes normalisation makes unmatchable, invalid or slow ones."""
    for rule in data.rules:
        for pat, line in zip(rule.patterns, rule.pattern_lines, strict=False):
            for written, norm in rewritten_chars(pat):
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        ERROR,
                        f"regex of rule '{rule.id}' contains {written!r}, which normalisation "
                        f"turns into {norm!r}, so it can never match; write {norm!r} instead",
                    )
                )
            for risk in backtracking_risks(pat):
                message = f"regex of rule '{rule.id}': {risk}"
                findings.append(Finding(rule.path, line, ERROR, message))
            try:
                regex.compile(pattern_source(pat, "(?:s)"))
            except regex.error as exc:
                findings.append(
                    Finding(
                        rule.path,
                        line,
                        ERROR,
                        f"regex of rule '{rule.id}' is not a valid regular expression "
                        f"({exc}); fix its syntax, or write a template",
                    )
                )


def _own_hit(packs: Any, rule: RuleSpec, text: str) -> bool:
    """Whether ``rule`` itself matches ``text``, no other rule competing."""
    return packs.match_rule(rule.locale, rule.id, text) is not None


def _concept_example_findings(data: LocaleData, packs: Any, findings: list[Finding]) -> None:
    """A concept's ``match`` examples must contain one of its terms; ``no_match`` ones not."""
    try:
        from guardlex.rules.matcher import sanitise

        m = packs.matcher()
        for name, spec in sorted((data.concepts or {}).items()):
            for want, examples in ((True, spec.match), (False, spec.no_match)):
                for text in examples:
                    occ = m.occurrences(sanitise(normalise(text)))
                    if bool(occ.concept(data.code, name)) == want:
                        continue
                    if want:
                        message = (
                            f"example {text!r} of concept <{name}> contains none of its terms; "
                            "add the missing term, or fix the example"
                        )
                    else:
                        message = (
                            f"no_match example {text!r} of concept <{name}> contains one of its "
                            "terms; make the terms more specific, or fix the example"
                        )
                    findings.append(Finding(spec.path, spec.line, ERROR, message))
    except (AttributeError, ImportError, TypeError):
        return


def _example_findings(data: LocaleData, findings: list[Finding]) -> Any:
    """Each rule's own examples, routed with only this locale loaded; the packs (or None
    when the locale does not compile, reported as an error)."""
    from guardlex.rules import _state, compile_locale
    from guardlex.rules.engine import Packs

    names = example_subject_names(data.info)
    info = data.info or LocaleInfo(code=data.code)
    try:
        packs = Packs([_state(compile_locale(data, names))], names, {data.code: info})
        packs.route("x")
    except PackError as exc:
        message = str(exc)
        if exc.path and message.startswith(f"{exc.path}:"):
            message = message.split(": ", 1)[-1]
        findings.append(Finding(exc.path or str(data.code), exc.line or 1, ERROR, message))
        return None
    _concept_example_findings(data, packs, findings)
    for rule in data.active_rules():
        want = "refuse" if rule.section == "refusal" else "overview"
        for example in rule.match:
            route = packs.route(example)
            if route.kind != want or (want == "refuse" and route.category != rule.category):
                got = route.kind + (f"/{route.category}" if route.category else "")
                by = f" by rule '{route.rule_id}'" if route.rule_id else ""
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        ERROR,
                        f"example {example!r} of rule '{rule.id}' should route to "
                        f"{want}{'/' + rule.category if rule.category else ''} "
                        f"but routes to {got}{by}; "
                        "add a template that catches it, or move the example",
                    )
                )
            elif route.rule_id != rule.id and not _own_hit(packs, rule, example):
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        WARNING,
                        f"example {example!r} of rule '{rule.id}' is caught by rule "
                        f"'{route.rule_id}', "
                        "not by this rule; add a template here or move the example to that rule",
                    )
                )
        for example in rule.no_match:
            if _own_hit(packs, rule, example):
                findings.append(
                    Finding(
                        rule.path,
                        rule.line,
                        ERROR,
                        f"no_match example {example!r} is caught by rule '{rule.id}'; "
                        "make its templates more specific, or add a 'none' guard",
                    )
                )
    return packs


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


def _first_person_findings(data: LocaleData, findings: list[Finding], packs: Any) -> None:
    fp_file = next((f for f in data.files if f.kind == "first_person"), None)
    if fp_file is None or packs is None:
        return
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


def _routing_findings(
    data: LocaleData, packs: Any, routing_dir: Path | None, findings: list[Finding]
) -> None:
    """Every active rule should be hit by at least one case of the locale's routing file."""
    if packs is None or routing_dir is None:
        return
    path = routing_dir / f"{data.code}.yaml"
    if not path.is_file():
        return
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    hit: set[str] = set()
    for case in doc.get("cases") or []:
        if isinstance(case, dict) and isinstance(case.get("text"), str):
            route = packs.route(case["text"], case.get("previous"))
            if route.rule_id:
                hit.add(route.rule_id)
    for rule in data.active_rules():
        if rule.id not in hit:
            findings.append(
                Finding(
                    rule.path,
                    rule.line,
                    WARNING,
                    f"rule '{rule.id}' is not hit by any routing case in {path}; add a "
                    "question it must catch there (or the rule is dead)",
                )
            )


def _read_folder(
    code: str, folder: Path, check: bool, data: LocaleData, findings: list[Finding]
) -> bool:
    """Read, check and merge one folder's files; False when one of them is broken."""
    ok = True
    ids_seen: dict[str, tuple[str, int]] = {}
    for kind in FILE_KINDS:
        for suffix in ("", ".generated"):
            path = folder / f"{kind}{suffix}.yaml"
            if not path.is_file():
                # concepts are optional: a locale may write its rules with templates only
                if not suffix and kind != "concepts" and check:
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
                findings.append(Finding(exc.path or str(path), exc.line or 1, ERROR, _bare(exc)))
                ok = False
                continue
            if check:
                findings.extend(_portable_yaml(path, pf))
            problems = schema_problems(pf, code)
            if check:
                for _, line, message in problems:
                    findings.append(Finding(str(path), line, ERROR, message))
            if problems:
                ok = False
                continue
            if check:
                findings.extend(_duplicate_ids(pf, ids_seen))
            data.files.append(pf)
            try:
                _merge_file(data, pf)
            except PackError as exc:
                findings.append(Finding(exc.path or str(path), exc.line or 1, ERROR, _bare(exc)))
                ok = False
    return ok


def _portable_yaml(path: Path, pf: PackFile) -> list[Finding]:
    """A file must read the same with and without libyaml.

    The loader uses libyaml's parser when PyYAML has it; the pure-Python parser rejects
    some plain scalars libyaml accepts (a list item ending in "?" inside ``[...]``:
    ``[¿Está casada?, ...]``), so such a pack would load on one machine and fail on
    another. The linter reads each file with the pure-Python parser too.
    """
    import yaml

    text = path.read_text(encoding="utf-8")
    try:
        plain = yaml.safe_load(text)  # the pure-Python parser, whatever is installed
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        message = (
            "this line reads differently without libyaml (PyYAML's pure-Python parser "
            'rejects it): put the list item in double quotes, e.g. ["¿Está casada?", ...]'
        )
        return [Finding(str(path), line, ERROR, message)]
    if _stringify_keys(plain) != pf.data:
        return [
            Finding(
                str(path),
                1,
                ERROR,
                "the file reads differently without libyaml; quote list items that "
                "hold ?, :, # or brackets",
            )
        ]
    return []


def _bare(exc: PackError) -> str:
    """The message of a PackError without its ``path:line:`` prefix."""
    text = str(exc)
    for prefix in (f"{exc.path}:{exc.line}: ", f"{exc.path}: "):
        if exc.path and text.startswith(prefix):
            return text[len(prefix) :]
    return text


def lint_locale(
    code: str,
    folders: Sequence[Path],
    check: Sequence[Path],
    *,
    other_stopwords: Mapping[str, frozenset[str]] | None = None,
    names: Mapping[str, str] | None = None,
    routing_dir: Path | None = None,
) -> list[Finding]:
    """Lint one locale merged over ``folders``; file-level checks only for ``check``.

    ``other_stopwords``: normalised stopwords of the other loaded locales (for
    cross-locale collisions); ``routing_dir``: where ``<code>.yaml`` routing cases live.
    """
    findings: list[Finding] = []
    data = LocaleData(code=code)
    try:
        data.info = merge_locale_info(code, folders)
    except PackError:
        data.info = None  # the schema check of locale.yaml reports it with its line
    broken = False
    for folder in folders:
        if not _read_folder(code, folder, folder in check, data, findings):
            broken = True
    if broken:
        return _only(findings, check)
    from guardlex.rules.lint_tree import tree_findings

    for path, line, level, message in tree_findings(data, other_stopwords or {}, names or {}):
        findings.append(Finding(path, line, level, message))
    _regex_findings(data, findings)
    try:
        from guardlex.rules.checks import check_locale

        check_locale(data)
    except PackError as exc:
        findings.append(Finding(exc.path or code, exc.line or 1, ERROR, _bare(exc)))
    packs = None
    if not any(f.level == ERROR for f in findings):
        packs = _example_findings(data, findings)
    _first_person_findings(data, findings, packs)
    _routing_findings(data, packs, routing_dir, findings)
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
    return _only(findings, check)


def _only(findings: list[Finding], check: Sequence[Path]) -> list[Finding]:
    checked = {str(p) for p in check}
    return [f for f in findings if any(f.path.startswith(c) for c in checked)]


def _stopwords(folders: Sequence[Path]) -> frozenset[str]:
    words: set[str] = set()
    for folder in folders:
        for name in ("stopwords.yaml", "stopwords.generated.yaml"):
            path = folder / name
            if path.is_file():
                try:
                    pf = read_pack_file(path, "stopwords")
                except PackError:
                    continue  # reported when that locale is linted
                words.update(normalise(str(w)) for w in pf.data.get("words") or ())
    return frozenset(w for w in words if w)


#: Routing cases of the source tree (absent from an installed package).
ROUTING_DIR = Path(__file__).resolve().parents[3] / "tests" / "data" / "routing"


def lint(
    paths: Iterable[str | Path] = (),
    *,
    progress: Callable[[str], None] | None = None,
    routing_dir: str | Path | None = None,
) -> list[Finding]:
    """Lint the given pack directories (default: shipped packs and entry points).

    ``progress`` is called with a short line before each locale ("[3/10] fa"), for a
    CLI to show. ``routing_dir``: routing cases (``<code>.yaml``) every rule should be
    hit by; default: ``tests/data/routing`` of a source checkout, when linting the
    shipped packs (all of them, or folders inside ``SHIPPED_DIR`` such as one locale's).
    """
    dirs = [Path(p) for p in paths]
    roots = [p.resolve() for p in dirs]
    found = discover(dirs, entry_points=not dirs)
    if dirs:
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
    if routing_dir is not None:
        cases: Path | None = Path(routing_dir)
    else:
        # the shipped packs, whole or a locale folder of them, have the checkout's cases
        shipped = all(r.is_relative_to(SHIPPED_DIR.resolve()) for r in roots)
        cases = ROUTING_DIR if shipped and ROUTING_DIR.is_dir() else None
    stop = {code: _stopwords(folders) for code, folders in found.items()}
    names: dict[str, str] = {}
    for code, folders in found.items():
        try:
            names[code] = merge_locale_info(code, folders).name
        except PackError:
            names[code] = code
    todo = [code for code in sorted(found) if check.get(code)]
    findings: list[Finding] = []
    for k, code in enumerate(todo, 1):
        if progress is not None:
            progress(f"[{k}/{len(todo)}] {code}")
        others = {c: w for c, w in stop.items() if c != code}
        findings.extend(
            lint_locale(
                code,
                found[code],
                check[code],
                other_stopwords=others,
                names=names,
                routing_dir=cases,
            )
        )
    return sorted(set(findings))


def regex_count(paths: Iterable[str | Path] = ()) -> int:
    """How many regex escape hatches the linted packs use (the linter reports the number):
    the given folders, or the shipped packs and entry points."""
    dirs = [Path(p).resolve() for p in paths]
    total = 0
    for code, folders in discover(dirs, entry_points=not dirs).items():
        mine = [f for f in folders if not dirs or any(f == d or d in f.parents for d in dirs)]
        if not mine:
            continue
        try:
            data = load_locale(code, mine, strict=False)
        except PackError:
            continue
        total += sum(len(r.patterns) for r in data.rules)
    return total


__all__ = [  # EXAMPLE_SUBJECTS: module __getattr__ (read from locale.yaml on first use)
    "ROUTING_DIR",
    "SHIPPED_DIR",
    "Finding",
    "backtracking_risks",
    "example_subject_names",
    "lint",
    "lint_locale",
    "regex_count",
    "rewritten_chars",
]
