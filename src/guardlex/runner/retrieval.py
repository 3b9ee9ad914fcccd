"""Hybrid retrieval exactly as docs/runner.md describes it.

Two rankings (dense cosine and keyword coverage) are fused with reciprocal rank fusion
(k = 60) to decide the *order* only. The threshold never looks at the fusion score: each
chunk keeps max(cosine, coverage), both bounded in [0, 1], and the best such value over
the returned chunks is compared with the threshold. RRF is built from ranks alone, so
even a corpus of pure noise has a top document with the best possible fusion score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guardlex.runner.corpus import Chunk
from guardlex.runner.embeddings import Embedder
from guardlex.runner.store import Store

RRF_K = 60
DEFAULT_THRESHOLD = 0.35
DEFAULT_TOP_K = 8
#: Candidates fetched from each list before fusion.
CANDIDATES = 64
MIN_MATCHED_WORDS = 2


@dataclass(frozen=True)
class Hit:
    """One returned chunk with the bounded values the threshold may use."""

    chunk: Chunk
    cosine: float
    coverage: float
    matched: tuple[str, ...]
    rrf: float

    @property
    def value(self) -> float:
        """max(cosine, coverage): the only number the threshold compares."""
        return max(self.cosine, self.coverage)


@dataclass(frozen=True)
class Retrieval:
    """The outcome of one search: hits in fused order and the threshold decision."""

    hits: tuple[Hit, ...]
    best: float
    threshold: float
    embedder: str
    keyword_only: bool = False
    locale: str | None = None
    significant: tuple[str, ...] = ()
    error: str | None = None
    #: How many chunks were searched: the reader's locale's, or all when it has none.
    searched: int = 0

    @property
    def passed(self) -> bool:
        """True when the best bounded value reaches the threshold."""
        return bool(self.hits) and self.best >= self.threshold


def significant_words(
    tokens: Sequence[str], stopwords: frozenset[str], is_chinese: Callable[[str], bool]
) -> tuple[str, ...]:
    """Distinct significant words: stopwords dropped, >= 3 characters (2 for Chinese)."""
    out: dict[str, None] = {}
    for tok in tokens:
        if tok in stopwords or not any(ch.isalnum() for ch in tok):
            continue
        if len(tok) < (2 if is_chinese(tok) else 3):
            continue
        out[tok] = None
    return tuple(out)


def coverage(words: Sequence[str], chunk_tokens: frozenset[str]) -> tuple[float, tuple[str, ...]]:
    """Share of ``words`` found in the chunk as whole words; 0 unless >= 2 distinct match.

    One matching word is chance; two distinct ones begin to be evidence.
    """
    if not words:
        return 0.0, ()
    matched = tuple(w for w in words if w in chunk_tokens)
    if len(matched) < MIN_MATCHED_WORDS:
        return 0.0, matched
    return len(matched) / len(words), matched


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: sum over rankings of 1 / (k + rank), ranks from 1."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, rid in enumerate(ranking, start=1):
            scores[rid] = scores.get(rid, 0.0) + 1.0 / (k + rank)
    return scores


@dataclass(frozen=True)
class Query:
    """A question as retrieval sees it.

    ``texts`` count for the threshold (the question as asked and, for a follow-up, joined
    with its context); ``ordering_texts`` only add rankings (the subject's name added).
    """

    texts: tuple[str, ...]
    ordering_texts: tuple[str, ...] = ()


class Retriever:
    """Searches one :class:`Store` with one embedder (created lazily, on first search)."""

    def __init__(
        self,
        store: Store,
        embedder: Callable[[], Embedder],
        tokenize: Callable[[str], Sequence[str]],
        stopwords: frozenset[str],
        is_chinese: Callable[[str], bool],
        threshold: float = DEFAULT_THRESHOLD,
        top_k: int = DEFAULT_TOP_K,
    ) -> None:
        self.store = store
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._tokenize = tokenize
        self._stopwords = stopwords
        self._is_chinese = is_chinese
        self.threshold = threshold
        self.top_k = top_k

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def significant(self, text: str) -> tuple[str, ...]:
        return significant_words(self._tokenize(text), self._stopwords, self._is_chinese)

    def search(self, query: Query | str, locale: str | None = None) -> Retrieval:
        """Search ``locale``'s chunks (all chunks when the store has none in it)."""
        q = Query((query,)) if isinstance(query, str) else query
        loc = locale if locale is not None and self.store.has_locale(locale) else None
        searched = self.store.locale_size(loc)
        threshold_texts = list(q.texts)
        all_texts = threshold_texts + list(q.ordering_texts)
        words_per_text = [self.significant(t) for t in all_texts]

        # Dense side: one matrix-vector product per query text. Any embedder failure
        # drops to keywords alone; the threshold still applies to what is left.
        keyword_only = False
        error: str | None = None
        dense_lists: list[list[tuple[int, float]]] = []
        qvecs = None
        name = "keywords-only"
        try:
            emb = self.embedder
            name = emb.name
            qvecs = emb.embed(all_texts)
            for i in range(len(all_texts)):
                dense_lists.append(self.store.dense_top(qvecs[i], loc, CANDIDATES))
        except Exception as exc:  # the embedding service failed: fall back, never crash
            keyword_only = True
            error = f"{type(exc).__name__}: {exc}"
            dense_lists = []
            qvecs = None

        kw_lists: list[list[tuple[int, float]]] = []
        for words in words_per_text:
            kw_lists.append(self.store.keyword_candidates(list(words), loc, CANDIDATES))

        candidate_ids: set[int] = set()
        for lst in dense_lists + kw_lists:
            candidate_ids.update(rid for rid, _ in lst)
        if not candidate_ids:
            return Retrieval(
                (),
                0.0,
                self.threshold,
                name,
                keyword_only,
                loc,
                words_per_text[0] if words_per_text else (),
                error,
                searched,
            )
        chunks = self.store.chunks(candidate_ids)

        n_thr = len(threshold_texts)
        # Bounded values for the threshold: question texts only, never the ordering texts.
        cos: dict[int, float] = dict.fromkeys(candidate_ids, 0.0)
        if qvecs is not None:
            for i in range(n_thr):
                for rid, s in self.store.cosines(qvecs[i], candidate_ids).items():
                    cos[rid] = max(cos[rid], min(1.0, max(0.0, s)))
        cov: dict[int, float] = dict.fromkeys(candidate_ids, 0.0)
        matched: dict[int, tuple[str, ...]] = dict.fromkeys(candidate_ids, ())
        kw_rank_lists: list[list[int]] = []
        for i, words in enumerate(words_per_text):
            scored = []
            for rid, (_chunk, toks) in chunks.items():
                value, hit_words = coverage(words, toks)
                if i < n_thr and value > cov[rid]:
                    cov[rid] = value
                    matched[rid] = hit_words
                if hit_words:
                    scored.append((len(hit_words), value, rid))
            bm25 = {rid: s for rid, s in kw_lists[i]}
            scored.sort(key=lambda t: (-t[0], -t[1], bm25.get(t[2], 0.0), t[2]))
            kw_rank_lists.append([rid for _, _, rid in scored])

        dense_rank_lists = [[rid for rid, _ in lst] for lst in dense_lists]
        fused = rrf(dense_rank_lists + kw_rank_lists)
        order = sorted(fused, key=lambda rid: (-fused[rid], rid))
        top = order[: self.top_k]
        # The chunk that sets the best bounded value is always among the returned ones.
        best_rid = max(candidate_ids, key=lambda rid: (max(cos[rid], cov[rid]), -rid))
        if best_rid not in top and top:
            top[-1] = best_rid
        hits = tuple(
            Hit(
                chunks[rid][0],
                round(cos[rid], 6),
                round(cov[rid], 6),
                matched[rid],
                round(fused.get(rid, 0.0), 6),
            )
            for rid in top
        )
        best = max((h.value for h in hits), default=0.0)
        return Retrieval(
            hits,
            best,
            self.threshold,
            name,
            keyword_only,
            loc,
            words_per_text[0] if words_per_text else (),
            error,
            searched,
        )
