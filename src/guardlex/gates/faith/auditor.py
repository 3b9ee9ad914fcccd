"""``audit``: what an answer states that its quotes do not (``Auditor`` keeps the evidence
analysed for many answers)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from guardlex.errors import InputTooLargeError
from guardlex.gates._text import (
    Value,
    check_size,
    require_str,
    require_texts,
)
from guardlex.gates._vocab import (
    vocab_for,
    words_of,
)
from guardlex.gates.faith.analysis import Analysis, _merge, analyse
from guardlex.gates.faith.checks import (
    _numbers,
    _polarity_flips,
    _subjects,
    _switched_subject,
    _unlimited,
)
from guardlex.gates.faith.common import (
    MAX_ANSWER_CHARS,
    MAX_COMPUTED,
    MAX_EVIDENCE_CHARS,
    MAX_NAME_CHARS,
    MAX_QUOTES,
    MAX_SUBJECTS,
    _packs,
    _stopwords,
)
from guardlex.gates.faith.formula import _computed
from guardlex.gates.faith.index import _Index, _relevance_matcher
from guardlex.gates.types import (
    PacksLike,
    Violation,
)


class Auditor:
    """Evidence analysed once, then many answers or sentences audited against it.

    The sentence gate keeps one per source; ``audit`` builds one per call.
    """

    def __init__(
        self,
        quotes: Sequence[str],
        *,
        packs: PacksLike | None = None,
        locale: str | None = None,
        subjects: Sequence[str] = (),
    ) -> None:
        quotes = require_texts(quotes, "quotes", limit=MAX_QUOTES)
        require_str(locale, "locale", optional=True)
        subjects = require_texts(subjects, "subjects", limit=MAX_SUBJECTS)
        for name in subjects:
            check_size(name, MAX_NAME_CHARS, "a subject name")
        check_size(sum(len(q) for q in quotes), MAX_EVIDENCE_CHARS, "the quotes together")
        self.packs = _packs(packs)
        locales = [locale] if locale else None
        self.vocab = vocab_for(self.packs, locales)
        self.stop = _stopwords(self.packs, locales)
        self.subjects = tuple(subjects)
        self.parts = [analyse(q, self.vocab, self.stop, evidence=True) for q in quotes]
        self._merged: dict[tuple[int, ...] | None, _Index] = {}
        self.quote_keys = (
            frozenset().union(*(p.keys for p in self.parts)) if self.parts else (frozenset())
        )

    def evidence(self, which: Sequence[int] | None = None) -> Analysis:
        """The merged analysis of all quotes, or of the given (0-based) ones (cached)."""
        return self._index(which).evidence

    def _index(self, which: Sequence[int] | None) -> _Index:
        key = None if which is None else tuple(which)
        cached = self._merged.get(key)
        if cached is not None:
            return cached
        parts = self.parts if key is None else [self.parts[i] for i in key]
        merged = _merge(parts) if parts else Analysis((), (), (), frozenset())
        index = _Index.build(merged)
        if len(self._merged) < 256:
            self._merged[key] = index
        return index

    def relevant(self, norm_answer: str, has_numbers: bool) -> bool:
        """Whether an audit without the number check can find anything (one scan the
        sentence gate runs before a full audit): a polarity word, or a number with a unit
        word (units, "unlimited" and switched subjects are all read through units) or a
        subject list."""
        if has_numbers and self.subjects:
            return True
        hits = _relevance_matcher(self.vocab).find(norm_answer)
        if has_numbers and (hits or self._names_currency(norm_answer)):
            return True  # units, and a currency that may have changed (8 EUR -> 8 USD)
        if not hits:
            return False
        if any(form in self.vocab.polarity_of for _, _, form in hits):
            return True
        # a unit word and a number written without digits ("twenty seats", "五个席位")
        vocab = self.vocab
        if (
            vocab.numeral_digits
            and max(norm_answer) >= "\u3400"
            and any(ch in vocab.numeral_digits for ch in norm_answer)
        ):
            return True
        return bool(vocab.number_words) and any(
            w in vocab.number_words for _, _, w in words_of(norm_answer)
        )

    def _names_currency(self, norm: str) -> bool:
        table = self.vocab.currency_of
        if not table:
            return False
        if any(unicodedata.category(ch) == "Sc" for ch in norm):
            return True
        if max(norm) >= "\u3400" and any(ch in table for ch in norm):
            return True
        return any(w in table for _, _, w in words_of(norm))

    def audit(
        self,
        answer: str,
        *,
        computed: Mapping[str, str] | None = None,
        which: Sequence[int] | None = None,
        numbers: bool = True,
        one_sentence: bool = False,
        prepared: tuple[str, list[Value]] | None = None,
    ) -> list[Violation]:
        """Violations of ``answer`` against the quotes (all, or the given 0-based ones).

        ``numbers=False`` leaves out ``number_not_in_quote`` (the sentence gate has its own
        value check); ``one_sentence`` skips segmentation of an answer known to be one, and
        ``prepared`` (its ``normalise`` and ``values(..., skip_enumerator=True)``) skips
        their second run.
        """
        require_str(answer, "answer")
        check_size(answer, MAX_ANSWER_CHARS, "the answer")
        if computed is not None:
            if not isinstance(computed, Mapping):
                raise TypeError(
                    f"computed must be a mapping {{value: formula}}, not {type(computed).__name__}"
                )
            if len(computed) > MAX_COMPUTED:
                raise InputTooLargeError(
                    f"computed has {len(computed)} entries; the limit is {MAX_COMPUTED}."
                )
            for value, formula in computed.items():
                check_size(str(value), MAX_NAME_CHARS, "a computed value")
                check_size(str(formula), MAX_NAME_CHARS, "a formula")
        ans = analyse(
            answer,
            self.vocab,
            self.stop,
            sentences=not one_sentence,
            prepared=prepared if one_sentence else None,
        )
        ix = self._index(which)
        ev = ix.evidence
        computed_keys, out = _computed(ans, ev.keys, computed or {})
        missing, units = _numbers(ans, ix, computed_keys)
        if numbers:
            out.extend(missing)
        else:
            # the sentence gate checks digits itself, not numbers written as words
            out.extend(v for v in missing if not any(ch.isdigit() for ch in v.token))
        out.extend(units)
        out.extend(_polarity_flips(ans, ix))
        out.extend(_unlimited(ans, ix, computed_keys))
        out.extend(_subjects(ans, ev, self.subjects, computed_keys))
        if not self.subjects:
            out.extend(_switched_subject(ans, ix, computed_keys))
        seen: set[tuple[str, str]] = set()
        unique = []
        for v in out:
            if (v.code, v.token) not in seen:
                seen.add((v.code, v.token))
                unique.append(v)
        return unique


def audit(
    answer: str,
    quotes: Sequence[str],
    locale: str | None = None,
    *,
    computed: Mapping[str, str] | None = None,
    subjects: Sequence[str] = (),
    packs: PacksLike | None = None,
) -> list[Violation]:
    """What ``answer`` states that its ``quotes`` do not; an empty list means none found.

    ``computed`` maps a number the program computed (as it appears in the answer, e.g.
    ``"24"``) to its formula (``"3 × 8"``): that number need not be quoted, but every
    input of the formula must be, and the formula must give the number. ``subjects``
    (plan, product or person names) sharpens the subject check: a number said of a
    subject must share a quoted sentence with it; without them, a number moved between
    competing quoted claims of the same unit is still caught. ``locale`` restricts the
    vocabulary to one pack (default: every locale's words).
    """
    require_str(answer, "answer")
    return Auditor(quotes, packs=packs, locale=locale, subjects=subjects).audit(
        answer, computed=computed
    )
