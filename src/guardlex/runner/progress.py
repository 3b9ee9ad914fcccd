"""A minimal progress bar on stderr (stdout stays clean for reports and JSON)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws one line on a terminal; on a pipe or CI log, prints only the final line."""

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last = 0.0
        self._done = False

    def update(self, done: int, total: int, note: str = "") -> None:
        if not self.enabled or self._done:
            return
        if self.tty:
            now = time.perf_counter()
            if done < total and now - self._last < 0.05:
                return
            self._last = now
            width = 30
            filled = width * done // max(total, 1)
            bar = "#" * filled + "." * (width - filled)
            tail = f" {note[-40:]}" if note else ""
            self.stream.write(f"\r{self.label} [{bar}] {done}/{total}{tail}\x1b[K")
            self.stream.flush()
        if done >= total:
            self.finish(f"{done}/{total}")

    def finish(self, summary: str = "") -> None:
        if not self.enabled or self._done:
            return
        self._done = True
        elapsed = time.perf_counter() - self.start
        prefix = "\r" if self.tty else ""
        self.stream.write(
            f"{prefix}{self.label}: {summary} in {elapsed:.1f} s\x1b[K\n"
            if self.tty
            else f"{self.label}: {summary} in {elapsed:.1f} s\n"
        )
        self.stream.flush()
