"""Pausing the cyclic garbage collector while a start builds long-lived tables."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's state is restored after.

    Compiling, reading programs and building the matcher allocate hundreds of thousands
    of small acyclic objects that live as long as the packs: each collection meanwhile
    would walk all of them again (at a start, about a quarter of the time). At the end
    the objects tracked are moved to the oldest generation (``gc.freeze`` then
    ``gc.unfreeze``, each a constant-time move of lists) instead of left in the youngest,
    whose first collection would otherwise walk them all at once: a cycle made meanwhile
    is collected by the next full collection, not the next young one. When the
    application has frozen objects itself (``gc.get_freeze_count``), they are left
    frozen and nothing is moved. A collector that was already off (by the application,
    or another thread inside this block) stays off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
