"""Building stores and runners: the sample site (built on the fly, cached on disk) or a
folder of the user's own documents."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from guardlex.runner import _engine
from guardlex.runner.corpus import Site, sample_site, sample_site_fingerprint
from guardlex.runner.costs import BudgetLedger, RateLimiter
from guardlex.runner.embeddings import DEFAULT_EMBEDDER, Embedder, make_embedder
from guardlex.runner.errors import StoreError
from guardlex.runner.models import Model
from guardlex.runner.pipeline import DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MONTHLY_CAP, Runner
from guardlex.runner.retrieval import DEFAULT_THRESHOLD
from guardlex.runner.store import Store

Progress = Callable[[int, int], None]


def cache_dir() -> Path:
    """Where the cached sample store lives (``$GUARDLEX_CACHE`` overrides)."""
    env = os.environ.get("GUARDLEX_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "guardlex"


def owner_names(site: Site) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for locale_names in site.owner_names.values():
        for n in locale_names:
            names[n] = None
    return tuple(names)


def packs_for(names: Sequence[str]) -> _engine.PackView:
    """The installed packs, with the site owner's names standing for ``{subject}``."""
    return _engine.load_packs(names)


def embedder_for(name: str, packs: _engine.PackView) -> Embedder:
    return make_embedder(name, _engine.keywords, packs.all_stopwords)


def build_store(
    site: Site,
    path: str | Path = ":memory:",
    embedder: str | Embedder = DEFAULT_EMBEDDER,
    packs: _engine.PackView | None = None,
    progress: Progress | None = None,
    fingerprint: str = "",
    meta: dict[str, str] | None = None,
) -> Store:
    """Build a store from ``site``. A file path is written atomically (temp + rename);
    a ``postgresql://`` URL is rebuilt in one transaction (:mod:`guardlex.runner.pg`)."""
    from guardlex.runner.pg import PgStore, is_pg_url

    pv = packs if packs is not None else packs_for(owner_names(site))
    emb = embedder if not isinstance(embedder, str) else embedder_for(embedder, pv)
    spath = str(path)
    kw = {"progress": progress, "fingerprint": fingerprint, "meta": meta}
    if is_pg_url(spath):
        pg = PgStore.open(spath, create=True)
        pg.build(site, emb, _engine.keywords, **kw)  # type: ignore[arg-type]
        return pg  # type: ignore[return-value]
    if spath == ":memory:":
        store = Store.open(":memory:")
        store.build(site, emb, _engine.keywords, **kw)  # type: ignore[arg-type]
        return store
    target = Path(spath)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".guardlex-", suffix=".sqlite", dir=str(target.parent))
    os.close(fd)
    try:
        store = Store.open(tmp)
        store.build(site, emb, _engine.keywords, **kw)  # type: ignore[arg-type]
        store.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return Store.open(target, create=False)


def sample_store(
    embedder: str = DEFAULT_EMBEDDER,
    cache: bool = True,
    packs: _engine.PackView | None = None,
    progress: Progress | None = None,
) -> Store:
    """The sample site's store: from the cache when it is current, else built now.

    The cache key is a hash of the site files plus the embedder name, so an edited site
    is never served stale. Without a writable cache the store is built in memory.
    """
    site = sample_site()
    pv = packs if packs is not None else packs_for(owner_names(site))
    fp = _fingerprint(sample_site_fingerprint(), embedder, pv)
    packs = pv
    if cache:
        path = cache_dir() / f"sample-{fp}-{embedder}.sqlite"
        if path.is_file():
            try:
                store = Store.open(path, create=False)
                if store.meta("fingerprint") == fp and store.embedder_name == embedder:
                    return store
                store.close()
            except StoreError:
                pass
        try:
            return build_store(site, path, embedder, packs, progress, fingerprint=fp)
        except OSError:
            pass  # read-only home or cache: fall through to memory
    return build_store(site, ":memory:", embedder, packs, progress, fingerprint=fp)


def _fingerprint(site_fp: str, embedder: str, packs: _engine.PackView) -> str:
    """Site files + embedder + stopwords: the hashing embedder drops the packs' stopwords,
    so new stopwords must rebuild the vectors, never reuse stale ones."""
    import hashlib

    h = hashlib.sha256(f"{site_fp}\0{embedder}\0".encode())
    h.update("\n".join(sorted(packs.all_stopwords)).encode("utf-8"))
    return h.hexdigest()[:16]


def runner_for(
    store: Store,
    *,
    embedder: str | None = None,
    model: Callable[[], Model] | None = None,
    ledger: BudgetLedger | None = None,
    ledger_path: str | Path | None = None,
    monthly_cap: int = DEFAULT_MONTHLY_CAP,
    rate_limiter: RateLimiter | None = None,
    threshold: float | None = None,
    packs: _engine.PackView | None = None,
    max_output_tokens: int | None = None,
    new_ledger: bool = False,
) -> Runner:
    """A :class:`Runner` over ``store`` with the store's own embedder unless told otherwise.

    ``ledger_path`` must name an existing ledger unless ``new_ledger`` (see
    :class:`BudgetLedger`: a missing ledger refuses every turn rather than reset the month).
    """
    pv = packs if packs is not None else packs_for(store.owner_names())
    name = embedder or store.embedder_name or DEFAULT_EMBEDDER
    if ledger is None:
        ledger = BudgetLedger(ledger_path or ":memory:", monthly_cap, create=new_ledger)
    return Runner(
        store,
        pv,
        embedder=name,
        model=model,
        ledger=ledger,
        rate_limiter=rate_limiter,
        threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
        max_output_tokens=(
            DEFAULT_MAX_OUTPUT_TOKENS if max_output_tokens is None else max_output_tokens
        ),
    )


def sample_packs() -> _engine.PackView:
    """The installed packs with the sample site owner's names as ``{subject}``."""
    return packs_for(owner_names(sample_site()))


def default_runner(**kwargs: object) -> Runner:
    """The runner on the sample site with the scripted model: what ``guardlex ask`` uses."""
    packs = sample_packs()
    store = sample_store(packs=packs)
    return runner_for(store, packs=packs, **kwargs)  # type: ignore[arg-type]
