"""The examples in docs/normalise.md are doctests, so the documentation stays true."""

from __future__ import annotations

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "normalise.md"


def test_docs_examples() -> None:
    result = doctest.testfile(str(DOC), module_relative=False, verbose=False)
    assert result.attempted >= 8
    assert result.failed == 0
