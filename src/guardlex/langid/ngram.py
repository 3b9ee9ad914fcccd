"""The bundled byte n-gram naive-Bayes model (restricted copy of py3langid's).

``tools/gen_langid_model.py`` writes ``data/ngram.bin.xz``; see its docstring for the
layout. Features are counted as py3langid counts them: at each byte of the UTF-8 text,
the longest feature that ends there, found by walking the same Aho-Corasick automaton
(one dict lookup per byte, plus the failure links). A text's score for language ``k`` is
``prior[k] + sum(log1p(count[f]) * weight[f][k])``, and the best score wins.
Pure Python, no numpy: about 1 µs per byte of text on a laptop core.
"""

from __future__ import annotations

import itertools
import json
import lzma
import math
import operator
import sys
import threading
import unicodedata
from array import array
from collections.abc import Sequence
from importlib import resources

MODEL_FILE = "ngram.bin.xz"
#: Only the first bytes of a text are scored: beyond ~100 bytes the choice among the
#: candidates no longer changes (UD: 0.9966 with 120 bytes, 0.9968 with all) and a long
#: answer costs no more than a sentence.
MAX_BYTES = 120
_LOG2 = math.log1p(1)


class NgramModel:
    """The model's languages, priors, feature table and weights."""

    def __init__(self, blob: bytes) -> None:
        head, _, rest = blob.partition(b"\n")
        header = json.loads(head)
        self.languages: tuple[str, ...] = tuple(header["languages"])
        self.source: str = header["source"]
        self._prior = [float(p) for p in header["prior"]]
        self._scale = float(header["scale"])
        n = int(header["features"])
        states = int(header["states"])
        pos = 0

        def ints(code: str, size: int) -> array[int]:
            nonlocal pos
            arr = array(code)
            arr.frombytes(rest[pos : pos + size * states])
            if sys.byteorder != "little" and size > 1:
                arr.byteswap()
            pos += size * states
            return arr

        parent, last = ints("i", 4), ints("B", 1)
        self._fail = ints("i", 4)
        self._out = ints("i", 4)
        # goto edges of the trie: (state << 8 | byte) -> next state (built by C-level
        # maps: a third of the time of a comprehension, and this runs at start)
        edges = map(operator.or_, map(operator.lshift, parent, itertools.repeat(8)), last)
        next(edges, None)  # state 0, the root, is no edge
        self._goto = dict(zip(edges, range(1, states), strict=True))
        weights = array("h")
        weights.frombytes(rest[pos : pos + 2 * n * len(self.languages)])
        if sys.byteorder != "little":
            weights.byteswap()
        width = len(self.languages)
        # one column per language: a score is then a sum over C-level maps
        self._columns = {code: weights[k::width] for k, code in enumerate(self.languages)}
        self._index = {code: i for i, code in enumerate(self.languages)}

    @staticmethod
    def encode(text: str) -> bytes:
        """The bytes py3langid scores: lower-cased when all upper, NFC, UTF-8."""
        if text.isupper():
            text = text.lower()
        return unicodedata.normalize("NFC", text).encode("utf-8", errors="surrogatepass")

    def counts(self, data: bytes) -> dict[int, int]:
        """Feature index -> occurrences (the longest feature ending at each byte)."""
        goto, fail, output = self._goto, self._fail, self._out
        out: dict[int, int] = {}
        state = 0
        for byte in data:
            nxt = goto.get((state << 8) | byte)
            while nxt is None and state:
                state = fail[state]
                nxt = goto.get((state << 8) | byte)
            state = nxt or 0
            f = output[state]
            if f >= 0:
                out[f] = out.get(f, 0) + 1
        return out

    def encode_head(self, text: str) -> bytes:
        """``encode`` of the text's first ``MAX_BYTES`` bytes (enough to tell a language)."""
        return self.encode(text[:MAX_BYTES])[:MAX_BYTES]

    def scores(self, text: str, languages: Sequence[str]) -> dict[str, float]:
        """Log-score of each of ``languages`` the model knows (higher is likelier)."""
        codes = [code for code in languages if code in self._index]
        if not codes:
            return {}
        counts = self.counts(self.encode_head(text))
        once = [f for f, c in counts.items() if c == 1]
        more = [(f, math.log1p(c)) for f, c in counts.items() if c > 1]
        out = {}
        for code in codes:
            col = self._columns[code]
            total = _LOG2 * sum(map(col.__getitem__, once))
            total += sum(lw * col[f] for f, lw in more)
            out[code] = self._prior[self._index[code]] + total / self._scale
        return out


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
