"""``guardlex.rules._gc.collection_paused``: the collector's state is restored, what the
block allocated leaves the youngest generation, and an application's frozen objects stay
frozen."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from guardlex.rules._gc import collection_paused


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after(collector: None) -> None:
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_application_stays_off(collector: None) -> None:
    gc.disable()
    with collection_paused():
        pass
    assert not gc.isenabled()


def test_an_error_inside_restores_the_collector(collector: None) -> None:
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("x")
    assert gc.isenabled()


def test_what_the_block_allocated_leaves_the_youngest_generation(collector: None) -> None:
    gc.collect()
    with collection_paused():
        kept = [[i] for i in range(50_000)]  # far more than a young collection's threshold
    # no young collection walks them: they are in the oldest generation
    young = {id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert not any(id(x) in young for x in kept)
    assert all(id(x) in old for x in kept)


def test_objects_the_application_froze_stay_frozen(collector: None) -> None:
    gc.collect()
    frozen = [[i] for i in range(100)]
    gc.freeze()
    before = gc.get_freeze_count()
    with collection_paused():
        _ = [[i] for i in range(5_000)]
    assert gc.get_freeze_count() == before > 0
    del frozen


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_made_inside_is_still_collected(collector: None) -> None:
    with collection_paused():
        ref = weakref.ref(_Node())
    assert ref() is not None  # a cycle: only the collector frees it
    gc.collect()
    assert ref() is None
