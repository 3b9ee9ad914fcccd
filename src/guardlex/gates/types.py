"""Result values of the gates: frozen dataclasses with stable string codes.

Every code below is part of the public contract: logs, JSON reports and tests carry
them, so they never change meaning. ``to_dict()`` gives the JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from dataclasses import field as dc_field
from datetime import date
from typing import Any, Protocol, Union

# -- sentence gate reason codes ------------------------------------------------------
MARKER_OUT_OF_RANGE = "marker_out_of_range"
MARKER_MISSING = "marker_missing"
UNSUPPORTED_VALUE = "unsupported_value"
FIRST_PERSON = "first_person"
SENTENCE_TOO_LONG = "sentence_too_long"
#: a rate, an e-mail address or a phone number said of the subject (packs' engagement and
#: personal-data side), stopped even when a cited source contains it
FORBIDDEN_CONTENT = "forbidden_content"

# -- faithfulness codes (audit violations; also used by the gate in faithful mode) ---
NUMBER_NOT_IN_QUOTE = "number_not_in_quote"
UNIT_MISMATCH = "unit_mismatch"
POLARITY_FLIP = "polarity_flip"
UNLIMITED_AS_NUMBER = "unlimited_as_number"
SUBJECT_MISMATCH = "subject_mismatch"
FORMULA_INPUT_NOT_IN_QUOTE = "formula_input_not_in_quote"
FORMULA_MISMATCH = "formula_mismatch"

# -- accept() reasons -----------------------------------------------------------------
QUOTE_NOT_IN_EVIDENCE = "quote_not_in_evidence"
VALUE_NOT_IN_QUOTE = "value_not_in_quote"
SUBJECT_NOT_IN_QUOTE = "subject_not_in_quote"
EMPTY_QUOTE = "empty_quote"

# -- resolve() statuses -----------------------------------------------------------------
OK = "OK"
CONFLICT = "CONFLICT"
HIT_BUT_UNANSWERABLE = "HIT_BUT_UNANSWERABLE"
NO_HIT = "NO_HIT"


class _Dict:
    def to_dict(self) -> dict[str, Any]:
        """The JSON form: field names as keys, plus ``kind`` for stream events."""
        data: dict[str, Any] = asdict(self)  # type: ignore[call-overload]
        kind = getattr(self, "kind", None)
        if kind is not None:
            data = {"kind": kind, **data}
        return data


@dataclass(frozen=True)
class Verdict(_Dict):
    """The sentence gate's decision on one sentence.

    ``reason`` is ``None`` when ``ok``; otherwise one of the reason codes. ``token`` is the
    offending piece as it stands in the sentence (a marker ``[4]``, a number ``۲۰``, a
    URL, a first-person word); empty for ``marker_missing``.
    """

    ok: bool
    reason: str | None = None
    token: str = ""


@dataclass(frozen=True)
class Released(_Dict):
    """A sentence that passed: show ``text`` to the reader.

    ``text`` keeps the whitespace that preceded the sentence in the stream and has its
    citation markers stripped, so concatenating the ``text`` of every ``Released`` event
    rebuilds the answer as the reader should see it. ``markers`` are the cited source
    numbers (1-based, in order of appearance, without repeats).
    """

    text: str
    markers: tuple[int, ...] = ()
    kind = "released"


@dataclass(frozen=True)
class Stopped(_Dict):
    """The stream was stopped: the violating sentence was withheld.

    ``message`` is the fixed gate-stop text in the reader's language (show it);
    ``sentence`` is the withheld sentence, for logs only (never show it).
    """

    reason: str
    token: str
    message: str
    sentence: str
    locale: str
    kind = "stopped"


@dataclass(frozen=True)
class Truncated(_Dict):
    """The stream ended mid-sentence: the unfinished tail was withheld.

    ``message`` is the fixed truncation notice in the reader's language; ``withheld`` is
    the unfinished tail, for logs only.
    """

    message: str
    withheld: str
    locale: str
    kind = "truncated"


Event = Union[Released, Stopped, Truncated]  # noqa: UP007 (a runtime alias on 3.10)


@dataclass(frozen=True)
class Violation(_Dict):
    """One faithfulness violation found by ``audit``.

    ``token`` is the offending value or phrase in the answer; ``detail`` says what the
    evidence has instead (for a person reading the log).
    """

    code: str
    token: str
    detail: str = ""


@dataclass(frozen=True)
class FieldResult(_Dict):
    """Whether one extracted field may enter an answer (``accept``)."""

    field: str
    value: Any
    ok: bool
    reason: str | None = None


@dataclass(frozen=True)
class Fact(_Dict):
    """A candidate value for a field, with the exact quote it came from."""

    field: str
    value: Any
    quote: str
    doc: str
    subject: str | None = None

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any]) -> Fact:
        """Build from a JSON-like mapping with keys ``field, value, quote, doc[, subject]``."""
        from guardlex.gates.errors import EvidenceError

        missing = [
            k for k in ("field", "quote", "doc") if not isinstance(item, Mapping) or k not in item
        ]
        if missing:
            raise EvidenceError(f"a fact needs the keys {', '.join(missing)}: {item!r:.80}")
        return cls(
            field=str(item["field"]),
            value=item.get("value"),
            quote=str(item["quote"]),
            doc=str(item["doc"]),
            subject=None if item.get("subject") is None else str(item["subject"]),
        )


@dataclass(frozen=True)
class Evidence(_Dict):
    """One retrieved document as the faithfulness gate sees it.

    A document is identified by ``doc``; several versions of it may be retrieved.
    ``version`` is compared numerically when it looks like a number (``v3`` > ``v1``),
    otherwise as text. ``effective`` and ``expiry`` are ISO dates, both inclusive (the
    expiry date is the last day the document is in force).
    """

    doc: str
    text: str
    version: str | None = None
    effective: date | None = None
    expiry: date | None = None

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any]) -> Evidence:
        """Build from a JSON-like mapping (dates as ``YYYY-MM-DD``; ``expires`` = ``expiry``)."""
        from guardlex.gates.errors import EvidenceError

        if not isinstance(item, Mapping) or "doc" not in item:
            raise EvidenceError(f"an evidence item needs a 'doc' key: {item!r:.80}")
        expiry = item.get("expiry", item.get("expires"))
        return cls(
            doc=str(item["doc"]),
            text=str(item.get("text") or ""),
            version=None if item.get("version") is None else str(item["version"]),
            effective=_date(item.get("effective")),
            expiry=_date(expiry),
        )


def _date(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    from guardlex.gates.errors import EvidenceError

    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise EvidenceError(f"not an ISO date (YYYY-MM-DD): {value!r}") from None


@dataclass(frozen=True)
class Resolution(_Dict):
    """The answer to one field over the documents in force.

    ``status`` is ``OK`` (one value: ``value``), ``CONFLICT`` (several different values
    in force, listed in ``values``; never a guess), ``HIT_BUT_UNANSWERABLE`` (documents in
    force, no fact for the field) or ``NO_HIT`` (no document in force).
    """

    field: str
    status: str
    value: Any = None
    values: tuple[Any, ...] = ()
    facts: tuple[Fact, ...] = dc_field(default_factory=tuple)


class HitLike(Protocol):
    @property
    def word(self) -> str: ...

    @property
    def locale(self) -> str: ...

    @property
    def span(self) -> tuple[int, int]: ...


class PacksLike(Protocol):
    """What the gates use from ``guardlex.Packs``."""

    @property
    def locales(self) -> Sequence[str]: ...

    def first_person(self, text: str, locale: str | None = None) -> HitLike | None: ...

    def lexicon(self, locale: str) -> Mapping[str, Any]: ...

    def messages(self, locale: str) -> Mapping[str, str]: ...

    def detect_locale(self, text: str) -> str: ...
