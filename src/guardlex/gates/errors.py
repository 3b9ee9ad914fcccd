"""Exceptions of the gates: user mistakes with a message that says what to do."""

from __future__ import annotations

from guardlex.errors import GuardlexError


class EvidenceError(GuardlexError, ValueError):
    """Malformed evidence or facts given to ``resolve`` or ``audit`` (missing key, bad date)."""


class FormulaError(GuardlexError, ValueError):
    """A computed value's formula is not plain arithmetic on numbers (+ - * / × ÷, brackets)."""


class GateSettingError(GuardlexError, ValueError):
    """A gate setting out of range (``min_words < 1``, a non-positive size limit)."""
