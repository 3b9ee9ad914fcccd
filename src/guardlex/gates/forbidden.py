"""What an answer must never say about its subject, whatever the sources say.

A poisoned or careless source may contain the subject's day rate or phone number; the
value check would then support it. So each sentence of the answer also goes through the
engagement and personal-data side of the packs (reason code ``forbidden_content``):

* an e-mail address or a phone number in a sentence that names the subject (a pronoun
  of the packs' lexicons or a configured subject name): "You can reach her at
  dana@example.com", "She can be reached on 0170 1234567";
* money said of the subject with a charge word of the lexicons (``charge_words``:
  charges, day rate, cobra, 收费), unless the sentence prices a product unit (seat,
  user, request ...): "She charges 900 EUR per day", but not "The Pro plan costs 8 EUR
  per seat per month" nor "Her article compares pricing of LLM APIs";
* otherwise, for a sentence with such a value and the subject or a charge word, the
  packs' own router: a refusal of category ``engagement`` or ``personal_data``
  ("Her day rate is 900 EUR", "Her phone number is ...").

Sentences without an e-mail address, a phone number or money cost one scan of the values
the gate has already found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import regex

from guardlex.gates._text import TIMEOUT, Value, normalise
from guardlex.gates._vocab import PhraseMatcher, Vocab, words_of
from guardlex.gates.faith.money import _money_at, _money_before, _skip_space
from guardlex.gates.types import PacksLike

#: Canonical units that price a product, not a person's time: a sentence with one of them
#: is a price list ("8 EUR per seat"), not a rate of the subject.
PRODUCT_UNITS = frozenset({"seat", "user", "request", "token", "gb", "session", "minute"})
#: Refusal categories whose content must never be said in an answer.
CATEGORIES = frozenset({"engagement", "personal_data"})

# a phone number: an international prefix, or a trunk 0 with at least 9 digits; spaces,
# dashes and brackets between the digit groups (dates and grouped amounts are not phones)
_PHONE = regex.compile(
    r"(?<![\w+])(?:\+\s?\d[\d \-()/]{6,}\d|\(?0\d[\d \-()/]{7,}\d)(?![\w])",
)


def _phones(norm: str) -> list[tuple[int, int]]:
    out = []
    for m in _PHONE.finditer(norm, timeout=TIMEOUT):
        digits = sum(ch.isdigit() for ch in m.group())
        if digits >= (8 if m.group().lstrip("(").startswith("+") else 9):
            out.append(m.span())
    return out


class Forbidden:
    """The check of one gate: built once from the packs (pronouns, names, charge words)."""

    def __init__(self, packs: PacksLike, vocab: Vocab) -> None:
        self.packs = packs
        self.vocab = vocab
        pronouns: list[str] = []
        charge: list[str] = []
        proclitics: list[str] = []
        for loc in packs.locales:
            lex = packs.lexicon(loc)
            pronouns.extend(normalise(str(p)) for p in lex.get("pronouns") or ())
            charge.extend(normalise(str(w)) for w in lex.get("charge_words") or ())
            proclitics.extend(normalise(str(p)) for p in lex.get("proclitics") or ())
        names: list[str] = []
        for name in getattr(packs, "subject_names", ()) or ():
            norm = normalise(str(name))
            names.append(norm)
            names.extend(part for part in norm.split() if len(part) >= 3)
        # one scan finds both kinds of phrase: the subject's words and the charge words
        self.subject_words = frozenset([*pronouns, *names])
        self.charge_words = frozenset(charge)
        self.matcher = PhraseMatcher([*self.subject_words, *self.charge_words], proclitics)
        self.route = getattr(packs, "route", None)

    def check(self, plain: str, norm: str, found: Sequence[Value]) -> tuple[int, int] | None:
        """The span (in ``norm``) of what must not be said, or ``None``."""
        numbers = [v for v in found if v.kind == "number"]
        contacts = [(v.start, v.end) for v in found if v.kind == "email"]
        # a phone number has at least 8 digits (a cheap test before the pattern runs)
        if "+" in norm or sum(len(v.text) for v in numbers) >= 8:
            contacts.extend(_phones(norm))
        money = next(((v.start, v.end) for v in numbers if self._money(norm, v)), None)
        if not contacts and money is None:
            return None
        words = words_of(norm)
        found_words = {w for _, _, w in self.matcher.find(norm, words)}
        subject = not found_words.isdisjoint(self.subject_words)
        charge = money is not None and not found_words.isdisjoint(self.charge_words)
        if not subject and not charge:
            return None
        if subject and contacts:
            return contacts[0]
        product = money is not None and self._product_price(norm, words)
        if subject and charge and not product:
            return money
        if product and not contacts:
            return None  # a price list ("they charge 8 EUR per seat"), not a person's rate
        if self.route is not None:
            route: Any = self.route(plain)
            if getattr(route, "kind", None) == "refuse" and route.category in CATEGORIES:
                return contacts[0] if contacts else money
        return None

    @staticmethod
    def _money(norm: str, v: Value) -> bool:
        after = _skip_space(norm, v.end)
        return _money_before(norm, v.start) or _money_at(norm, after) > after

    def _product_price(self, norm: str, words: list[tuple[int, int, str]]) -> bool:
        return any(
            (self.vocab.unit_of(w) or w) in PRODUCT_UNITS
            for _, _, w in self.vocab.unit_m.find(norm, words)
        )
