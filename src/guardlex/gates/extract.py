"""A small rule-based fact extractor, so the faithfulness pipeline runs without a model.

It reads each sentence of each document and proposes candidate facts for one field:

* a number whose attached units or clause words match the field name
  (``price_per_seat`` <- "costs 8 EUR per seat per month"; ``存储空间`` <- "提供 100 GB 存储空间");
* ``"unlimited"`` when the clause says so for a matching unit ("Enterprise: unlimited seats");
* ``True``/``False`` when the field names a polarity pair and a clause carries that pair
  (``tax_included`` <- "excluding tax" gives ``False``).

Every fact's quote is the sentence exactly as it stands in the document, so ``accept``
and ``resolve`` can verify it. The extractor proposes; the gates decide.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import regex

from guardlex.gates._text import TIMEOUT, check_size, normalise, require_str
from guardlex.gates._vocab import Vocab, default_packs, vocab_for
from guardlex.gates.faith.analysis import analyse
from guardlex.gates.faith.common import (
    MAX_NAME_CHARS,
    UNLIMITED,
    _stopwords,
    documents_of,
    mentions,
)
from guardlex.gates.segment import split_sentences
from guardlex.gates.types import Evidence, Fact, PacksLike
from guardlex.rules.locale_info import locale_infos

_FIELD_SPLIT = regex.compile(r"[\s_\-./:]+")
_HAN = regex.compile(r"\p{Han}")


def _han(text: str) -> bool:
    """Whether ``text`` starts with a Han character."""
    return _HAN.match(text, timeout=TIMEOUT) is not None


def _field_tokens(field: str, vocab: Vocab) -> tuple[list[str], set[str]]:
    """The field name's words, and those that follow a rate word (``per`` in price_per_seat)."""
    tokens: list[str] = []
    rates: set[str] = set()
    after_per = False
    for part in _FIELD_SPLIT.split(normalise(field), timeout=TIMEOUT):
        # a Han name has no separators: 每席位价格 is "per" (lexicon ``per``) + 席位价格
        han_per = [w for w in vocab.per if _han(w)]
        if han_per and _han(part or " "):
            pieces = regex.split(r"(\L<per>)", part, per=han_per, timeout=TIMEOUT)
        else:
            pieces = [part]
        for t in pieces:
            if not t:
                continue
            if t in vocab.per:
                after_per = True
                continue
            if len(t) >= 2 or _han(t):
                tokens.append(t)
                if after_per:
                    rates.add(t)
            after_per = False
    return tokens, rates


@functools.cache
def _price_words() -> frozenset[str]:
    """Field words that ask for a price: a number with money or a rate attached answers
    them ("price", "seat_price" <- "costs 8 EUR per seat per month"). ``money.price_words``
    of every locale's ``locale.yaml``, normalised."""
    return frozenset(normalise(w) for info in locale_infos().values() for w in info.price_words)


def _similar(a: str, b: str) -> bool:
    """Same word up to inflection or an attached article: a shared stem of 5+ characters,
    or one word ending or starting the other (4+ characters)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 4 and (long_.startswith(short) or long_.endswith(short)):
        return True
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    return prefix >= 5


def _token_units(token: str, vocab: Vocab) -> set[str]:
    """Canonical units a field word names (``seats`` -> seat; ``每席位价格`` -> seat)."""
    found = {vocab.unit_of(token)}
    if _han(token):
        found |= {vocab.unit_of(phrase) for _, _, phrase in vocab.unit_m.find(token)}
    elif None in found:
        # inflected or with an article: المستخدمین ~ مستخدمین, usuários ~ usuario
        found |= {canon for surface, canon in vocab.units.items() if _similar(token, surface)}
    return {u for u in found if u}


def _matches(token: str, words: Iterable[str], units: Iterable[str], vocab: Vocab) -> bool:
    unit_set = set(units)
    if _token_units(token, vocab) & unit_set:
        return True
    if _han(token):
        return any(token in w or w in token for w in words if len(w) >= 2)
    return any(_similar(token, w) for w in words) or any(_similar(token, u) for u in unit_set)


def extract_facts(
    field: str,
    documents: Iterable[Evidence | Mapping[str, Any]],
    *,
    subject: str | None = None,
    packs: PacksLike | None = None,
) -> list[Fact]:
    """Candidate facts for ``field`` from the documents (each quote an exact sentence).

    ``subject`` keeps only sentences that name it. The field name is matched loosely
    against unit words and clause words, so name fields as a reader would
    (``seats_included``, ``price_per_seat``, ``存储空间``, ``цена_за_место``).
    """
    require_str(field, "field")
    require_str(subject, "subject", optional=True)
    check_size(field, MAX_NAME_CHARS, "the field name")
    docs = documents_of(documents)
    the_packs = packs if packs is not None else default_packs()
    vocab = vocab_for(the_packs)
    stop = _stopwords(the_packs, None)
    tokens, rates = _field_tokens(field, vocab)
    if not tokens:
        return []
    polar_pairs = {
        pair
        for t in tokens
        for form, entries in vocab.polarity_of.items()
        if t in form.split() or (_han(t) and (t in form or (len(form) >= 2 and form in t)))
        for pair, _ in entries
    }
    norm_subject = normalise(subject) if subject else None
    facts: list[Fact] = []
    for doc in docs:
        for sentence in split_sentences(doc.text, vocab.is_abbreviation):
            if sentence not in doc.text:
                continue
            if norm_subject and not mentions(normalise(sentence), norm_subject):
                continue
            facts.extend(
                _from_sentence(
                    field, sentence, doc.doc, tokens, rates, polar_pairs, vocab, subject, stop
                )
            )
    return facts


def _from_sentence(
    field: str,
    sentence: str,
    doc: str,
    tokens: Sequence[str],
    rates: set[str],
    polar_pairs: set[int],
    vocab: Vocab,
    subject: str | None,
    stop: frozenset[str] = frozenset(),
) -> list[Fact]:
    an = analyse(sentence, vocab, stop, sentences=False)
    out: list[Fact] = []
    clause_words = [
        [w for w in regex.findall(r"\w+", c.text, timeout=TIMEOUT) if not w.isdigit()]
        for c in an.clauses
    ]
    polar_words = {w for form in vocab.polarity_of for w in form.split()}
    single_forms = {form for form in vocab.polarity_of if " " not in form}
    pair_words: dict[int, set[str]] = {}
    for form, entries in vocab.polarity_of.items():
        for pair, _ in entries:
            if " " not in form:
                pair_words.setdefault(pair, set()).add(form)
    # the words that name the thing counted or priced, not its polarity ("tax" in tax_included)
    other_tokens = [t for t in tokens if not any(_similar(t, w) for w in polar_words)]
    price_words = _price_words()
    price = any(t in price_words or normalise(t) in price_words for t in other_tokens)
    count_tokens = [t for t in other_tokens if t not in rates and t not in price_words]
    field_units = {u for t in count_tokens for u in _token_units(t, vocab)}
    # numbers
    for n in an.numbers:
        if rates:
            # a price per seat needs "per seat" attached; "20 seats" is a count, not a rate
            hit = all(_matches(t, (), n.rate, vocab) for t in rates)
        elif price:
            # "seat_price", "price": money or a rate attached, and the field's unit as a rate
            near = n.rate | an.clauses[n.clause].units
            hit = (n.money or bool(n.rate)) and (not field_units or bool(field_units & near))
        elif field_units:
            # a count of the field's unit: "20 seats" (but "8 per seat" is a rate)
            own = n.units - n.rate
            hit = bool(field_units & own) or (
                not n.units and bool(field_units & an.clauses[n.clause].units)
            )
        else:
            # a field that names no unit: its words must be in the number's clause
            hit = any(_matches(t, clause_words[n.clause], (), vocab) for t in other_tokens)
        if hit:
            out.append(Fact(field, n.value.text, sentence, doc, subject))
    # unlimited: a count without a limit ("Enterprise: unlimited seats")
    for idx, c in enumerate(an.clauses):
        if c.unlimited and any(
            _matches(t, clause_words[idx], c.units, vocab) for t in count_tokens
        ):
            out.append(Fact(field, UNLIMITED, sentence, doc, subject))
    # polarity, unless the field was answered with a number here ("includes 20 seats"):
    # each polarity word is read with what it is said of (its clause's other words), so
    # "Support is not included" answers support_included / support (False), and never
    # tax_included; a polarity word that is itself the subject of the next one ("support"
    # before "is not included") was already dropped by ``analyse``
    if polar_pairs and not out:
        signs: set[str] = set()
        for c in an.clauses:
            for p in c.polar:
                # the words that name this predicate: its single-word forms and the matched
                # form itself ("plus tax" names tax, but "included" does not)
                names = pair_words.get(p.pair, set()) | set(p.form.split())
                named = [t for t in tokens if any(_similar(t, w) for w in names)]
                subject_tokens = [t for t in tokens if t not in named]
                if named:
                    # a predicate word of another pair says the same ("mwst_enthalten" and
                    # "zzgl. MwSt.", "iva_incluido" and "sin IVA"): not a subject word
                    subject_tokens = [t for t in subject_tokens if t not in single_forms]
                if not named and p.pair not in polar_pairs:
                    # a field of subject words only ("support"): the predicate's sign
                    subject_tokens = list(tokens)
                if all(_matches(t, p.about, c.units, vocab) for t in subject_tokens):
                    signs.add(p.sign)
        if len(signs) == 1:
            out.append(Fact(field, signs.pop() == "+", sentence, doc, subject))
    return out
