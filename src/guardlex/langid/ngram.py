"""The bundled byte n-gram naive-Bayes model (restricted copy of py3langid's).

``tools/gen_langid_model.py`` writes ``data/ngram.bin.xz``; see its docstring for the
layout. Features are counted as py3langid counts them: at each byte of the UTF-8 text,
the longest feature that ends there. A text's score for language ``k`` is
``prior[k] + sum(log1p(count[f]) * weight[f][k])``, and the best score wins.
Pure Python, no numpy: about 1 µs per byte of text on a laptop core.
"""

from __future__ import annotations

import json
import lzma
import math
import sys
import threading
import unicodedata
from array import array
from collections.abc import Sequence
from importlib import resources

MODEL_FILE = "ngram.bin.xz"


class NgramModel:
    """The model's languages, priors, feature table and weights."""

    def __init__(self, blob: bytes) -> None:
        head, _, rest = blob.partition(b"\n")
        header = json.loads(head)
        self.languages: tuple[str, ...] = tuple(header["languages"])
        self.source: str = header["source"]
        self.max_len: int = int(header["max_len"])
        self._prior = [float(p) for p in header["prior"]]
        self._scale = float(header["scale"])
        n = int(header["features"])
        features: dict[bytes, int] = {}
        pos = 0
        for i in range(n):
            size = rest[pos]
            features[rest[pos + 1 : pos + 1 + size]] = i
            pos += 1 + size
        weights = array("h")
        weights.frombytes(rest[pos : pos + 2 * n * len(self.languages)])
        if sys.byteorder != "little":
            weights.byteswap()
        self._features = features
        self._weights = weights
        self._index = {code: i for i, code in enumerate(self.languages)}

    @staticmethod
    def encode(text: str) -> bytes:
        """The bytes py3langid scores: lower-cased when all upper, NFC, UTF-8."""
        if text.isupper():
            text = text.lower()
        return unicodedata.normalize("NFC", text).encode("utf-8", errors="surrogatepass")

    def counts(self, data: bytes) -> dict[int, int]:
        """Feature index -> occurrences (the longest feature ending at each byte)."""
        features = self._features
        top = self.max_len
        out: dict[int, int] = {}
        for end in range(1, len(data) + 1):
            for size in range(min(top, end), 0, -1):
                f = features.get(data[end - size : end])
                if f is not None:
                    out[f] = out.get(f, 0) + 1
                    break
        return out

    def scores(self, text: str, languages: Sequence[str]) -> dict[str, float]:
        """Log-score of each of ``languages`` the model knows (higher is likelier)."""
        cols = [(code, self._index[code]) for code in languages if code in self._index]
        if not cols:
            return {}
        width = len(self.languages)
        w = self._weights
        sums = [0.0] * len(cols)
        for f, c in self.counts(self.encode(text)).items():
            weight = math.log1p(c)
            base = f * width
            for j, (_code, k) in enumerate(cols):
                sums[j] += weight * w[base + k]
        return {code: self._prior[k] + sums[j] / self._scale for j, (code, k) in enumerate(cols)}


_MODEL: NgramModel | None = None
_LOCK = threading.Lock()


def model() -> NgramModel:
    """The bundled model, read once on first use (about 0.1 s)."""
    global _MODEL
    if _MODEL is None:
        with _LOCK:
            if _MODEL is None:
                ref = resources.files("guardlex.langid") / "data" / MODEL_FILE
                _MODEL = NgramModel(lzma.decompress(ref.read_bytes()))
    return _MODEL
