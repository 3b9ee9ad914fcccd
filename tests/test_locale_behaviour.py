"""What only one language's input does, as data: ``tests/data/behaviour/<code>.yaml``.

The generic harness of ``test_locale_data.py`` runs every rule's examples and routing
case; these files hold the rest of what a locale's owner checks: spellings that must
route alike (ß and ss, ё and е, Traditional and Simplified Chinese, nukta precomposed
or not), routes with a span or a locale, first-person words, entries the first-person
list must have or lack, and rewritings every match example of the pack must survive
(accents dropped, upper case, a Latin look-alike or a zero-width mark inside a word).

A file's keys (all optional but ``locale``):

- ``load``: the locales loaded (default: every shipped locale); ``subject_names``;
- ``routes``: ``text`` (``previous``), ``expect`` (``refuse``, ``overview``,
  ``retrieve``, or ``answered``: anything but a refusal), and optionally ``category``,
  ``topic``, ``locale`` (of the rule), ``span_has`` (text the span of the original
  question must contain);
- ``alike``: groups of ``texts`` that route as the first one does (kind, category,
  topic), with an optional ``expect``/``category``/``topic`` for all of them;
- ``example_variants``: rewritings applied to every ``match`` example of the locale's
  refusal rules (``sections: [refusal, overview]`` for both) that must keep its route:
  ``strip_accents``, ``upper``, ``replace`` (a character map), ``traditional`` (Simplified
  characters written in their Traditional form, from the normaliser's own table),
  ``insert`` (one of these marks at a position ``inside`` a match of a regex) and
  ``swap_one`` (one letter of a word matching ``inside`` replaced by its twin in a map);
  ``only`` restricts the examples to those matching a regex;
- ``first_person``: ``text`` and ``word`` (the word found, or null for none), or
  ``found: true`` (some word of the locale; ``at``: the text it starts), ``locale``
  (default the file's; null: every loaded locale);
- ``first_person_list``: entries the locale's ``first_person.yaml`` must ``have`` and
  words it must ``lack`` (as written or normalised).
"""

from __future__ import annotations

import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import regex
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import guardlex
from guardlex.normalise import normalise
from guardlex.normalise._tables import t2s_map
from guardlex.rules import Packs
from guardlex.rules.loader import SHIPPED_DIR

DATA = Path(__file__).parent / "data" / "behaviour"
FILES = sorted(DATA.glob("*.yaml"))


def _doc(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict) and doc.get("locale") == path.stem, path
    return doc


DOCS = {p.stem: _doc(p) for p in FILES}


@cache
def _packs(code: str) -> Packs:
    doc = DOCS[code]
    names = tuple(doc.get("subject_names") or ("Dana Reyes",))
    load = doc.get("load")
    return guardlex.load_packs(list(load) if load else None, subject_names=names)


def _params(key: str) -> list[Any]:
    out = []
    for code, doc in DOCS.items():
        for k, case in enumerate(doc.get(key) or ()):
            text = case.get("text") or (case.get("texts") or [""])[0]
            out.append(pytest.param(code, case, id=f"{code}/{key}/{k}:{text[:24]}"))
    return out


def _check(route: Any, case: dict[str, Any], text: str) -> None:
    expect = case.get("expect")
    if expect == "answered":
        assert route.kind != "refuse", (text, route)
    elif expect is not None:
        assert route.kind == expect, (text, route)
    for key in ("category", "topic", "locale"):
        if key in case:
            assert getattr(route, key) == case[key], (text, key, route)


@pytest.mark.parametrize(("code", "case"), _params("routes"))
def test_route(code: str, case: dict[str, Any]) -> None:
    text = case["text"]
    route = _packs(code).route(text, case.get("previous"))
    _check(route, case, text)
    if "span_has" in case:
        assert route.span is not None, (text, route)
        start, end = route.span
        assert 0 <= start < end <= len(text)
        assert case["span_has"] in text[start:end], (text, route.span)


@pytest.mark.parametrize(("code", "case"), _params("alike"))
def test_alike(code: str, case: dict[str, Any]) -> None:
    packs = _packs(code)
    texts = case["texts"]
    assert len(texts) >= 2
    routes = [packs.route(t, case.get("previous")) for t in texts]
    first = (routes[0].kind, routes[0].category, routes[0].topic)
    for text, route in zip(texts, routes, strict=True):
        assert (route.kind, route.category, route.topic) == first, (text, route, texts[0])
        _check(route, case, text)


# -- rewritings of every match example ------------------------------------------------


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


@cache
def _to_traditional() -> dict[str, str]:
    """Simplified -> one Traditional form, inverted from the normaliser's own table."""
    out: dict[str, str] = {}
    for trad, simp in sorted(t2s_map().items()):
        if len(trad) == 1 and len(simp) == 1 and trad != simp:
            out.setdefault(simp, trad)
    return out


def _rewrite(spec: dict[str, Any], text: str) -> str:
    if spec.get("strip_accents"):
        return _strip_accents(text)
    if spec.get("upper"):
        return text.upper()
    if "replace" in spec:
        return "".join(spec["replace"].get(ch, ch) for ch in text)
    if spec.get("traditional"):
        table = _to_traditional()
        return "".join(table.get(ch, ch) for ch in text)
    raise AssertionError(f"unknown rewriting {spec}")


def _examples(code: str, spec: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(example, kind, category) of the locale's rules in ``spec``'s sections."""
    out: list[tuple[str, str, str | None]] = []
    only = regex.compile(spec["only"]) if spec.get("only") else None
    for section in spec.get("sections") or ["refusal"]:
        doc = yaml.safe_load((SHIPPED_DIR / code / f"{section}.yaml").read_text(encoding="utf-8"))
        for rule in doc["rules"]:
            if rule.get("enabled") is False:
                continue
            kind = "refuse" if section == "refusal" else section
            for ex in rule["examples"]["match"]:
                if only is None or only.search(ex):
                    out.append((ex, kind, rule.get("category")))
    return out


def _variant_params(marks: bool) -> list[Any]:
    """The rewritings of every file: those that put a mark or a twin at a random place
    inside a word (``marks``), or the others."""
    out = []
    for code, doc in DOCS.items():
        for k, spec in enumerate(doc.get("example_variants") or ()):
            if marks != ("insert" in spec or "swap_one" in spec):
                continue
            out.append(pytest.param(code, spec, id=f"{code}/variant/{k}:{_name(spec)}"))
    return out


def _name(spec: dict[str, Any]) -> str:
    return next(k for k in spec if k not in ("only", "sections", "inside", "min_changed"))


@pytest.mark.parametrize(("code", "spec"), _variant_params(marks=False))
def test_every_example_survives_a_rewriting(code: str, spec: dict[str, Any]) -> None:
    packs = _packs(code)
    examples = _examples(code, spec)
    assert examples, (code, spec)
    changed = 0
    for text, kind, category in examples:
        new = _rewrite(spec, text)
        changed += new != text
        before, after = packs.route(text), packs.route(new)
        assert before.kind == kind, (text, before)
        if category is not None:
            assert before.category == category, (text, before)
        assert (after.kind, after.category, after.topic) == (
            before.kind,
            before.category,
            before.topic,
        ), (text, new, after)
    # the rewriting must touch the examples, or the test proves nothing
    assert changed >= len(examples) * float(spec.get("min_changed", 0.1)), (code, spec)


def _spots(spec: dict[str, Any], text: str) -> list[int]:
    inside = regex.compile(spec["inside"])
    if "insert" in spec:  # between two letters of a match
        return [m.start() + 1 + k for m in inside.finditer(text) for k in range(len(m.group()) - 1)]
    twins = spec["swap_one"]
    return [
        m.start() + i
        for m in inside.finditer(text)
        for i, ch in enumerate(m.group())
        if ch.lower() in twins
    ]


def _apply(spec: dict[str, Any], text: str, i: int, pick: int) -> str:
    if "insert" in spec:
        marks = spec["insert"]
        return text[:i] + marks[pick % len(marks)] + text[i:]
    ch = text[i]
    twin = spec["swap_one"][ch.lower()]
    return text[:i] + (twin.upper() if ch.isupper() else twin) + text[i + 1 :]


@pytest.mark.parametrize(("code", "spec"), _variant_params(marks=True))
def test_every_example_survives_a_mark_or_a_twin_inside_a_word(
    code: str, spec: dict[str, Any]
) -> None:
    packs = _packs(code)
    examples = [e for e in _examples(code, spec) if _spots(spec, e[0])]
    assert examples, (code, spec)

    @settings(max_examples=60, deadline=None)
    @given(
        example=st.sampled_from(examples),
        position=st.integers(min_value=0, max_value=300),
        pick=st.integers(min_value=0, max_value=10),
    )
    def check(example: tuple[str, str, str | None], position: int, pick: int) -> None:
        text, kind, category = example
        spots = _spots(spec, text)
        new = _apply(spec, text, spots[position % len(spots)], pick)
        assert new != text
        route = packs.route(new)
        assert (route.kind, route.category) == (kind, category), (text, new, route)

    check()


# -- first person ----------------------------------------------------------------------


@pytest.mark.parametrize(("code", "case"), _params("first_person"))
def test_first_person(code: str, case: dict[str, Any]) -> None:
    text = case["text"]
    locale = case.get("locale", code)
    hit = _packs(code).first_person(text, locale=locale)
    if case.get("found"):
        assert hit is not None, text
        assert hit.locale == code and text[hit.span[0] : hit.span[1]] == hit.word, (text, hit)
        if "at" in case:
            assert hit.span[0] == text.index(case["at"]), (text, hit)
    else:
        assert (hit.word if hit else None) == case["word"], (text, hit)
        if hit is not None:
            assert text[hit.span[0] : hit.span[1]] == hit.word


@pytest.mark.parametrize(
    "code", [c for c, d in DOCS.items() if d.get("first_person_list")], ids=lambda c: c
)
def test_first_person_list(code: str) -> None:
    spec = DOCS[code]["first_person_list"]
    data = yaml.safe_load((SHIPPED_DIR / code / "first_person.yaml").read_text(encoding="utf-8"))
    entries = set(data.get("pronouns") or ()) | set(data.get("verb_forms") or ())
    normalised = {normalise(w) for w in entries}
    missing = [w for w in spec.get("have") or () if w not in entries]
    assert not missing, missing
    present = [w for w in spec.get("lack") or () if w in entries or normalise(w) in normalised]
    assert not present, present


def test_every_shipped_locale_has_a_behaviour_file() -> None:
    shipped = sorted(p.name for p in SHIPPED_DIR.iterdir() if (p / "locale.yaml").is_file())
    assert shipped == sorted(DOCS)
