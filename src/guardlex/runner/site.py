"""A user's own site, from the store alone: its name, subject names, locales, embedder
and calibrated threshold are kept in the store's metadata at ``guardlex index`` time, so
``ask``, ``eval`` and ``calibrate`` need only ``--store`` (plus ``--packs`` for the
user's own rule packs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from guardlex.runner import _engine
from guardlex.runner.embeddings import Embedder, make_embedder
from guardlex.runner.errors import StoreError
from guardlex.runner.retrieval import DEFAULT_THRESHOLD
from guardlex.runner.store import (
    META_EMBEDDER_CONFIG,
    META_LOCALES,
    META_SITE,
    META_THRESHOLD,
    meta_json,
    open_store,
    subject_names,
)


@dataclass(frozen=True)
class Threshold:
    """The threshold a command uses and where it came from (printed by eval and ask)."""

    value: float
    source: str  # "flag" | "calibrated" | "default"
    note: str = ""

    def describe(self) -> str:
        if self.source == "calibrated":
            return f"threshold {self.value} (calibrated: {self.note})"
        if self.source == "flag":
            return f"threshold {self.value} (--threshold)"
        return f"threshold {self.value} (default{'; ' + self.note if self.note else ''})"


@dataclass(frozen=True)
class SiteInfo:
    """What the store says about its site."""

    name: str
    store: str
    backend: str
    subjects: tuple[str, ...]
    locales: tuple[str, ...]
    embedder: str
    chunks: int
    records: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "store": self.store,
            "backend": self.backend,
            "subjects": list(self.subjects),
            "locales": list(self.locales),
            "embedder": self.embedder,
            "chunks": self.chunks,
            "records": self.records,
        }


def site_info(store: Any) -> SiteInfo:
    locales = meta_json(store, META_LOCALES)
    return SiteInfo(
        name=store.meta(META_SITE) or "unnamed site",
        store=str(store.path),
        backend=str(getattr(store, "backend", "sqlite")),
        subjects=subject_names(store),
        locales=tuple(locales) if isinstance(locales, list) else tuple(store.locales()),
        embedder=store.embedder_name or "?",
        chunks=store.chunk_count(),
        records=len(store.records()),
    )


def stored_threshold(store: Any) -> tuple[dict[str, Any] | None, str]:
    """The calibration record that applies to this store's embedder and corpus, or None
    with the reason a stored one does not apply (another embedder, a re-indexed corpus)."""
    rec = meta_json(store, META_THRESHOLD)
    if not isinstance(rec, dict) or "value" not in rec:
        return None, ""
    if rec.get("embedder") != store.embedder_name:
        return None, (
            f"the calibrated {rec['value']} belongs to embedder {rec.get('embedder')!r}, "
            f"not {store.embedder_name!r}: recalibrate"
        )
    if rec.get("corpus") != store.meta("corpus"):
        return (
            None,
            f"the calibrated {rec['value']} belongs to another corpus (re-indexed): recalibrate",
        )
    return rec, ""


def choose_threshold(store: Any, flag: float | None) -> Threshold:
    """``--threshold`` when given, else the store's calibrated value, else the default."""
    if flag is not None:
        return Threshold(float(flag), "flag")
    rec, why = stored_threshold(store)
    if rec is not None:
        note = (
            f"{rec.get('embedder')}, corpus {rec.get('corpus')}, golden "
            f"{rec.get('golden', '?')}, {rec.get('at', '?')}, policy: {rec.get('policy', '?')}"
        )
        return Threshold(float(rec["value"]), "calibrated", note)
    return Threshold(DEFAULT_THRESHOLD, "default", why)


def apply_threshold(store: Any, record: dict[str, Any]) -> None:
    """Store a calibrated threshold with the embedder and corpus it belongs to."""
    rec = dict(record)
    rec.setdefault("embedder", store.embedder_name)
    rec.setdefault("corpus", store.meta("corpus"))
    store.set_meta(META_THRESHOLD, json.dumps(rec, ensure_ascii=False, sort_keys=True))


def site_packs(store: Any, packs_dirs: Sequence[str] = ()) -> _engine.PackView:
    """The shipped packs plus ``packs_dirs``, with the site's subject names."""
    from guardlex.rules import load_packs

    return _engine.PackView(load_packs(subject_names=subject_names(store), paths=tuple(packs_dirs)))


def embedder_factory(
    store: Any, packs: _engine.PackView, name: str | None = None
) -> Callable[[], Embedder]:
    """Builds the store's embedder (with its recorded configuration) on first use."""
    chosen = name or store.embedder_name
    if not chosen:
        raise StoreError(f"{store.path}: the store records no embedder; re-index")
    if store.embedder_name and chosen != store.embedder_name:
        raise StoreError(
            f"{store.path} was built with embedder {store.embedder_name!r}, not {chosen!r}: "
            "drop --embedder or re-index with it"
        )
    config = meta_json(store, META_EMBEDDER_CONFIG)

    def make() -> Embedder:
        return make_embedder(
            chosen,
            _engine.keywords,
            packs.all_stopwords,
            config if isinstance(config, dict) else None,
        )

    return make


def open_site(spec: str) -> Any:
    """The existing store at ``spec`` (path or ``postgresql://`` URL)."""
    return open_store(spec, create=False)


def make_index_embedder(name: str, url: str | None, key_env: str, site: Any) -> Embedder:
    """The embedder ``guardlex index`` builds a site with (its name already checked)."""

    from guardlex.runner.build import owner_names, packs_for
    from guardlex.runner.embeddings import OPENAI_PREFIX

    packs = packs_for(owner_names(site))
    config: dict[str, Any] | None = None
    if name.startswith(OPENAI_PREFIX):
        if not url:
            raise StoreError(f"--embedder {name} needs --embedder-url http://host:port/v1")
        config = {"url": url, "key_env": key_env}
    elif url:
        raise StoreError("--embedder-url is only for --embedder openai:<model>")
    emb = make_embedder(name, _engine.keywords, packs.all_stopwords, config)
    if config is not None:
        emb.embed(["guardlex"])  # learn the dimension (and fail now if the endpoint does)
    return emb


def index_meta(name: str, subjects: Sequence[str], site: Any, embedder: Embedder) -> dict[str, str]:
    """The site metadata ``guardlex index`` writes into the store."""
    from guardlex.runner.store import META_SUBJECTS

    names: dict[str, None] = dict.fromkeys(subjects)
    for locale_names in site.owner_names.values():
        names.update(dict.fromkeys(locale_names))
    meta = {
        META_SITE: name,
        META_SUBJECTS: json.dumps(list(names), ensure_ascii=False),
        META_LOCALES: json.dumps(sorted(site.locales)),
    }
    cfg = getattr(embedder, "config", None)
    if callable(cfg):
        meta[META_EMBEDDER_CONFIG] = json.dumps(dict(cfg()))
    return meta
