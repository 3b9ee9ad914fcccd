"""The faithfulness gate: fields and answers checked against the exact quotes they rest on.

Three functions, each a comparison of strings:

* ``accept`` admits one extracted field only if its quote is an exact substring of the
  evidence that starts and ends at token boundaries, its value occurs in the quote as a
  whole token, and its subject (product, plan, person) occurs in the same quote;
* ``audit`` lists what an answer says that its quotes do not: a number that is in no
  quote, a number whose unit changed (8 per seat per month is not 8 per person per day),
  a flipped polarity ("not included" / "included"), an "unlimited" turned into a number,
  a number attached to another subject, and computed numbers whose formula inputs are
  not quoted;
* ``resolve`` answers one field from the documents in force, and says CONFLICT instead
  of choosing when they disagree.

Unit words, rate words ("per", "/", 每), polarity pairs, "unlimited" and "not applicable"
words, number words and money words come from the packs' locale data. The checks are
deliberately narrow: they catch the high-risk rewrites of numbers, units, negations and
subjects; a paraphrase the vocabulary does not know passes them, it is not judged.

The code lives in ``guardlex.gates.faith`` (one module per responsibility); this module
is the stable import place.
"""

from __future__ import annotations

from guardlex.gates.faith.accept import accept
from guardlex.gates.faith.analysis import Analysis, analyse
from guardlex.gates.faith.auditor import Auditor, audit
from guardlex.gates.faith.common import (
    MAX_ANSWER_CHARS,
    MAX_COMPUTED,
    MAX_EVIDENCE_CHARS,
    MAX_NAME_CHARS,
    MAX_QUOTES,
    MAX_SUBJECTS,
    UNLIMITED,
    documents_of,
    mentions,
)
from guardlex.gates.faith.formula import evaluate
from guardlex.gates.faith.money import MONEY_WORDS
from guardlex.gates.faith.resolve import in_force, resolve

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_COMPUTED",
    "MAX_EVIDENCE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_QUOTES",
    "MAX_SUBJECTS",
    "MONEY_WORDS",
    "UNLIMITED",
    "Analysis",
    "Auditor",
    "accept",
    "analyse",
    "audit",
    "documents_of",
    "evaluate",
    "in_force",
    "mentions",
    "resolve",
]
