"""Fixtures for engine tests: small packs written to a temporary directory.

Engine behaviour is tested on packs made for the test, so these tests do not change
when linguists edit the shipped packs. ``write_pack`` writes only the files given;
the loader treats missing files as empty sections.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

PackWriter = Callable[..., Path]


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def rule(
    rid: str,
    *,
    phrases: list[str] | None = None,
    patterns: list[str] | None = None,
    match: list[str] | None = None,
    no_match: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A rule dict with enough examples to satisfy the schema."""
    out: dict[str, Any] = {"id": rid, "about": f"test rule {rid}"}
    if phrases:
        out["phrases"] = phrases
    if patterns:
        out["patterns"] = patterns
    out.update(extra)
    out["examples"] = {"match": match or ["x1", "x2"], "no_match": no_match or ["zzz"]}
    return out


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own pack cache, so tests never see each other's entries."""
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def write_pack(tmp_path: Path) -> Iterator[PackWriter]:
    """``write_pack(code, refusal={...}, overview=[...], lexicon={...}, ...) -> root dir``."""

    def write(code: str, root: Path | None = None, **files: Any) -> Path:
        base = root or tmp_path / "packs"
        folder = base / code
        folder.mkdir(parents=True, exist_ok=True)
        header = {"locale": code, "schema_version": 1}
        if "locale" in files:
            _dump(folder / "locale.yaml", {**header, **files["locale"]})
        if "refusal" in files:
            _dump(folder / "refusal.yaml", {**header, **files["refusal"]})
        if "overview" in files:
            _dump(folder / "overview.yaml", {**header, "rules": files["overview"]})
        if "lexicon" in files:
            _dump(folder / "lexicon.yaml", {**header, **files["lexicon"]})
        if "first_person" in files:
            _dump(folder / "first_person.yaml", {**header, **files["first_person"]})
        if "messages" in files:
            _dump(folder / "messages.yaml", {**header, "messages": files["messages"]})
        if "stopwords" in files:
            _dump(folder / "stopwords.yaml", {**header, "words": files["stopwords"]})
        if "raw" in files:
            for name, text in files["raw"].items():
                (folder / name).write_text(text, encoding="utf-8")
        return base

    yield write
