"""The reference RAG runner (docs/runner.md): an embedded store, hybrid retrieval, the
pipeline from routing to the sentence gate, cost controls, models and the evaluation.

Needs the ``runner`` extra (numpy). Names are resolved lazily so that importing this
package stays cheap and a missing numpy gives a one-line message when first needed.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Store": "guardlex.runner.store",
    "Runner": "guardlex.runner.pipeline",
    "Answer": "guardlex.runner.pipeline",
    "Source": "guardlex.runner.pipeline",
    "Retriever": "guardlex.runner.retrieval",
    "Retrieval": "guardlex.runner.retrieval",
    "Hit": "guardlex.runner.retrieval",
    "Query": "guardlex.runner.retrieval",
    "Embedder": "guardlex.runner.embeddings",
    "HashingEmbedder": "guardlex.runner.embeddings",
    "SentenceEmbedder": "guardlex.runner.embeddings",
    "BudgetLedger": "guardlex.runner.costs",
    "RateLimiter": "guardlex.runner.costs",
    "ScriptedModel": "guardlex.runner.models",
    "OpenAIChatModel": "guardlex.runner.models",
    "Prompt": "guardlex.runner.models",
    "FollowUp": "guardlex.runner.followups",
    "Site": "guardlex.runner.corpus",
    "Chunk": "guardlex.runner.corpus",
    "Record": "guardlex.runner.corpus",
    "sample_site": "guardlex.runner.corpus",
    "load_folder": "guardlex.runner.corpus",
    "build_store": "guardlex.runner.build",
    "default_runner": "guardlex.runner.build",
    "evaluate": "guardlex.runner.evaluate",
    "RunnerError": "guardlex.runner.errors",
    "ModelError": "guardlex.runner.errors",
    "ModelUnavailableError": "guardlex.runner.errors",
    "MissingApiKeyError": "guardlex.runner.errors",
    "EmptyQuestionError": "guardlex.runner.errors",
    "LedgerUnavailableError": "guardlex.runner.errors",
    "StoreError": "guardlex.runner.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'guardlex.runner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
