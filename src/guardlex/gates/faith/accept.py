"""``accept``: whether one extracted field may enter an answer."""

from __future__ import annotations

from typing import Any

from guardlex.gates._text import (
    check_size,
    normalise,
    require_str,
    values,
)
from guardlex.gates._vocab import (
    Vocab,
    vocab_for,
    words_of,
)
from guardlex.gates.faith.common import (
    MAX_EVIDENCE_CHARS,
    MAX_NAME_CHARS,
    UNLIMITED,
    _packs,
    _value_tokens,
    mentions,
    quoted,
)
from guardlex.gates.numerals import with_numerals
from guardlex.gates.types import (
    EMPTY_QUOTE,
    QUOTE_NOT_IN_EVIDENCE,
    SUBJECT_NOT_IN_QUOTE,
    VALUE_NOT_IN_QUOTE,
    FieldResult,
    PacksLike,
)


def _polarity_of(quote: str, vocab: Vocab) -> str | None:
    signs = {
        sign
        for _, _, form in vocab.polarity_m.find(normalise(quote))
        for _, sign in vocab.polarity_of.get(form, ())
    }
    return signs.pop() if len(signs) == 1 else None


def accept(
    field: str,
    value: Any,
    quote: str,
    evidence: str,
    subject: str | None = None,
    *,
    packs: PacksLike | None = None,
) -> FieldResult:
    """Whether an extracted field may enter an answer (``FieldResult.ok``).

    The quote must be an exact substring of the evidence (not after normalisation: a
    quote is a pointer into the document); the value must occur in the quote as a whole
    token after normalisation (``20`` is not in ``2025`` nor in ``200``; ``۲۰`` is ``20``);
    the subject must occur in the same quote. The quote must start and end at token
    boundaries of the evidence ("5 users" is not quoted by "25 users").

    ``None`` is a successful extraction when the quote says the slot has no number: an
    "unlimited" or "not applicable" word of the packs ("Enterprise: unlimited seats");
    with any other quote it is ``value_not_in_quote``. A ``bool`` value is read as a
    polarity: the quote must carry only positive (``True``) or only negative (``False``)
    forms. Numbers written as numerals or words (二十, 两万, "twenty") are values.
    """

    require_str(field, "field")
    require_str(quote, "quote")
    require_str(evidence, "evidence")
    require_str(subject, "subject", optional=True)
    check_size(field, MAX_NAME_CHARS, "the field name")
    check_size(evidence, MAX_EVIDENCE_CHARS, "the evidence")

    def result(reason: str | None) -> FieldResult:
        return FieldResult(field, value, reason is None, reason)

    if not quote or not quote.strip():
        return result(EMPTY_QUOTE)
    if not quoted(quote, evidence):
        return result(QUOTE_NOT_IN_EVIDENCE)
    norm_quote = normalise(quote)
    if subject is not None and not mentions(norm_quote, normalise(subject)):
        return result(SUBJECT_NOT_IN_QUOTE)
    vocab = vocab_for(_packs(packs))
    if value is None:
        return result(None if vocab.no_number(norm_quote) else VALUE_NOT_IN_QUOTE)
    if isinstance(value, bool):
        sign = _polarity_of(quote, vocab)
        return result(None if sign == ("+" if value else "-") else VALUE_NOT_IN_QUOTE)
    wanted = value_tokens(value, vocab)
    if wanted is not None:
        found = with_numerals(norm_quote, values(norm_quote), vocab, min_han=1, words=True)
        present = [v.keys for v in found if v.kind == "number"]
        ok = any(w & p for w in wanted for p in present)
        return result(None if ok else VALUE_NOT_IN_QUOTE)
    norm_value = normalise(str(value))
    if norm_value == normalise(UNLIMITED) and vocab.unlimited_m.find(norm_quote):
        return result(None)
    if mentions(norm_quote, norm_value):
        return result(None)
    return result(None if _amount_in_quote(norm_value, norm_quote, vocab) else VALUE_NOT_IN_QUOTE)


def _amount_in_quote(norm_value: str, norm_quote: str, vocab: Vocab) -> bool:
    """A value of one number with words ("8 euros", "20 licences", "€8"): the number is a
    token of the quote and every word is in it, or names the same unit or currency as a
    word of the quote ("8 euros" for "8 EUR", "20 seats" for "20 licences")."""
    found = with_numerals(norm_value, values(norm_value), vocab, min_han=1)
    numbers = [v for v in found if v.kind == "number"]
    if len(numbers) != 1 or len(found) != 1:
        return False
    in_quote = with_numerals(norm_quote, values(norm_quote), vocab, min_han=1, words=True)
    if not any(numbers[0].keys & v.keys for v in in_quote if v.kind == "number"):
        return False
    quote_words = {w for _, _, w in words_of(norm_quote)}
    units = {vocab.unit_of(w) for w in quote_words} - {None}
    currencies = {vocab.currency_of.get(w) for w in quote_words} - {None}
    currencies |= {vocab.currency_of.get(ch) for ch in norm_quote if ch in vocab.currency_of}
    n = numbers[0]
    rest = norm_value[: n.start] + " " + norm_value[n.end :]
    for ch in rest:
        if ch in vocab.currency_of and vocab.currency_of[ch] not in currencies:
            return False  # "€8" is not quoted by "8 USD"
    for _, _, word in words_of(rest):
        if word in quote_words or mentions(norm_quote, word):
            continue
        if vocab.unit_of(word) in units or vocab.currency_of.get(word) in currencies:
            continue
        return False
    return True


def value_tokens(value: Any, vocab: Vocab) -> list[frozenset[str]] | None:
    """The comparable readings of a numeric value: digits, or a whole numeral or number
    word ("二十", "twenty"); ``None`` for a value that is not a number."""
    wanted = _value_tokens(value)
    if wanted is not None or not isinstance(value, str):
        return wanted
    norm = normalise(value).strip()
    found = with_numerals(norm, [], vocab, min_han=1, words=True)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(norm):
        return [found[0].keys]
    return None
