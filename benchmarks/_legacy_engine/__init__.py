"""A frozen copy of the guardlex 0.1.0 routing engine (phrases and patterns, one regex per rule).

Kept only to measure against (``benchmarks/bench_route.py``) and to diff routes
(``tools/compare_routes.py``) in the same process as the current engine. It reads the
shipped packs in either format: schema_version 1 (``phrases:``/``patterns:``, refusal
rules grouped by category) or a schema_version 2 file converted mechanically by
``tools/migrate_packs_v2.py`` (``templates:`` that are plain phrases, ``regex:``).
Rules written with v2-only features (concepts, frames) are skipped. No checking: the
packs are the shipped ones, which the real loader checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from guardlex.rules.loader import SHIPPED_DIR

from .anchors import rule_anchors
from .compile import proclitic_source, rule_sources, subject_source
from .engine import (
    SUBJECT_CALL,
    CompiledRule,
    LocaleState,
    Packs,
    Route,
    frozen_mapping,
    words_source,
)

__all__ = ["Packs", "Route", "load_packs"]

CATEGORIES = ("engagement", "personal_data", "speculation", "meta", "task")
SUBJECT_FOR_ANCHORS = "."
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    return data if isinstance(data, dict) else {}


def _v2_plain(rule: dict[str, Any]) -> bool:
    """A v2 rule the old engine can run: templates without v2 syntax, no frame."""
    if rule.get("when"):
        return False
    return not any(ch in t for t in rule.get("templates") or () for ch in "()[]<>*$^|\\")


def _rules(folder: Path) -> list[tuple[str, str | None, str | None, list[str], list[str]]]:
    out = []
    for section in ("refusal", "overview"):
        d = _read(folder / f"{section}.yaml")
        if d.get("schema_version") == 2:
            for r in d.get("rules") or []:
                if r.get("enabled", True) is False or not _v2_plain(r):
                    continue
                cat = r.get("category") if section == "refusal" else None
                out.append(
                    (
                        r["id"],
                        cat,
                        r.get("topic"),
                        list(r.get("templates") or ()),
                        list(r.get("regex") or ()),
                    )
                )
            # v1 order: by category, then as written
            if section == "refusal":
                out.sort(key=lambda t: CATEGORIES.index(t[1]) if t[1] in CATEGORIES else 9)
            continue
        groups = (
            [(c, d.get(c) or []) for c in CATEGORIES]
            if section == "refusal"
            else [(None, d.get("rules") or [])]
        )
        for cat, raws in groups:
            for r in raws:
                if r.get("enabled", True) is False:
                    continue
                out.append(
                    (
                        r["id"],
                        cat,
                        r.get("topic"),
                        list(r.get("phrases") or ()),
                        list(r.get("patterns") or ()),
                    )
                )
    return out


def _compile(folder: Path, code: str, names: Sequence[str]) -> LocaleState:
    lexicon = _read(folder / "lexicon.yaml")
    subject = subject_source(lexicon.get("pronouns", []), names)
    proclitics = proclitic_source(lexicon.get("proclitics", []))
    rules: list[CompiledRule] = []
    for rid, cat, topic, phrases, patterns in _rules(folder):
        sources = [s for s in rule_sources(phrases, patterns, SUBJECT_CALL, proclitics)]
        if "(?<" in "".join(sources):  # group calls misbehave in lookbehinds: inline there
            sources = [
                s.replace(SUBJECT_CALL, f"(?:{subject})") if "(?<" in s else s for s in sources
            ]
        anchors = rule_anchors(rule_sources(phrases, patterns, SUBJECT_FOR_ANCHORS))
        rules.append(
            CompiledRule(
                id=rid,
                locale=code,
                section="refusal" if cat else "overview",
                category=cat,
                topic=topic,
                sources=tuple(sources),
                anchors=None if anchors is None else tuple(sorted(anchors)),
                subject=subject,
            )
        )
    fp = _read(folder / "first_person.yaml")
    return LocaleState(
        code=code,
        refusal=tuple(r for r in rules if r.section == "refusal"),
        overview=tuple(r for r in rules if r.section == "overview"),
        first_person_source=words_source([*fp.get("pronouns", []), *fp.get("verb_forms", [])]),
        exception_source=words_source(fp.get("exceptions", [])),
        stopwords=frozenset(_read(folder / "stopwords.yaml").get("words") or ()),
        signal_words=frozenset(),
        lexicon=frozen_mapping(lexicon),
        messages=frozen_mapping(_read(folder / "messages.yaml").get("messages") or {}),
    )


def load_packs(
    locales: Iterable[str] | None = None,
    subject_names: Sequence[str] = (),
    root: Path = SHIPPED_DIR,
) -> Packs:
    """The shipped packs (or those under ``root``) compiled by the 0.1.0 engine."""
    codes = sorted(p.name for p in root.iterdir() if (p / "refusal.yaml").is_file())
    if locales is not None:
        codes = [c for c in locales if c in codes]
    names = tuple(subject_names)
    return Packs([_compile(root / c, c, names) for c in codes], names)
