"""Fixtures for the runner tests: a tiny site and stand-in packs.

The stand-in packs (``FakePacks``) give the runner the same interface as
``guardlex.Packs`` with a handful of fixed rules, so these tests check the runner's own
behaviour and do not break when linguists change the real packs. Tests that need the
real packs, gates and sample site say so in their names (``test_real_*``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from guardlex.runner import _engine
from guardlex.runner.build import build_store
from guardlex.runner.corpus import Chunk, Record, Site
from guardlex.runner.pipeline import Runner
from guardlex.runner.store import Store


@dataclass(frozen=True)
class FakeRoute:
    kind: str
    category: str | None = None
    locale: str | None = None
    rule_id: str | None = None
    span: tuple[int, int] | None = None
    topic: str | None = None


@dataclass(frozen=True)
class FakeHit:
    word: str
    locale: str
    span: tuple[int, int]


MESSAGES = {
    "refusal": "REFUSAL-TEXT",
    "below_threshold": "BELOW-TEXT",
    "gate_stop": "GATE-STOP-TEXT",
    "truncated": "TRUNCATED-TEXT",
    "budget_exhausted": "BUDGET-TEXT",
    "rate_limited": "RATE-TEXT",
}


class FakePacks:
    """Just enough of ``guardlex.Packs`` for the runner."""

    locales = ("en", "es", "zh")

    def route(self, text: str, previous: str | None = None) -> FakeRoute:
        t = text.casefold()
        joined = f"{(previous or '').casefold()} {t}"
        if "price" in t or "cuánto cobra" in t or ("price" in joined and "weekend" in t):
            return FakeRoute("refuse", "engagement", "en", "engagement-price", (0, 5))
        if "career" in t or "carrera" in t:
            return FakeRoute("overview", None, None, "overview-career", None, "career")
        if "lately" in t:
            return FakeRoute("overview", None, None, "overview-now", None, "now")
        return FakeRoute("retrieve")

    def first_person(self, text: str, locale: str | None = None) -> FakeHit | None:
        import regex

        words = {"en": ["i", "my", "we"], "es": ["yo", "mi"], "zh": ["我"]}
        for loc in [locale] if locale else list(words):
            for w in words.get(loc or "", []):
                pat = w if loc == "zh" else rf"(?<!\w){w}(?!\w)"
                m = regex.search(pat, text.casefold(), timeout=1.0)
                if m:
                    return FakeHit(w, loc or "en", (m.start(), m.end()))
        return None

    def stopwords(self, locale: str) -> frozenset[str]:
        return {
            "en": frozenset(
                [
                    "the",
                    "a",
                    "an",
                    "of",
                    "and",
                    "or",
                    "to",
                    "in",
                    "on",
                    "for",
                    "is",
                    "are",
                    "was",
                    "what",
                    "how",
                    "does",
                    "did",
                    "her",
                    "she",
                    "with",
                    "about",
                    "which",
                    "who",
                ]
            ),
            "es": frozenset(
                [
                    "el",
                    "la",
                    "los",
                    "las",
                    "de",
                    "del",
                    "y",
                    "o",
                    "en",
                    "por",
                    "para",
                    "que",
                    "qué",
                    "es",
                    "su",
                    "sus",
                    "con",
                ]
            ),
            "zh": frozenset(["的", "了", "是", "她", "什么"]),
        }[locale]

    def lexicon(self, locale: str) -> Mapping[str, Any]:
        ordinals = {
            "en": {1: ["first"], 2: ["second"], 3: ["third"]},
            "es": {1: ["primero", "primera"], 2: ["segundo", "segunda"], 3: ["tercero"]},
            "zh": {1: ["第一"], 2: ["第二"], 3: ["第三"]},
        }[locale]
        negations = [{"positive": ["included"], "negative": ["not included"]}]
        return {
            "ordinals": ordinals,
            "negations": negations,
            "units": {},
            "per": [],
            "abbreviations": ["ms.", "dr."],
            "pronouns": {"en": ["she", "her"], "es": ["ella"], "zh": ["她"]}[locale],
        }

    def messages(self, locale: str) -> Mapping[str, str]:
        return {k: f"{v}-{locale}" for k, v in MESSAGES.items()}

    def detect_locale(self, text: str) -> str:
        if any("\u4e00" <= ch <= "\u9fff" for ch in text):
            return "zh"
        if any(w in text.casefold() for w in ("¿", "qué", "cómo", "ñ", "cuál")):
            return "es"
        return "en"


def _chunk(cid: str, text: str, title: str = "", date: str | None = "2024") -> Chunk:
    locale, doc, _n = cid.split("/")
    return Chunk(cid, doc, locale, "article", title or doc, date, text)


TINY_CHUNKS = (
    _chunk(
        "en/gates/1",
        "Dana Reyes designed a sentence gate that holds each sentence until "
        "it ends and checks its citation markers. The gate stopped 27 of 500 test answers.",
        "Sentence gates",
    ),
    _chunk(
        "en/gates/2",
        "The sentence gate compares every number in a sentence with the cited "
        "source after normalisation, so Persian digits match ASCII digits.",
        "Sentence gates",
    ),
    _chunk(
        "en/cache/1",
        "A semantic cache reused answers above a similarity of 0.95 and reached "
        "a hit rate of 38 percent over six weeks.",
        "Semantic caching",
    ),
    _chunk(
        "en/cranes/1",
        "Harbor cranes at the container terminal were scheduled by a "
        "planning tool that Dana Reyes audited in 2022.",
        "Harbor audit",
    ),
    _chunk(
        "en/screens/1",
        "The screening interface shows search results on large screens in the warehouse.",
        "Warehouse screens",
    ),
    _chunk(
        "es/gates/1",
        "Dana Reyes diseñó una compuerta de oraciones que retiene cada oración "
        "hasta que termina y comprueba sus marcadores de cita.",
        "Compuertas de oraciones",
    ),
    _chunk(
        "es/cache/1",
        "Una caché semántica reutilizó respuestas por encima de una similitud "
        "de 0,95 y alcanzó una tasa de aciertos del 38 por ciento.",
        "Caché semántica",
    ),
    _chunk(
        "zh/gates/1", "达娜设计了一个句子闸门，它会等待每个句子结束，然后检查引用标记。", "句子闸门"
    ),
    _chunk(
        "zh/cache/1",
        "语义缓存在相似度高于0.95时复用答案，六周内命中率达到百分之三十八。",
        "语义缓存",
    ),
)

TINY_RECORDS = (
    Record(
        "pos-indep",
        "position",
        "2021-03",
        None,
        True,
        {"en": "Independent consultant", "es": "Consultora independiente"},
        {"en": "Search and RAG consulting.", "es": "Consultoría de búsqueda y RAG."},
    ),
    Record(
        "pos-quill",
        "position",
        "2017-06",
        "2021-02",
        False,
        {"en": "Lead search engineer, Quillmark"},
        {"en": "Led a team of six."},
    ),
    Record(
        "edu-msc",
        "education",
        "2013",
        "2014",
        False,
        {"en": "MSc, University of Edinburgh", "es": "Máster, Universidad de Edimburgo"},
        {"en": "Speech and language processing."},
    ),
    Record(
        "pub-gates",
        "publication",
        "2024-05",
        None,
        False,
        {"en": "Sentence gates for RAG"},
        {"en": "An article about output gates."},
    ),
)

TINY_SITE = Site(
    TINY_CHUNKS,
    TINY_RECORDS,
    {"en": ("Dana Reyes", "Dana"), "es": ("Dana Reyes",), "zh": ("达娜",)},
)


@pytest.fixture
def fake_packs() -> _engine.PackView:
    return _engine.PackView(FakePacks())


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """One PostgreSQL + pgvector server for the whole session (see ``pgserver.py``).

    A server that cannot start FAILS the ``postgres`` tests, never skips them.
    """
    from .pgserver import PgServer, PgServerError

    server = PgServer()
    try:
        server.start()
    except PgServerError as exc:
        server.stop()
        pytest.fail(f"cannot start the PostgreSQL test server: {exc}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A fresh, migrated database of the session's server."""
    return str(pg_server.new_database())


#: The store backends every backend-parametrized test runs on.
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``":memory:"`` (SQLite) or a fresh PostgreSQL URL: where a test builds its store."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return ":memory:"


@pytest.fixture
def tiny_store(fake_packs: _engine.PackView, backend: str) -> Iterator[Any]:
    store = build_store(TINY_SITE, backend, packs=fake_packs)
    yield store
    store.close()


@pytest.fixture
def runner(tiny_store: Store, fake_packs: _engine.PackView) -> Runner:
    return Runner(tiny_store, fake_packs)
