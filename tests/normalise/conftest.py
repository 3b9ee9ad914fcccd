"""Build the normaliser's lazily built tables once, before hypothesis times anything."""

from __future__ import annotations

from guardlex.normalise import normalise, normalise_with_offsets

normalise("Warm-up: ΐ é ي\u200cك ё 學")
normalise_with_offsets("Warm-up: e\u0301")
