"""Thin adapters over the normaliser, the packs and the gates.

The runner talks to the other layers of guardlex only through this module, so a change
in their API is a one-line fix here rather than a hunt through the pipeline.
"""

from __future__ import annotations

import functools
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

import regex

from guardlex.runner._regex import REGEX_TIMEOUT

_HAN_RE = regex.compile(r"\p{Han}")


def normalise(text: str) -> str:
    """The one normaliser of guardlex (``guardlex.normalise``)."""
    from guardlex.normalise import normalise as _normalise

    return _normalise(text)


def keywords(text: str) -> list[str]:
    """Normalised word tokens, Chinese segmented with jieba (``guardlex.normalise.keywords``)."""
    from guardlex.normalise import keywords as _keywords

    return list(_keywords(text))


def count_words(text: str) -> int:
    """Words as the sentence gate counts them (``guardlex.normalise.count_words``)."""
    from guardlex.normalise import count_words as _count_words

    return int(_count_words(text))


def has_han(token: str) -> bool:
    """True when ``token`` contains a Han character (Chinese minimum length is 2, not 3)."""
    return _HAN_RE.search(token, timeout=REGEX_TIMEOUT) is not None


@dataclass(frozen=True)
class RouteInfo:
    """The part of ``guardlex.Route`` the runner uses."""

    kind: str  # "refuse" | "overview" | "retrieve"
    category: str | None = None
    locale: str | None = None
    rule_id: str | None = None
    topic: str | None = None


class PackView:
    """The packs as the runner sees them: routing, stopwords, lexicon words and messages."""

    def __init__(self, packs: Any) -> None:
        self._packs = packs

    @property
    def packs(self) -> Any:
        """The wrapped ``guardlex.Packs`` (handed to the sentence gate)."""
        return self._packs

    @functools.cached_property
    def locales(self) -> tuple[str, ...]:
        """The loaded locales, as the packs discovered them."""
        return tuple(self._packs.locales)

    def route(self, text: str, previous: str | None = None) -> RouteInfo:
        r = self._packs.route(text, previous=previous)
        return RouteInfo(
            kind=r.kind, category=r.category, locale=r.locale, rule_id=r.rule_id, topic=r.topic
        )

    def detect_locale(self, text: str) -> str:
        return str(self._packs.detect_locale(text))

    @functools.lru_cache(maxsize=32)  # noqa: B019 - one PackView lives as long as its packs
    def stopwords(self, locale: str) -> frozenset[str]:
        return frozenset(normalise(w) for w in self._packs.stopwords(locale))

    @functools.cached_property
    def all_stopwords(self) -> frozenset[str]:
        out: set[str] = set()
        for loc in self.locales:
            out |= self.stopwords(loc)
        return frozenset(out)

    def _lexicon(self, locale: str) -> Any:
        return self._packs.lexicon(locale)

    @functools.lru_cache(maxsize=32)  # noqa: B019
    def ordinals(self, locale: str) -> dict[int, tuple[str, ...]]:
        raw = _field(self._lexicon(locale), "ordinals") or {}
        return {int(k): tuple(normalise(w) for w in v) for k, v in dict(raw).items()}

    @functools.lru_cache(maxsize=32)  # noqa: B019
    def pronouns(self, locale: str) -> tuple[str, ...]:
        raw = _field(self._lexicon(locale), "pronouns") or ()
        return tuple(normalise(w) for w in raw)

    @functools.lru_cache(maxsize=32)  # noqa: B019
    def negations(self, locale: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        raw = _field(self._lexicon(locale), "negations") or ()
        out = []
        for pair in raw:
            pos = _field(pair, "positive") or ()
            neg = _field(pair, "negative") or ()
            out.append((tuple(pos), tuple(neg)))
        return tuple(out)

    def message(self, locale: str | None, key: str) -> str:
        loc = locale if locale in self.locales else "en"
        msgs = self._packs.messages(loc)
        value = _field(msgs, key)
        if not value and loc != "en":
            value = _field(self._packs.messages("en"), key)
        return str(value or key)


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def load_packs(subject_names: Sequence[str] = ()) -> PackView:
    """Load the installed packs, with the site owner's names as ``{subject}``."""
    from guardlex.rules import load_packs as _load_packs

    return PackView(_load_packs(subject_names=tuple(subject_names)))


def sentence_splitter(packs: PackView | None) -> Callable[[str], list[str]]:
    """The sentence gate's own segmentation (with the packs' abbreviations).

    The scripted model places its markers with it, so every sentence the gate will see
    carries one: the well-behaved model is well-behaved by construction.
    """
    from guardlex.gates import split_sentences

    is_abbreviation = None
    if packs is not None:
        from guardlex.gates._vocab import vocab_for

        is_abbreviation = vocab_for(packs.packs).is_abbreviation

    def split(text: str) -> list[str]:
        return list(split_sentences(text, is_abbreviation))

    return split


@dataclass(frozen=True)
class GateEvent:
    """One event of the sentence gate: text released to the reader, or the end of it."""

    kind: str  # "released" | "stop" | "truncated"
    text: str = ""
    reason: str | None = None
    message: str = ""
    withheld: str = ""
    #: The source numbers a released sentence cited (its markers, stripped from ``text``).
    markers: tuple[int, ...] = ()


class GateAdapter:
    """Wraps ``guardlex.gates.SentenceGate`` into :class:`GateEvent` values."""

    def __init__(
        self,
        sources: Sequence[str],
        packs: PackView | None,
        locale: str | None,
        on_cancel: Callable[[], None] | None = None,
    ) -> None:
        from guardlex.gates import SentenceGate

        self._gate = SentenceGate(
            list(sources),
            packs=packs.packs if packs is not None else None,
            locale=locale,
            on_cancel=on_cancel,
        )

    def stream(self, chunks: Iterable[str]) -> Iterator[GateEvent]:
        for ev in self._gate.stream(chunks):
            yield _gate_event(ev)

    async def astream(self, chunks: AsyncIterable[str]) -> AsyncIterator[GateEvent]:
        """The async variant of :meth:`stream` (``SentenceGate.astream``)."""
        async for ev in self._gate.astream(chunks):
            yield _gate_event(ev)


def _gate_event(ev: Any) -> GateEvent:
    kind = str(_field(ev, "kind") or "released")
    if kind == "released":
        markers = tuple(int(n) for n in (_field(ev, "markers") or ()))
        return GateEvent("released", str(_field(ev, "text") or ""), markers=markers)
    if kind in ("stopped", "stop"):
        return GateEvent(
            "stop",
            reason=str(_field(ev, "reason") or "unknown"),
            message=str(_field(ev, "message") or ""),
            withheld=str(_field(ev, "sentence") or ""),
        )
    if kind == "truncated":
        return GateEvent(
            "truncated",
            message=str(_field(ev, "message") or ""),
            withheld=str(_field(ev, "withheld") or ""),
        )
    return GateEvent(kind, str(_field(ev, "text") or ""))  # pragma: no cover - unknown kind
