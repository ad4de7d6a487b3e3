"""When to lint a document after it changes: debounced, one lint per document at a time.

An edit after a quiet spell (no change for ``delay``) is linted at once (the
leading edge); edits in a burst restart a ``delay`` timer and the burst is linted
once, after it (the trailing edge). A change that arrives while its document is
being linted marks it for one more lint when that one ends, so no document ever
has two lints queued, and a result that is stale on arrival is dropped by the
caller (it compares document versions).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Dict, Set

log = logging.getLogger(__name__)


class Debouncer:
    def __init__(self, run: Callable[[str], Awaitable[None]], delay: float) -> None:
        self.run = run
        self.delay = delay
        self._timers: Dict[str, asyncio.TimerHandle] = {}
        self._running: Dict[str, "asyncio.Future[None]"] = {}
        self._again: Set[str] = set()
        self._last_change: Dict[str, float] = {}

    def changed(self, key: str) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        quiet = now - self._last_change.get(key, float("-inf")) >= self.delay
        self._last_change[key] = now
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
            quiet = False
        if quiet:
            self.now(key)
        else:
            self._timers[key] = loop.call_later(self.delay, self._fire, key)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self.now(key)

    def now(self, key: str) -> "asyncio.Future[None]":
        """Lint ``key`` as soon as its current lint (if any) ends; the future of the lint that will see this request."""
        running = self._running.get(key)
        if running is not None:
            self._again.add(key)
            return running
        task = asyncio.ensure_future(self._guarded(key))
        self._running[key] = task
        task.add_done_callback(lambda _: self._done(key))
        return task

    async def _guarded(self, key: str) -> None:
        try:
            await self.run(key)
        except asyncio.CancelledError:
            raise
        except Exception:  # one document's failure must not stop the others
            log.exception("linting %s failed", key)

    def _done(self, key: str) -> None:
        self._running.pop(key, None)
        if key in self._again:
            self._again.discard(key)
            self.now(key)

    def forget(self, key: str) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        self._again.discard(key)
        self._last_change.pop(key, None)
