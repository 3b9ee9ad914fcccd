"""The one normaliser of guardlex (docs/normalise.md), word counting and keyword extraction.

Every rule, stopword list, lexicon and value check works on ``normalise(text)``.
``normalise_with_offsets`` maps each output character back to the input, ``explain``
shows which step changed what, ``count_words`` and ``keywords`` work on normalised text.
``visible_text`` is the text a model should be shown (what ``normalise`` reads),
``variants`` the de-obfuscated readings of a question a router checks besides the
normalised one, and ``confusable_fold`` reads Latin words spelled in Cyrillic or Greek
look-alikes. The individual steps are in :mod:`guardlex.normalise.steps`.
"""

from __future__ import annotations

import sys
import types

from guardlex.normalise._core import (
    Normalised,
    Step,
    explain,
    normalise,
    normalise_with_offsets,
)
from guardlex.normalise._limits import MAX_CHARS, MAX_EXPANSION, MAX_OFFSETS_CHARS
from guardlex.normalise._variants import (
    MAX_VARIANTS,
    MAX_VARIANTS_CHARS,
    confusable_fold,
    strip_nukta,
    variants,
)
from guardlex.normalise.steps import visible_text as _visible_text
from guardlex.normalise.words import count_words, is_han, keywords

__all__ = [
    "MAX_CHARS",
    "MAX_EXPANSION",
    "MAX_OFFSETS_CHARS",
    "MAX_VARIANTS",
    "MAX_VARIANTS_CHARS",
    "Normalised",
    "Step",
    "confusable_fold",
    "count_words",
    "explain",
    "is_han",
    "keywords",
    "normalise",
    "normalise_with_offsets",
    "strip_nukta",
    "variants",
    "visible_text",
]


def visible_text(text: str) -> str:
    """What a reader, or a model, sees of ``text``; ``normalise`` reads exactly this.

    Tag characters (U+E0020-U+E007E) are decoded to the ASCII they spell, every other
    default-ignorable character except ZWNJ and ZWJ is dropped, and Hangul fillers and
    braille blanks become spaces (when the text has more of them than gaps between
    words) or disappear. Case and everything else stay as they are, and
    ``normalise(visible_text(t)) == normalise(t)``. Send the model this text, so that
    it answers the question that was routed. At most ``MAX_CHARS`` characters.

    >>> visible_text("What are her hours?\U000e0050\U000e0052\U000e0049\U000e0043\U000e0045")
    'What are her hours?PRICE'
    """
    from guardlex.normalise._core import _check, check_length

    s = _check(text, "visible_text")
    check_length(s, MAX_CHARS, "visible_text")
    return _visible_text(s)


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
