"""The normaliser's input limits (see ``docs/normalise.md``)."""

from __future__ import annotations

from guardlex.errors import InputTooLargeError

__all__ = ["MAX_CHARS", "MAX_EXPANSION", "MAX_OFFSETS_CHARS", "check_expanded", "check_length"]

#: The longest text (in characters) that ``normalise``, ``count_words``, ``keywords``,
#: ``visible_text`` and ``confusable_fold`` accept.
MAX_CHARS = 1_000_000
#: The longest text ``normalise_with_offsets`` and ``explain`` accept (they keep several
#: objects per character).
MAX_OFFSETS_CHARS = 100_000
#: How much longer than its limit a text may grow under NFKC (one U+FDFA is 18
#: characters): a text whose NFKC form is longer than ``MAX_EXPANSION`` times the
#: function's limit is refused too.
MAX_EXPANSION = 4


def check_length(text: str, limit: int, func: str) -> None:
    """Raise ``InputTooLargeError`` when ``text`` is longer than ``limit`` characters."""
    if len(text) > limit:
        raise InputTooLargeError(
            f"{func}() accepts at most {limit:,} characters, got {len(text):,}; "
            "split the text or shorten it"
        )


def check_expanded(expanded: str, limit: int, func: str) -> None:
    """Raise ``InputTooLargeError`` when ``expanded`` (a text after NFKC) is longer than
    ``MAX_EXPANSION`` times ``limit``."""
    if len(expanded) > MAX_EXPANSION * limit:
        raise InputTooLargeError(
            f"{func}(): the text grows to {len(expanded):,} characters under Unicode "
            f"NFKC; at most {MAX_EXPANSION * limit:,} ({MAX_EXPANSION} x {limit:,}) "
            "are accepted"
        )
