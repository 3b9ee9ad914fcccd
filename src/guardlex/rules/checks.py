"""Checks a broken pack fails at load time, shared by the loader and the linter.

The loader calls :func:`check_locale` after merging a locale, so a pack with a typo in
``disabled:``, a rule id used twice in one file, or a regular expression prone to
catastrophic backtracking is a ``PackError`` with file and line when the packs are
loaded, never a surprise at the first question. The linter reports the same problems
(and more) as findings.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

import regex

from guardlex.errors import PackError
from guardlex.rules._text import normalise

if TYPE_CHECKING:
    from guardlex.rules._schema import PackFile
    from guardlex.rules.loader import LocaleData

ZWNJ = "\u200c"
REFUSAL_GROUPS = ("engagement", "personal_data", "speculation", "meta", "task", "rules")


def rule_groups(pf: PackFile) -> list[tuple[str, list[Any]]]:
    """The rule lists of a refusal or overview file, each with its key (v1 categories or
    the v2 ``rules:`` list)."""
    if pf.kind == "refusal":
        return [
            (k, pf.data.get(k) or []) for k in REFUSAL_GROUPS if isinstance(pf.data.get(k), list)
        ]
    if pf.kind == "overview":
        raws = pf.data.get("rules")
        return [("rules", raws)] if isinstance(raws, list) else []
    return []


def duplicate_ids(pf: PackFile) -> list[tuple[int, str]]:
    """(line, message) for each rule id used a second time in one file."""
    seen: dict[str, int] = {}
    out: list[tuple[int, str]] = []
    for key, raws in rule_groups(pf):
        for i, raw in enumerate(raws):
            rid = raw.get("id") if isinstance(raw, dict) else None
            if not isinstance(rid, str):
                continue
            line = pf.line((key, i))
            if rid in seen:
                out.append(
                    (
                        line,
                        f"rule id '{rid}' is used twice in this file (first on line "
                        f"{seen[rid]}); give each rule its own id",
                    )
                )
            else:
                seen[rid] = line
    return out


def _suggest(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def check_locale(data: LocaleData) -> None:
    """Raise ``PackError`` (file, line, a sentence) for the first load-time problem of a
    merged locale: duplicate ids in a file, an unknown id in ``disabled:``, a regex escape
    hatch that can backtrack catastrophically."""
    ids = sorted({r.id for r in data.rules})
    concepts = sorted(getattr(data, "concepts", {}) or {})
    for pf in data.files:
        for line, message in duplicate_ids(pf):
            raise PackError(message, str(pf.path), line)
        if pf.kind not in ("refusal", "overview", "concepts"):
            continue
        known = concepts if pf.kind == "concepts" else ids
        what = "concept" if pf.kind == "concepts" else "rule"
        for i, name in enumerate(pf.data.get("disabled") or ()):
            if name not in known:
                raise PackError(
                    f"'disabled' lists '{name}', which is not a {what} of locale "
                    f"'{data.code}'{_suggest(str(name), known)} (check the spelling: "
                    "a misspelt id would leave the rule switched on)",
                    str(pf.path),
                    pf.line(("disabled", i)),
                )
    for rule in data.rules:
        for pattern, line in zip(rule.patterns, rule.pattern_lines, strict=False):
            try:
                regex.compile(pattern.replace("{subject}", "(?:s)").replace(ZWNJ, " ?"))
            except regex.error as exc:
                raise PackError(
                    f"regex of rule '{rule.id}' is not a valid regular expression ({exc}); "
                    "fix its syntax, or write a template instead",
                    rule.path,
                    line,
                ) from exc
            risks = backtracking_risks(pattern)
            if risks:
                raise PackError(f"regex of rule '{rule.id}': {risks[0]}", rule.path, line)


# -- pattern checks ---------------------------------------------------------------------

_ESCAPE_WITH_BRACES = frozenset("pPN")


def literal_chars(pattern: str) -> list[tuple[int, str]]:
    """Characters of a pattern that are matched literally (escapes and syntax skipped)."""
    out: list[tuple[int, str]] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1] if i + 1 < n else ""
            if nxt in _ESCAPE_WITH_BRACES and i + 2 < n and pattern[i + 2] == "{":
                close = pattern.find("}", i + 2)
                i = close + 1 if close != -1 else n
            else:
                i += 2
            continue
        if ch == "(" and pattern.startswith("(?", i):
            # group syntax: (?:  (?P<name>  (?<name>  (?=  (?<!  (?i) ...
            m = regex.match(
                r"\(\?(?:P?<[A-Za-z_]\w*>|P=\w+\)|[a-zA-Z-]+[:)]|[:=!>|]|<[=!])",
                pattern[i:],
                timeout=1.0,
            )
            i += m.end() if m else 2
            continue
        if ch == "{":
            m = regex.match(r"\{\d*,?\d*\}|\{subject\}", pattern[i:], timeout=1.0)
            if m:
                i += m.end()
                continue
        out.append((i, ch))
        i += 1
    return out


def rewritten_chars(pattern: str) -> list[tuple[str, str]]:
    """(written, normalised) for each literal character normalisation would rewrite."""
    out = []
    for _, ch in literal_chars(pattern):
        if ch in (ZWNJ, " ") or (ch.isascii() and not ch.isupper()):
            continue
        norm = normalise(ch)
        if norm != ch:
            out.append((ch, norm))
    return out


_UNBOUNDED = regex.compile(r"(?:[*+]|\{\d*,\})\??")
_QUANT_AFTER = regex.compile(r"(?:[*+]|\{(\d*),(\d*)\})")


def backtracking_risks(pattern: str) -> list[str]:
    """Constructs prone to catastrophic backtracking, described for a linguist."""
    risks: list[str] = []
    stack: list[dict[str, object]] = []
    i = 0
    n = len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
        elif ch == "(":
            stack.append({"start": i, "inner": False, "alts": [i + 1]})
        elif ch == "|" and stack:
            stack[-1]["alts"].append(i + 1)  # type: ignore[attr-defined]
        elif ch == ")" and stack:
            group = stack.pop()
            after = pattern[i + 1 :]
            q = _QUANT_AFTER.match(after, timeout=1.0)
            unbounded = bool(q) and (
                q.group(0) in ("*", "+") or (q.group(2) == "" and "," in q.group(0))
            )
            text = pattern[int(group["start"]) : i + 1]  # type: ignore[call-overload]
            if unbounded and group["inner"]:
                risks.append(
                    f"nested quantifiers in {text}{q.group(0)} can backtrack catastrophically; "
                    "quantify only once, e.g. (?:\\w+ ){0,3} instead of (\\w+ )*"
                )
            if unbounded:
                alts = _alternatives(pattern, group["alts"], i)  # type: ignore[arg-type]
                if _overlapping(alts):
                    risks.append(
                        f"alternatives in {text} overlap and are repeated; a long input can "
                        "backtrack catastrophically: make the alternatives start differently"
                    )
            if stack and (group["inner"] or unbounded):
                stack[-1]["inner"] = True
        elif stack and _UNBOUNDED.match(pattern, i, timeout=1.0):
            stack[-1]["inner"] = True
        i += 1
    if regex.search(r"(?<!\\)\.[*+]", pattern, timeout=1.0):
        risks.append(
            "'.*' or '.+' matches across the whole question and makes scans slow; "
            "use a bounded gap such as (?: \\S+){0,3}"
        )
    return risks


def _alternatives(pattern: str, starts: list[int], end: int) -> list[str]:
    bounds = [*starts, end + 1]
    alts = [pattern[bounds[k] : bounds[k + 1] - 1] for k in range(len(starts))]
    if alts and alts[0].startswith("?"):
        alts[0] = regex.sub(r"^\?(?:P?<\w+>|[:=!>]|<[=!])", "", alts[0], timeout=1.0)
    return alts


_META = regex.compile(r"[\\.\[\](){}*+?|^$]")


def _overlapping(alts: list[str]) -> bool:
    if len(alts) < 2:
        return False
    if all(not _META.search(a, timeout=1.0) for a in alts):
        # plain words: ambiguous only if one is a prefix of another ("a|ab", "an|and")
        return any(x != y and y.startswith(x) for x in alts for y in alts) or len(set(alts)) < len(
            alts
        )
    heads = []
    for a in alts:
        if not a:
            return True
        if a.startswith("\\") and len(a) > 1:
            heads.append(a[:2])
        else:
            heads.append(a[0])
    generic = {"\\w", "\\S", ".", "\\D", "\\W"}
    if any(h in generic for h in heads):
        return True
    return len(set(heads)) < len(heads)
