"""First person on the UD sets (external data beside the repository: ../shared/data).

The data is not part of the repository; CI has ``../shared`` beside its clone, so a
missing folder is a failure, not a skip. Thresholds from issue 10: recall >= 0.90 and
precision >= 0.98 per language (Arabic recall >= 0.75), quoted_only/unsure left out.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from guardlex import load_packs

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "eval_fp", REPO / "benchmarks" / "eval_first_person.py"
)
assert _spec is not None and _spec.loader is not None
eval_fp = importlib.util.module_from_spec(_spec)
sys.modules["eval_fp"] = eval_fp
_spec.loader.exec_module(eval_fp)

RECALL = {"ar": 0.75}
PASSING = ["en", "de", "fr", "es", "pt", "ru", "ar", "hi", "fa", "zh", "zh_hant"]


@pytest.fixture(scope="module")
def packs():  # type: ignore[no-untyped-def]
    return load_packs()


def _check(packs, name: str, with_locale: bool) -> None:  # type: ignore[no-untyped-def]
    assert eval_fp.DATA.is_dir(), f"external data missing: {eval_fp.DATA}"
    s = eval_fp.score(packs, eval_fp.load_items(name), with_locale)
    assert s.precision >= 0.98, (name, s.precision, [e for e in s.errors if e[0] == "false"][:5])
    assert s.recall >= RECALL.get(name, 0.90), (name, s.recall)


@pytest.mark.parametrize("name", PASSING)
@pytest.mark.parametrize("with_locale", [True, False], ids=["locale", "auto"])
def test_ud_first_person(packs, name: str, with_locale: bool) -> None:  # type: ignore[no-untyped-def]
    _check(packs, name, with_locale)


@pytest.mark.parametrize("name", PASSING)
def test_quoted_first_person_is_not_the_writer(packs, name: str) -> None:  # type: ignore[no-untyped-def]
    # "«Мы просили...», — сказал Сакиб": quoted speech and titles do not count
    assert eval_fp.flagged(packs, eval_fp.load_quoted(name)) <= 0.05
