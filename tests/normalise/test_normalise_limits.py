"""Documented input limits: every public function refuses what it cannot bound."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from guardlex.errors import InputTooLargeError
from guardlex.normalise import (
    MAX_CHARS,
    MAX_EXPANSION,
    MAX_OFFSETS_CHARS,
    MAX_VARIANTS_CHARS,
    confusable_fold,
    count_words,
    explain,
    keywords,
    normalise,
    normalise_with_offsets,
    steps,
    strip_nukta,
    variants,
    visible_text,
)
from guardlex.normalise import words as W

DOC = Path(__file__).resolve().parents[2] / "docs" / "normalise.md"


def test_the_docs_quote_the_constants() -> None:
    doc = DOC.read_text("utf-8")
    for value in (MAX_CHARS, MAX_OFFSETS_CHARS, MAX_VARIANTS_CHARS):
        assert f"{value:,}" in doc, value
    assert f"{MAX_EXPANSION}×" in doc or f"{MAX_EXPANSION} times" in doc


@pytest.mark.parametrize(
    ("func", "limit"),
    [
        (normalise, MAX_CHARS),
        (count_words, MAX_CHARS),
        (keywords, MAX_CHARS),
        (visible_text, MAX_CHARS),
        (lambda t: confusable_fold(t, {"price"}), MAX_CHARS),
        (strip_nukta, MAX_CHARS),
        (steps.nfkc, MAX_CHARS),
        (normalise_with_offsets, MAX_OFFSETS_CHARS),
        (explain, MAX_OFFSETS_CHARS),
        (variants, MAX_VARIANTS_CHARS),
    ],
)
def test_too_long_is_refused_with_the_limit_in_the_message(func: object, limit: int) -> None:
    assert callable(func)
    func("x" * limit)  # at the limit: accepted
    with pytest.raises(InputTooLargeError, match=f"{limit:,}"):
        func("x" * (limit + 1))


def test_expanding_input_is_bounded() -> None:
    # One U+FDFA is 18 characters under NFKC: 10 MB of it would be 180 M characters.
    bomb = "\ufdfa" * (MAX_CHARS // 2)
    with pytest.raises(InputTooLargeError, match="NFKC"):
        normalise(bomb)
    with pytest.raises(InputTooLargeError, match="NFKC"):
        steps.nfkc(bomb)
    with pytest.raises(InputTooLargeError, match="NFKC"):
        normalise_with_offsets("\ufdfa" * (MAX_OFFSETS_CHARS // 2))
    with pytest.raises(InputTooLargeError):
        count_words("\ufdfa" * (MAX_CHARS + 1))
    # a little expansion is fine
    assert normalise("\ufdfa" * 1000).startswith("صلی الله علیه وسلم")


def test_jieba_cache_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(tmp_path / "cache"))
    d = W.jieba_cache_dir()
    assert d == tmp_path / "cache" / "jieba"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    keywords("请问价格是多少")
    import jieba

    assert Path(jieba.dt.tmp_dir) != Path(os.environ.get("TMPDIR", "/tmp"))
    assert W._private(Path(jieba.dt.tmp_dir))


def test_jieba_cache_refuses_a_shared_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    (shared / "jieba").mkdir(parents=True)
    os.chmod(shared / "jieba", 0o777)
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", str(shared))
    d = W.jieba_cache_dir()  # our own directory: closed to others, then used
    assert d == shared / "jieba" and stat.S_IMODE(d.stat().st_mode) == 0o700
    # a link to a directory is never used
    (tmp_path / "elsewhere" / "jieba").mkdir(parents=True)
    os.rmdir(shared / "jieba")
    os.symlink(tmp_path / "elsewhere" / "jieba", shared / "jieba")
    d = W.jieba_cache_dir()
    assert d != shared / "jieba" and W._private(d)
    os.unlink(shared / "jieba")
    (shared / "jieba").mkdir()
    # a planted cache file that others may write is refused too
    os.chmod(shared / "jieba", 0o700)
    planted = shared / "jieba" / "jieba.cache"
    planted.write_bytes(b"x")
    os.chmod(planted, 0o666)
    assert W.jieba_cache_dir() != shared / "jieba"
    monkeypatch.setenv("GUARDLEX_CACHE_DIR", "off")
    assert W._private(W.jieba_cache_dir())
