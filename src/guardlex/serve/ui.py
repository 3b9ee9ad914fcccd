"""The page's own strings (``serve/ui/<locale>.yaml``) and each locale's direction.

Answers' fixed texts (refusal, gate stop, truncation, budget) come from the packs'
``messages.yaml``; only the page's labels live here. The direction of a locale is its
``locale.yaml`` ``direction`` (``guardlex.rules.locale_info``), never a list in Python.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

UI_DIR = Path(__file__).parent / "ui"
ROOT = "en"


@functools.lru_cache(maxsize=1)
def _infos() -> Mapping[str, Any]:
    from guardlex.rules.locale_info import shipped_locale_infos

    try:
        return dict(shipped_locale_infos())
    except Exception:  # the page must render even if a locale.yaml is broken
        return {}


def direction(locale: str | None) -> str:
    """``rtl`` or ``ltr`` for ``locale`` (``ltr`` when unknown)."""
    info = _infos().get(locale or "")
    d = getattr(info, "direction", "ltr")
    return "rtl" if d == "rtl" else "ltr"


def locale_name(locale: str) -> str:
    info = _infos().get(locale)
    return str(getattr(info, "name", "") or locale)


@functools.lru_cache(maxsize=64)
def strings(locale: str) -> dict[str, str]:
    """The UI strings of ``locale``, the root locale's filling any gap."""
    out: dict[str, str] = {}
    for loc in (ROOT, locale):
        path = UI_DIR / f"{loc}.yaml"
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
        for key, value in dict(data.get("strings") or {}).items():
            out[str(key)] = str(value)
    return out


def available() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in UI_DIR.glob("*.yaml")))


def choose(wanted: str, accept_language: str, loaded: Sequence[str]) -> str:
    """The page's locale: ``?locale=`` when loaded, else the first of the browser's
    ``Accept-Language`` that is loaded, else the root locale."""
    if wanted in loaded:
        return wanted
    for part in accept_language.split(","):
        tag = part.split(";")[0].strip().lower()
        for cand in (tag, tag.split("-")[0]):
            if cand in loaded:
                return cand
    return ROOT if ROOT in loaded or not loaded else loaded[0]


def ui_payload(wanted: str, accept_language: str, loaded: Sequence[str]) -> dict[str, Any]:
    loc = choose(wanted, accept_language, list(loaded))
    return {
        "locale": loc,
        "direction": direction(loc),
        "strings": strings(loc),
        "locales": [{"code": c, "name": locale_name(c), "direction": direction(c)} for c in loaded],
    }
