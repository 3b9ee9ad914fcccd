"""Retrieval exactly as SPEC section 6: bounded values for the threshold, RRF for order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from guardlex.runner import _engine
from guardlex.runner.embeddings import HashingEmbedder
from guardlex.runner.retrieval import (
    RRF_K,
    Query,
    Retriever,
    coverage,
    rrf,
    significant_words,
)
from guardlex.runner.store import Store


def _retriever(store: Store, packs: _engine.PackView, embedder=None, threshold=0.35):
    def make():
        if embedder is not None:
            return embedder()
        return HashingEmbedder(_engine.keywords, packs.all_stopwords)

    return Retriever(
        store, make, _engine.keywords, packs.all_stopwords, _engine.has_han, threshold=threshold
    )


def test_significant_words_drop_stopwords_and_short_words() -> None:
    words = significant_words(
        ["what", "is", "the", "gate", "ai", "gate", "检索", "门"],
        frozenset({"what", "the"}),
        _engine.has_han,
    )
    # "is" and "ai" are shorter than 3; Chinese needs only 2; one-character 门 is dropped.
    assert words == ("gate", "检索")


def test_coverage_needs_two_distinct_words() -> None:
    toks = frozenset({"sentence", "gate", "marker"})
    assert coverage(("sentence", "weather"), toks) == (0.0, ("sentence",))
    value, matched = coverage(("sentence", "gate", "weather", "paris"), toks)
    assert value == 0.5 and matched == ("sentence", "gate")


@given(
    st.lists(st.text(min_size=1, max_size=6), max_size=8, unique=True),
    st.sets(st.text(min_size=1, max_size=6), max_size=10),
)
def test_coverage_is_bounded(words: list[str], toks: set[str]) -> None:
    value, matched = coverage(tuple(words), frozenset(toks))
    assert 0.0 <= value <= 1.0
    assert set(matched) <= toks
    if len(matched) < 2:
        assert value == 0.0


def test_rrf_uses_k_60_and_ranks_only() -> None:
    scores = rrf([[10, 20, 30], [20, 10]])
    assert scores[20] == 1 / (RRF_K + 2) + 1 / (RRF_K + 1)
    assert scores[30] == 1 / (RRF_K + 3)


@given(st.lists(st.lists(st.integers(0, 30), unique=True, max_size=10), max_size=4))
def test_rrf_depends_on_ranks_not_values(rankings: list[list[int]]) -> None:
    # The top of any ranking always gets a fusion score, however irrelevant it is:
    # that is why the threshold must never look at it.
    scores = rrf(rankings)
    for ranking in rankings:
        if ranking:
            assert scores[ranking[0]] >= 1 / (RRF_K + 1)


def test_answerable_question_passes_and_finds_its_chunk(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    res = r.search("How many test answers did the sentence gate stop?", "en")
    assert res.passed
    assert res.hits[0].chunk.id == "en/gates/1"
    assert res.best == max(max(h.cosine, h.coverage) for h in res.hits)
    assert len(res.hits) <= 8


def test_unrelated_question_falls_below_threshold(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    res = r.search("What will the weather be like in Paris tomorrow?", "en")
    assert not res.passed
    assert res.best < 0.35
    # RRF still produced an order: a top hit exists, but it does not count.
    assert all(h.value < 0.35 for h in res.hits)


def test_whole_words_only_crane_is_not_in_screen(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    res = r.search("harbor cranes terminal", "en")
    ids = [h.chunk.id for h in res.hits if h.coverage > 0]
    assert ids == ["en/cranes/1"]
    res2 = r.search("screen crane", "en")
    assert all(h.coverage == 0 for h in res2.hits)


def test_search_stays_in_the_readers_locale(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    res = r.search("¿Qué tasa de aciertos alcanzó la caché semántica?", "es")
    assert res.passed
    assert {h.chunk.locale for h in res.hits} == {"es"}
    assert res.hits[0].chunk.id == "es/cache/1"


def test_chinese_is_matched_as_jieba_words(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    res = r.search("语义缓存的命中率是多少？", "zh")
    assert res.hits[0].chunk.id == "zh/cache/1"
    assert res.hits[0].coverage >= 0.5


def test_embedder_failure_falls_back_to_keywords_and_keeps_threshold(
    tiny_store, fake_packs
) -> None:
    class Broken:
        name = "broken"
        dim = 256

        def embed(self, texts):
            raise ConnectionError("embedding service down")

    r = _retriever(tiny_store, fake_packs, embedder=Broken)
    ok = r.search("How many test answers did the sentence gate stop?", "en")
    assert ok.keyword_only and ok.error and "embedding service down" in ok.error
    assert ok.passed and all(h.cosine == 0.0 for h in ok.hits)
    bad = r.search("What will the weather be like in Paris tomorrow?", "en")
    assert bad.keyword_only and not bad.passed


def test_subject_name_orders_but_never_counts_for_threshold(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    q = "Which planning tool was audited"
    plain = r.search(Query((q,)), "en")
    named = r.search(Query((q,), ordering_texts=(f"{q} Dana Reyes",)), "en")
    # Adding the name changes nothing about the bounded values...
    assert plain.best == named.best
    by_id = {h.chunk.id: h.value for h in plain.hits}
    for h in named.hits:
        if h.chunk.id in by_id:
            assert h.value == by_id[h.chunk.id]


def test_best_chunk_is_always_returned(tiny_store, fake_packs) -> None:
    r = _retriever(tiny_store, fake_packs)
    r.top_k = 1
    res = r.search("semantic cache similarity hit rate weeks", "en")
    assert len(res.hits) == 1
    assert res.hits[0].chunk.id == "en/cache/1"


def test_hashing_embedder_is_deterministic_and_normalised(fake_packs) -> None:
    e1 = HashingEmbedder(_engine.keywords, fake_packs.all_stopwords)
    e2 = HashingEmbedder(_engine.keywords, fake_packs.all_stopwords)
    texts = ["Sentence gates hold text", "语义缓存", "", "the of and"]
    a, b = e1.embed(texts), e2.embed(texts)
    assert a.dtype == np.float32 and a.shape == (4, 256)
    assert np.array_equal(a, b)
    norms = np.linalg.norm(a, axis=1)
    assert abs(norms[0] - 1) < 1e-5 and abs(norms[1] - 1) < 1e-5
    assert norms[2] == 0 and norms[3] == 0  # nothing significant: a zero vector, cosine 0
