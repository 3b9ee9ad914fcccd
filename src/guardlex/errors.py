"""Exception types. Every user mistake maps to one of these, never a bare traceback."""

from __future__ import annotations


class GuardlexError(Exception):
    """Base class: the CLI prints its message on one line and exits with status 2."""


class PackError(GuardlexError):
    """A locale pack is malformed. Carries the file and, when known, the line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = path or ""
        if path and line:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message)


class UnknownLocaleError(GuardlexError, LookupError):
    """A locale code that no installed pack provides."""


class InputTooLargeError(GuardlexError, ValueError):
    """An input exceeds the documented size limit of the function it was passed to."""
