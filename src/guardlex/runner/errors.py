"""Exceptions of the reference runner.

Each one is a :class:`guardlex.errors.GuardlexError`, so the CLI prints it on one line and
exits non-zero instead of showing a traceback.
"""

from __future__ import annotations

from guardlex.errors import GuardlexError


class RunnerError(GuardlexError):
    """Base class for runner mistakes a user can fix (bad store, bad corpus, bad option)."""


class MissingDependencyError(RunnerError, ImportError):
    """An optional dependency of the runner (numpy, a sentence-embedding model) is absent."""


class CorpusError(RunnerError, ValueError):
    """A document or corpus file cannot be read or does not follow ``docs/corpus.md``."""


class StoreError(RunnerError):
    """The SQLite store is missing, corrupt, or was built with another embedder."""


class EmbedderError(RunnerError):
    """The embedding model failed. Retrieval falls back to keywords when this happens."""


class ModelError(RunnerError):
    """The language model client failed (HTTP error, malformed stream)."""


class LedgerUnavailableError(RunnerError):
    """The budget ledger cannot be read or written. The budget guard then refuses."""


class ModelUnavailableError(ModelError):
    """The model endpoint could not be reached or refused the request.

    Connection refused, unknown host, a timeout before the first byte of the answer, or
    an HTTP 4xx/5xx status. ``billable`` says whether the provider may have received the
    prompt and billed it (only a timeout after the request was sent); the runner records
    the prompt's cost only then, and 0 otherwise.
    """

    def __init__(self, message: str, *, billable: bool = False) -> None:
        super().__init__(message)
        self.billable = billable


class MissingApiKeyError(ModelError):
    """No API key for a model endpoint that is not on this machine (loopback needs none)."""


class EmptyQuestionError(RunnerError, ValueError):
    """The question is empty or only whitespace: there is nothing to route or answer."""
