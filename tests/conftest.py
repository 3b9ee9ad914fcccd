"""Fixtures shared by every test folder."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as a module (the generators' regeneration checks)."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool() -> Callable[[str], ModuleType]:
    """``tool("gen_stopwords")``: a generator script of ``tools/`` loaded as a module."""
    return load_tool
