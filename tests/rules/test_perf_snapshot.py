"""The normaliser's snapshot of tables (``guardlex.normalise._snapshot``): read back as
built, used only when current and intact, and the shipped one equal to a fresh build."""

from __future__ import annotations

import json
from pathlib import Path

from guardlex.normalise import _snapshot as snapshot
from guardlex.normalise import normalise, normalise_with_offsets


def test_written_snapshot_reads_back_what_was_built(tmp_path: Path) -> None:
    built = snapshot.build()
    assert "guardlex.normalise._tables.fused_table()" in built
    path = snapshot.write(tmp_path / "t.marshal")
    back = snapshot.read(path)
    assert back.keys() == built.keys()
    for key, value in built.items():
        assert back[key] == value, key
        assert type(back[key]) is type(value), key


def test_damaged_or_foreign_snapshot_is_ignored(tmp_path: Path) -> None:
    path = snapshot.write(tmp_path / "t.marshal")
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n")
    damaged = tmp_path / "damaged.marshal"
    damaged.write_bytes(head + b"\n" + body[:-1] + bytes([body[-1] ^ 1]))
    assert snapshot.read(damaged) == {}
    header = json.loads(head)
    header["stamp"] = "0" * 64  # another normaliser or interpreter
    foreign = tmp_path / "foreign.marshal"
    foreign.write_bytes(json.dumps(header).encode() + b"\n" + body)
    assert snapshot.read(foreign) == {}
    assert snapshot.read(tmp_path / "missing.marshal") == {}
    assert not snapshot.current(foreign)


def test_normalising_is_the_same_after_a_rebuild_of_the_tables() -> None:
    texts = ["Ｐｒｉｃｅ ⒫ İstanbul", "قیمت‌ها چند است؟", "價格多少", "ＡＢＣ\u200b def", "ß straße"]
    before = [(normalise(t), normalise_with_offsets(t).text) for t in texts]
    snapshot.build()  # caches cleared: the tables are read or built again
    assert [(normalise(t), normalise_with_offsets(t).text) for t in texts] == before


def test_shipped_snapshot_is_current_and_equal_a_fresh_build() -> None:
    """The regeneration check of the shipped snapshot (after a change of the normaliser,
    run tools/build_precompiled.py)."""
    shipped = snapshot.read(snapshot.SNAPSHOT)
    assert shipped, "stale normaliser snapshot: run python tools/build_precompiled.py"
    assert shipped == snapshot.build()
