"""guardlex: multilingual normalisation, refusal rules and deterministic output gates.

The public API is re-exported here. Attributes are resolved lazily so that
``import guardlex`` stays fast and never loads jieba's dictionary or compiles packs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "normalise": "guardlex.normalise",
    "normalise_with_offsets": "guardlex.normalise",
    "Normalised": "guardlex.normalise",
    "count_words": "guardlex.normalise",
    "keywords": "guardlex.normalise",
    "explain": "guardlex.normalise",
    "load_packs": "guardlex.rules",
    "Packs": "guardlex.rules",
    "Route": "guardlex.rules",
    "FirstPersonHit": "guardlex.rules",
    "SentenceGate": "guardlex.gates",
    "Verdict": "guardlex.gates",
    "accept": "guardlex.gates",
    "audit": "guardlex.gates",
    "resolve": "guardlex.gates",
    "extract_facts": "guardlex.gates",
    "Released": "guardlex.gates",
    "Stopped": "guardlex.gates",
    "Truncated": "guardlex.gates",
    "Violation": "guardlex.gates",
    "FieldResult": "guardlex.gates",
    "Resolution": "guardlex.gates",
    "Fact": "guardlex.gates",
    "Evidence": "guardlex.gates",
    "GuardlexError": "guardlex.errors",
    "PackError": "guardlex.errors",
    "UnknownLocaleError": "guardlex.errors",
    "InputTooLargeError": "guardlex.errors",
}

__all__ = [
    "Evidence",
    "Fact",
    "FieldResult",
    "FirstPersonHit",
    "GuardlexError",
    "InputTooLargeError",
    "Normalised",
    "PackError",
    "Packs",
    "Released",
    "Resolution",
    "Route",
    "SentenceGate",
    "Stopped",
    "Truncated",
    "UnknownLocaleError",
    "Verdict",
    "Violation",
    "__version__",
    "accept",
    "audit",
    "count_words",
    "explain",
    "extract_facts",
    "keywords",
    "load_packs",
    "normalise",
    "normalise_with_offsets",
    "resolve",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'guardlex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if name != module.rpartition(".")[2]:
        # ``normalise`` is both a function and the subpackage that defines it; the import
        # system binds ``guardlex.normalise`` to the (callable) subpackage, and caching the
        # function here would break ``import guardlex.normalise as m``.
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from guardlex.errors import GuardlexError, InputTooLargeError, PackError, UnknownLocaleError
    from guardlex.gates import (
        Evidence,
        Fact,
        FieldResult,
        Released,
        Resolution,
        SentenceGate,
        Stopped,
        Truncated,
        Verdict,
        Violation,
        accept,
        audit,
        extract_facts,
        resolve,
    )
    from guardlex.normalise import (
        Normalised,
        count_words,
        explain,
        keywords,
        normalise,
        normalise_with_offsets,
    )
    from guardlex.rules import FirstPersonHit, Packs, Route, load_packs
