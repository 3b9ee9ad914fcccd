"""The evasion classes against the real packs: questions the packs refuse in plain form
(``tests/data/routing``), disguised one class at a time, must be refused at least 90 % as
often as the plain question, and 97 % over all, when the router checks every reading
``variants`` gives (refusal wins). Measured through ``Packs.route`` on each reading, so
it holds whether or not ``route`` calls ``variants`` itself."""

from __future__ import annotations

import random
import urllib.parse
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import regex
from tests.normalise.test_evasions import (
    _ARMENIAN,
    _CHEROKEE,
    _CYR,
    _SMALL_CAPS,
    _parenthesized,
    _refused_cases,
    _tags,
    all_words,
)

from guardlex.normalise import normalise, variants

ROUTING = Path(__file__).resolve().parents[1] / "data" / "routing"
LATIN = {"de", "en", "es", "fr", "pt"}
PER_LOCALE = 15
MIN_PER_CLASS = 5  # questions a class that applies to a locale is tried on there

Disguise = Callable[[str, str], "str | None"]


def _longest(t: str) -> regex.Match[str] | None:
    words = list(regex.finditer(r"[\p{L}\p{M}]+", t, timeout=5))
    return max(words, key=lambda m: len(m.group())) if words else None


def _in_word(t: str, f: Callable[[str], str]) -> str:
    m = _longest(t)
    return t if m is None else t[: m.start()] + f(m.group()) + t[m.end() :]


def _mid(w: str, ins: str) -> str:
    k = max(1, len(w) // 2)
    return w[:k] + ins + w[k:]


def _swap(table: dict[str, str]) -> Callable[[str], str]:
    return lambda s: "".join(table.get(c, c) for c in s)


def _leet(w: str) -> str:
    for c, d in (("a", "4"), ("e", "3"), ("i", "1"), ("o", "0"), ("s", "$"), ("t", "7")):
        if c in w:
            return w.replace(c, d, 1)
    return w


def _repeat(w: str) -> str:
    i = next((i for i, c in enumerate(w) if c.isalpha()), 0)
    return w[: i + 1] + w[i] * 2 + w[i + 1 :]


def _graphemes(w: str) -> list[str]:
    return regex.findall(r"\X", w, timeout=5)


def _latin(f: Callable[[str], str]) -> Disguise:
    return lambda t, loc: f(normalise(t)) if loc in LATIN else None


CLASSES: dict[str, Disguise] = {
    "tags": lambda t, loc: (
        "What are her office hours? " + _tags(normalise(t)) if normalise(t).isascii() else None
    ),
    "zero-width": lambda t, loc: "\u200b".join(t),
    "variation-selectors": lambda t, loc: _in_word(t, lambda w: "\ufe0f".join(w)),
    "filler-as-space": lambda t, loc: t.replace(" ", "\u3164") if " " in t else None,
    "filler-in-word": lambda t, loc: _in_word(t, lambda w: _mid(w, "\u3164")),
    "braille-as-space": lambda t, loc: t.replace(" ", "\u2800") if " " in t else None,
    "small-capitals": _latin(_swap(_SMALL_CAPS)),
    "armenian": _latin(_swap(_ARMENIAN)),
    "cherokee": _latin(_swap(_CHEROKEE)),
    "parenthesized": _latin(_parenthesized),
    "cyrillic-word": _latin(lambda t: _in_word(t, _swap(_CYR))),
    "stress": lambda t, loc: (
        regex.sub(r"([аеиоуыэюяАЕИОУЫЭЮЯ])", "\\1\u0301", t, timeout=5) if loc == "ru" else None
    ),
    "zwnj-in-word": lambda t, loc: (
        _in_word(t, lambda w: _mid(w, "\u200c")) if loc in ("fa", "ar") else None
    ),
    "han-spaces": lambda t, loc: " ".join(t) if loc == "zh" else None,
    "han-dots": lambda t, loc: "·".join(t) if loc == "zh" else None,
    "urdu-letters": lambda t, loc: (
        t.replace("ه", "ھ").replace("ی", "ے").replace("ي", "ے").replace("ک", "ڪ")
        if loc in ("fa", "ar")
        else None
    ),
    "nukta-added": lambda t, loc: (
        t.replace("क", "क़").replace("ज", "ज़").replace("फ", "फ़") if loc == "hi" else None
    ),
    "nukta-dropped": lambda t, loc: t.replace("\u093c", "") if loc == "hi" else None,
    "spaced-letters": lambda t, loc: _in_word(t, lambda w: " ".join(_graphemes(w))),
    "spaced-question": lambda t, loc: (
        " ".join(" ".join(_graphemes(w)) for w in t.split()) if loc != "zh" else None
    ),
    "spaced-question-wide": lambda t, loc: (
        "  ".join(" ".join(_graphemes(w)) for w in t.split()) if loc != "zh" else None
    ),
    "dotted-letters": lambda t, loc: _in_word(t, lambda w: ".".join(_graphemes(w))),
    "dash-in-word": lambda t, loc: _in_word(t, lambda w: _mid(w, "-")),
    "leetspeak": _latin(lambda t: _in_word(t, _leet)),
    "repeated-letters": lambda t, loc: _in_word(t, _repeat),
    "line-break": lambda t, loc: _in_word(t, lambda w: _mid(w, "\n")),
    "html-entities": lambda t, loc: _in_word(t, lambda w: "".join(f"&#x{ord(c):x};" for c in w)),
    "percent-encoding": lambda t, loc: _in_word(t, urllib.parse.quote),
}


@cache
def _load():  # type: ignore[no-untyped-def]
    import guardlex
    from guardlex.errors import PackError

    try:
        return guardlex.load_packs()
    except PackError as exc:  # the packs' own tests report this; here it is no verdict
        return str(exc)


def _packs():  # type: ignore[no-untyped-def]
    packs = _load()
    if isinstance(packs, str):
        pytest.skip(f"the packs do not load: {packs[:200]}")
    return packs


def _refused(text: str) -> bool:
    return bool(_packs().route(text).kind == "refuse")


def _refused_with_variants(text: str) -> bool:
    return any(_refused(v) for v in variants(text, all_words()))


@cache
def _refused_plain() -> dict[str, tuple[str, ...]]:
    rng = random.Random(2026)
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted(ROUTING.glob("*.yaml")):
        texts = [t for t in _refused_cases(path.stem) if _refused(t)]
        rng.shuffle(texts)
        out[path.stem] = tuple(texts)
    return out


def _applicable(name: str, loc: str, texts: tuple[str, ...]) -> list[str]:
    """The class's disguise of the first PER_LOCALE shuffled questions; a class that
    applies to fewer of them (a Hindi nukta is in few questions) takes the next
    questions it applies to, up to MIN_PER_CLASS, so no class is measured on nothing."""
    out: list[str] = []
    for i, text in enumerate(texts):
        if i >= PER_LOCALE and len(out) >= MIN_PER_CLASS:
            break
        disguised = CLASSES[name](text, loc)
        if disguised is not None and disguised != text:
            out.append(disguised)
    return out


@cache
def _rates() -> dict[str, tuple[int, int]]:
    rates: dict[str, tuple[int, int]] = {}
    for loc, texts in _refused_plain().items():
        for name in CLASSES:
            for disguised in _applicable(name, loc, texts):
                n, ok = rates.get(name, (0, 0))
                rates[name] = (n + 1, ok + _refused_with_variants(disguised))
    return rates


def test_every_locale_has_refused_questions() -> None:
    if not ROUTING.is_dir():
        pytest.skip("routing cases not available")
    plain = _refused_plain()
    assert len(plain) == 10
    assert all(len(texts) >= 10 for texts in plain.values()), {k: len(v) for k, v in plain.items()}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_class_is_refused_nine_times_in_ten(name: str) -> None:
    if not ROUTING.is_dir():
        pytest.skip("routing cases not available")
    n, ok = _rates().get(name, (0, 0))
    assert n >= MIN_PER_CLASS, f"{name}: only {n} questions it applies to"
    assert ok / n >= 0.9, f"{name}: {ok} of {n}"


def test_all_classes_together_are_refused_97_percent() -> None:
    if not ROUTING.is_dir():
        pytest.skip("routing cases not available")
    rates = _rates().values()
    n = sum(r[0] for r in rates)
    ok = sum(r[1] for r in rates)
    assert ok / n >= 0.97, f"{ok} of {n}"
