"""The two deterministic output gates (docs/gates.md); no model takes part in a decision.

* ``SentenceGate``: streams an answer sentence by sentence and releases only sentences
  whose markers, values and person check out against the numbered sources.
* ``accept``, ``audit``, ``resolve``: the faithfulness gate for answers built from
  extracted fields; ``extract_facts`` is a rule-based extractor that feeds ``resolve``.

See ``docs/gates.md``.
"""

from __future__ import annotations

from guardlex.gates.errors import EvidenceError, FormulaError, GateSettingError
from guardlex.gates.extract import extract_facts
from guardlex.gates.faith.accept import accept
from guardlex.gates.faith.auditor import Auditor, audit
from guardlex.gates.faith.formula import evaluate
from guardlex.gates.faith.resolve import in_force, resolve
from guardlex.gates.segment import Segmenter, split_sentences
from guardlex.gates.sentence import MIN_WORDS, GateStream, SentenceGate, strip_markers
from guardlex.gates.types import (
    CONFLICT,
    HIT_BUT_UNANSWERABLE,
    NO_HIT,
    OK,
    Event,
    Evidence,
    Fact,
    FieldResult,
    Released,
    Resolution,
    Stopped,
    Truncated,
    Verdict,
    Violation,
)

__all__ = [
    "CONFLICT",
    "HIT_BUT_UNANSWERABLE",
    "MIN_WORDS",
    "NO_HIT",
    "OK",
    "Auditor",
    "Event",
    "Evidence",
    "EvidenceError",
    "Fact",
    "FieldResult",
    "FormulaError",
    "GateSettingError",
    "GateStream",
    "Released",
    "Resolution",
    "Segmenter",
    "SentenceGate",
    "Stopped",
    "Truncated",
    "Verdict",
    "Violation",
    "accept",
    "audit",
    "evaluate",
    "extract_facts",
    "in_force",
    "resolve",
    "split_sentences",
    "strip_markers",
]
