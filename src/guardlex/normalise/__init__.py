"""The one normaliser of guardlex (SPEC §3), word counting and keyword extraction.

Every rule, stopword list, lexicon and value check works on ``normalise(text)``.
``normalise_with_offsets`` maps each output character back to the input, ``explain``
shows which step changed what, ``count_words`` and ``keywords`` work on normalised text.
The individual steps are in :mod:`guardlex.normalise.steps`.
"""

from __future__ import annotations

import sys
import types

from guardlex.normalise._core import Normalised, Step, explain, normalise, normalise_with_offsets
from guardlex.normalise.words import count_words, is_han, keywords

__all__ = [
    "Normalised",
    "Step",
    "count_words",
    "explain",
    "is_han",
    "keywords",
    "normalise",
    "normalise_with_offsets",
]


class _CallableModule(types.ModuleType):
    """This package shares its name with the function ``guardlex.normalise``.

    Once the package has been imported, Python binds ``guardlex.normalise`` to the
    package, so ``from guardlex import normalise`` can yield the package instead of the
    function, depending on import order. Making the package callable keeps
    ``normalise(text)`` working either way.
    """

    def __call__(self, text: str) -> str:
        return normalise(text)


sys.modules[__name__].__class__ = _CallableModule
