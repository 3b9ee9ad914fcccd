"""Optional dependencies, imported on first use with a message that says what to install."""

from __future__ import annotations

from types import ModuleType

from guardlex.runner.errors import MissingDependencyError


def require_numpy() -> ModuleType:
    """Return numpy, or explain in one line how to get it.

    numpy is the ``runner`` extra: the core of guardlex (normaliser, packs, gates) must not
    need it, but the dense vectors of the store do.
    """
    try:
        import numpy
    except ImportError as exc:
        raise MissingDependencyError(
            "the reference runner needs numpy: pip install 'guardlex[runner]'"
        ) from exc
    return numpy
