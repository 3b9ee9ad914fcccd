"""Word counting and keyword extraction on normalised text."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from guardlex.normalise import steps as S
from guardlex.normalise._core import MAX_CHARS, _check, check_length, normalise

#: Unicode Script=Han (Unicode 15.1), as code point ranges. ``tests/normalise`` checks
#: these against the ``regex`` module's ``\p{Han}``.
HAN_RANGES: tuple[tuple[int, int], ...] = (
    (0x2E80, 0x2E99),
    (0x2E9B, 0x2EF3),
    (0x2F00, 0x2FD5),
    (0x3005, 0x3005),
    (0x3007, 0x3007),
    (0x3021, 0x3029),
    (0x3038, 0x303B),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFA6D),
    (0xFA70, 0xFAD9),
    (0x16FE2, 0x16FE3),
    (0x16FF0, 0x16FF6),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B81E),
    (0x2B820, 0x2CEAD),
    (0x2CEB0, 0x2EBE0),
    (0x2EBF0, 0x2EE5D),
    (0x2F800, 0x2FA1D),
    (0x30000, 0x3134A),
    (0x31350, 0x33479),
)

HAN_CLASS = "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in HAN_RANGES)
"""The Han ranges as the inside of a ``regex`` character class."""


def is_han(ch: str) -> bool:
    """True for a Han (Chinese) character: ideographs, radicals, 々 and 〇.

    Chinese has no spaces between words, so word boundaries next to Han characters
    need this test instead of ``\\b``.

    >>> is_han("价"), is_han("價"), is_han("a"), is_han("。")
    (True, True, False, False)
    """
    if len(ch) != 1:
        raise ValueError(f"is_han() expects one character, got {len(ch)}: {ch[:20]!r}")
    cp = ord(ch)
    if cp < 0x2E80:
        return False
    return any(a <= cp <= b for a, b in HAN_RANGES)


_HAN_RUN = rf"[{HAN_CLASS}]+"
_ALNUM = r"[\p{L}\p{N}]"
_RUNS = rf"([{HAN_CLASS}]+)|([^{HAN_CLASS}]+)"
_KEY_TOKENS = rf"([{HAN_CLASS}]+)|([[\p{{L}}\p{{M}}\p{{N}}]--[{HAN_CLASS}]]+)"


def count_words(text: str) -> int:
    """Count words as docs/normalise.md defines them, on the normalised text.

    Tokens are separated by spaces; punctuation-only tokens count 0; inside a token a
    run of n Han characters counts ceil(2n/3) (an average Chinese word is about 1.5
    characters) and a run of other characters with a letter or digit counts 1.

    >>> count_words("GPT-4o的价格")
    3
    >>> count_words("How much — is it?")
    4
    >>> count_words("請問價格是多少")
    5
    """
    raw = _check(text, "count_words")
    check_length(raw, MAX_CHARS, "count_words")
    s = normalise(raw)
    runs = S._re(_RUNS)
    alnum = S._re(_ALNUM)
    han_run = S._re(_HAN_RUN)
    total = 0
    for token in s.split(" "):
        if not token:
            continue
        if token.isascii():  # no Han: one word if it holds a letter or digit
            total += 1 if any(ch.isalnum() for ch in token) else 0
            continue
        limit = S.timeout_for(token)
        if not han_run.search(token, timeout=limit):
            total += 1 if alnum.search(token, timeout=limit) else 0
            continue
        for m in runs.finditer(token, timeout=limit):
            if m.group(1):
                total += (2 * len(m.group(1)) + 2) // 3
            elif alnum.search(m.group(2), timeout=limit):
                total += 1
    return total


def _private(path: Path) -> bool:
    """A real directory (not a link) that only the current user can read or write."""
    try:
        st = path.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    return not (hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o077))


def jieba_cache_dir() -> Path:
    """Where jieba keeps its dictionary cache: a directory only this user can use.

    jieba's default is ``jieba.cache`` in the shared temporary directory, where another
    user could plant a cache that changes how Chinese is segmented. guardlex uses
    ``jieba`` under its cache directory (``$GUARDLEX_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/guardlex``, else ``~/.cache/guardlex``), created with mode 0700
    (an existing one of the user's own is set to 0700) and used only if it is a
    directory owned by the user that nobody else can read or write. Otherwise (or with
    ``GUARDLEX_CACHE_DIR=off``) a fresh private temporary directory is used, and the
    cache is rebuilt once per process.
    """
    env = os.environ.get("GUARDLEX_CACHE_DIR", "")
    if env.lower() not in ("off", "0", "none"):
        if env:
            base = Path(env)
        else:
            xdg = os.environ.get("XDG_CACHE_HOME")
            base = Path(xdg) if xdg else Path.home() / ".cache" / "guardlex"
            if xdg:
                base = base / "guardlex"
        path = base / "jieba"
        with contextlib.suppress(OSError):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = path.lstat()
            if stat.S_ISDIR(st.st_mode) and (not hasattr(os, "getuid") or st.st_uid == os.getuid()):
                path.chmod(0o700)  # our own directory: close it to others
        if _private(path):
            cache = path / _JIEBA_CACHE
            if not cache.exists() or _private_file(cache):
                return path
    return Path(tempfile.mkdtemp(prefix="guardlex-jieba-"))


def _private_file(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    return not hasattr(os, "getuid") or (st.st_uid == os.getuid() and not st.st_mode & 0o022)


_JIEBA_CACHE = "jieba.cache"


@lru_cache(maxsize=1)
def _jieba() -> ModuleType:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.dt.tmp_dir = str(jieba_cache_dir())
    jieba.dt.cache_file = _JIEBA_CACHE
    jieba.initialize()
    return jieba


def keywords(text: str) -> list[str]:
    """Keyword tokens for retrieval, in order, duplicates kept.

    Normalised whole words (letters with their combining marks, and digits;
    punctuation separates and is dropped) for space-delimited languages; runs of Han
    characters are segmented with jieba (its dictionary loads on the first call).

    >>> keywords("Wie viel kostet's? ¿Cuánto?")
    ['wie', 'viel', 'kostet', 's', 'cuanto']
    """
    raw = _check(text, "keywords")
    check_length(raw, MAX_CHARS, "keywords")
    s = normalise(raw)
    out: list[str] = []
    # the matches are gathered first: the regex time limit runs while its iterator is
    # alive, and jieba's first call (its dictionary loads) must not count against it
    for m in list(S._re(_KEY_TOKENS).finditer(s, timeout=S.timeout_for(s))):
        if m.group(1):
            out.extend(w for w in _jieba().lcut(m.group(1)) if w.strip())
        else:
            out.append(m.group(2))
    return out
