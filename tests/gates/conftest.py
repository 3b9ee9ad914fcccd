"""Fixtures for the gate tests: small packs in the documented format (tests/gates/packs).

``FakePacks`` implements the part of ``guardlex.Packs`` the gates use, reading the same
files, so the gate tests pin the gates' behaviour independently of the shipped packs
(which have their own tests). A few tests also run against the real ``load_packs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import regex
import yaml

from guardlex.errors import UnknownLocaleError
from guardlex.normalise import normalise

PACKS = Path(__file__).parent / "packs"


@dataclass(frozen=True)
class Hit:
    word: str
    locale: str
    span: tuple[int, int]


class FakePacks:
    def __init__(self, root: Path = PACKS) -> None:
        self._lex: dict[str, Mapping[str, Any]] = {}
        self._msg: dict[str, Mapping[str, str]] = {}
        self._fp: dict[str, regex.Pattern[str]] = {}
        self._fx: dict[str, list[str]] = {}
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            code = folder.name
            self._lex[code] = yaml.safe_load((folder / "lexicon.yaml").read_text("utf-8"))
            self._msg[code] = yaml.safe_load((folder / "messages.yaml").read_text("utf-8"))[
                "messages"
            ]
            fp = yaml.safe_load((folder / "first_person.yaml").read_text("utf-8"))
            words = sorted(
                {
                    normalise(w)
                    for w in [*(fp.get("pronouns") or []), *(fp.get("verb_forms") or [])]
                },
                key=len,
                reverse=True,
            )
            parts = []
            for w in words:
                if regex.match(r"\p{Han}", w):
                    parts.append(regex.escape(w))
                else:
                    parts.append(r"(?<!\w)" + regex.escape(w) + r"(?!\w)")
            self._fp[code] = regex.compile("|".join(parts))
            self._fx[code] = [normalise(x) for x in fp.get("exceptions") or []]

    @property
    def locales(self) -> tuple[str, ...]:
        return tuple(self._lex)

    def _known(self, locale: str) -> str:
        if locale not in self._lex:
            raise UnknownLocaleError(f"locale {locale!r} is not loaded")
        return locale

    def lexicon(self, locale: str) -> Mapping[str, Any]:
        return self._lex[self._known(locale)]

    def messages(self, locale: str) -> Mapping[str, str]:
        return self._msg[self._known(locale)]

    def stopwords(self, locale: str) -> frozenset[str]:
        return (
            frozenset({"the", "is", "a", "an", "of", "and", "to", "in"})
            if locale == "en"
            else frozenset()
        )

    def detect_locale(self, text: str) -> str:
        if regex.search(r"\p{Han}", text):
            return "zh"
        if regex.search(r"\p{Cyrillic}", text):
            return "ru"
        if regex.search(r"\p{Arabic}", text):
            return "fa" if regex.search(r"[پچژگکی]", text) else "ar"
        low = normalise(text)
        if regex.search(r"\m(der|die|das|den|nicht|und|ist|ich|wir|im)\M", low):
            return "de"
        if regex.search(r"\m(el|la|los|las|es|por|y|yo)\M", low):
            return "es"
        return "en"

    def first_person(self, text: str, locale: str | None = None) -> Hit | None:
        code = locale or self.detect_locale(text)
        norm = normalise(text)
        for m in self._fp[code].finditer(norm):
            if any(x and m.group() in x and x in norm for x in self._fx[code]):
                continue
            return Hit(m.group(), code, m.span())
        return None


@pytest.fixture(scope="session")
def packs() -> FakePacks:
    return FakePacks()
