"""The gates' modules: one responsibility each, no import cycle, the public names exported."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import guardlex
import guardlex.gates

GATES = Path(guardlex.gates.__file__).parent
MODULES = sorted(
    "guardlex." + ".".join(p.relative_to(GATES.parent).with_suffix("").parts)
    for p in GATES.rglob("*.py")
)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", sorted(GATES.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_is_too_long(path):
    assert len(path.read_text("utf-8").splitlines()) <= 520, path


def test_extract_does_not_import_the_faithfulness_shim():
    assert "guardlex.gates.faithfulness" not in _imports(GATES / "extract.py")
    for path in (GATES / "faith").glob("*.py"):
        assert "guardlex.gates.faithfulness" not in _imports(path), path


def test_every_module_imports_on_its_own():
    # a fresh interpreter per module: a cycle shows up as an ImportError; the
    # interpreters run side by side (each spends about a second importing)
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"

    def run(module: str) -> tuple[str, int, str]:
        done = subprocess.run(
            [sys.executable, "-c", code, module], capture_output=True, text=True, check=False
        )
        return module, done.returncode, done.stderr[-2000:]

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        failed = [r for r in pool.map(run, MODULES) if r[1] != 0]
    assert not failed, "\n\n".join(f"{m} (exit {rc}):\n{err}" for m, rc, err in failed)


def test_value_types_are_exported_with_the_functions():
    for name in ("Violation", "FieldResult", "Resolution", "Fact", "Evidence", "Verdict"):
        assert name in guardlex.gates.__all__
        assert name in guardlex.__all__
        assert getattr(guardlex, name) is getattr(guardlex.gates, name)
    for name in ("accept", "audit", "resolve", "extract_facts", "Auditor", "evaluate"):
        assert name in guardlex.gates.__all__
