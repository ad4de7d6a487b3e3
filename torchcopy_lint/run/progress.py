"""The progress bar of long runs (runner.py): on stderr, only on a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    """A progress bar on stderr for long runs on a terminal; inert otherwise."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and total > 200 and sys.stderr.isatty()
        self.done = 0
        self._last = 0.0

    def advance(self, n: int = 1) -> None:
        if not self.enabled:
            return
        self.done += n
        now = time.monotonic()
        if now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        width = 30
        filled = width * self.done // max(self.total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()
