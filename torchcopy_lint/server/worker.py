"""Linting off the message loop, in a child process that a crashing file cannot take the server down with.

LibCST's native parser can overflow its stack (a segfault, not an exception) on
pathological input, and a big file holds the GIL for tens of milliseconds; so the
server never lints in its own process. One child process does it (it keeps the
engine imported and a small result cache warm); if it dies, the job that killed it
fails with :class:`WorkerCrashed` and the next job starts a fresh child.

The functions below ``# --- in the child`` run in the worker; the engine is
imported there only. ``files_changed`` is the hook for caches that depend on other
files (the project index): see :data:`INVALIDATORS`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging
import multiprocessing
import os
import sys
import threading
import tokenize
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from ..diagnostics import Diagnostic

log = logging.getLogger(__name__)


class WorkerCrashed(Exception):
    """The worker process died while running a job (e.g. the parser overflowed its stack)."""


class WorkerTimeout(WorkerCrashed):
    """A job ran past its time budget; the worker was killed (and is restarted on the next job)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"over the {seconds:g} s budget")
        self.seconds = seconds


class LintWorker:
    """A single-process pool, restarted after a crash. ``await worker.run(fn, *args)``."""

    def __init__(self) -> None:
        self._pool: Optional[ProcessPoolExecutor] = None
        self._lock = threading.Lock()
        self._one_at_a_time: Optional[asyncio.Lock] = None
        self._failed: Dict[int, None] = {}  # hashes of jobs that killed or hung a worker (bounded)

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the server has threads (pygls's reader, asyncio's executor)
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_init_child)
            return self._pool

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    async def run(self, fn: Callable, *args, timeout: Optional[float] = None):
        """``fn(*args)`` in the worker, killed after ``timeout`` seconds (None or 0: no limit).

        Jobs go one at a time, so that a crash is blamed on the job that caused it, not on the
        others queued with it; a job that crashed or hung a worker is not run again."""
        try:
            key: Optional[int] = hash((fn.__name__, args))
        except TypeError:  # unhashable arguments: such a job is not remembered
            key = None
        if key is not None and key in self._failed:
            raise WorkerCrashed(f"{fn.__name__} crashed the worker before")
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()
        async with self._one_at_a_time:
            pool = self._get_pool()
            future = asyncio.wrap_future(pool.submit(fn, *args))
            try:
                return await asyncio.wait_for(future, timeout or None)
            except asyncio.TimeoutError:
                log.error("%s ran past its %g s budget; killing the lint worker", fn.__name__, timeout)
                self._kill(pool)
                self._remember(key)
                raise WorkerTimeout(timeout) from None
            except BrokenProcessPool as error:
                log.error("lint worker died running %s; starting a new one", fn.__name__)
                self._discard(pool)
                self._remember(key)
                raise WorkerCrashed(str(error)) from error

    def _remember(self, key: Optional[int]) -> None:
        if key is None:
            return
        self._failed[key] = None
        while len(self._failed) > 64:
            del self._failed[next(iter(self._failed))]

    def _kill(self, pool: ProcessPoolExecutor) -> None:
        processes = list(getattr(pool, "_processes", {}).values())  # no public way before Python 3.14
        self._discard(pool)
        for process in processes:
            process.kill()

    def warm_up(self) -> None:
        """Start the child and import the engine there, so that the first lint does not pay for it."""
        self._get_pool().submit(warm)

    def close(self) -> None:
        """Stop the worker now (a job still running is killed: exit must not wait on a hung file)."""
        pool = self._pool
        if pool is not None:
            self._kill(pool)


# --- in the child ---------------------------------------------------------------------------------

INVALIDATORS: List[Callable[[Sequence[str]], None]] = []  # _forget_project is added below
"""Called in the worker with the paths the client reports changed on disk (didChangeWatchedFiles).

A cache that depends on files other than the linted one (the project index) registers here."""


def _init_child() -> None:
    # fd 1 is the LSP channel, inherited: anything printed here would corrupt it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    from ..walk import remember_statements

    remember_statements()  # answers per unchanged statement, across a document's versions


def warm() -> None:
    from .. import engine, rules  # noqa: F401
    from ..fixing import fixer  # noqa: F401


def engine_source(text: str) -> Union[str, bytes]:
    """What to hand the engine for an editor buffer: UTF-8 bytes (the CLI's pruned path) unless the
    file declares another encoding, in which case the text itself."""
    encoding = declared_encoding(text)
    return text.encode("utf-8", "surrogatepass") if encoding == "utf-8" else text


def declared_encoding(text: str) -> str:
    head = "\n".join(text.split("\n", 2)[:2]).encode("utf-8", "replace") + b"\n"
    try:
        name, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
    except SyntaxError:  # an unknown encoding: the engine reports it
        return "unknown"
    return "utf-8" if name in ("utf-8", "utf-8-sig") else name


def _rule_types(codes: FrozenSet[str]):
    from ..run.runner import _rule_types as rule_types

    return rule_types(codes)


_reparsers: Dict[str, object] = {}  # path -> its document's Reparser (reparse.py), newest last
_OPEN_DOCUMENTS = 16


def _reparser(path: str):
    """The document's Reparser: an edit re-parses only the top-level statements it touched."""
    from ..parse.reparse import Reparser

    found = _reparsers.pop(path, None) or Reparser()
    _reparsers[path] = found
    while len(_reparsers) > _OPEN_DOCUMENTS:
        del _reparsers[next(iter(_reparsers))]
    return found


@lru_cache(maxsize=16)
def _lint(source: Union[str, bytes], path: str, codes: FrozenSet[str]) -> List[Diagnostic]:
    from ..run.guard import lint_in_host  # engine.lint_source; a bug of ours becomes TCL003, never an exception

    # no pruning: the reparser re-uses whole statements of the full text, which pays more on an edit
    return lint_in_host(source, path, _rule_types(codes), prune=False, reparser=_reparser(path))


def lint_text(text: str, path: str, codes: FrozenSet[str]) -> List[Diagnostic]:
    """The CLI's diagnostics for an editor buffer (cached: a save or a re-open costs nothing)."""
    _refresh_project()
    return _lint(engine_source(text), path, codes)


def _refresh_project() -> None:
    """Drop cached results if a file the project index answered from changed on disk (a stat per file
    it used), so that results stay right even when the client does not report file changes."""
    from ..semantic.project import ProjectIndex

    if ProjectIndex.refresh():
        _lint.cache_clear()


def _forget_project(paths: Sequence[str]) -> None:
    from ..semantic.project import ProjectIndex

    ProjectIndex.clear()


def fix_text(text: str, path: str, codes: FrozenSet[str], unsafe: bool = False) -> Optional[str]:
    """``--fix`` applied to a buffer: the fixes its diagnostics show (``lint_text``'s, with the file's
    project index); None when nothing changes or a fix would break the parse."""
    from ..fixing.fixer import FixError, fix_with

    encoding = declared_encoding(text)
    encoding = "utf-8" if encoding == "unknown" else encoding
    _refresh_project()
    try:
        data = text.encode(encoding)
        # the engine reads the buffer as lint_text hands it over, so that the fixes are the ones shown
        fixed = fix_with(data, lambda source: _lint(engine_source(source.decode(encoding)), path, codes),
                         unsafe).source
    except (FixError, UnicodeError, LookupError, SyntaxError) as error:
        log.warning("fix all: %s", error)
        return None
    except Exception:  # a parse error of LibCST's own kind, or a bug: no fix rather than a dead worker
        log.exception("fix all failed")
        return None
    if fixed == data:
        return None
    return fixed.decode(encoding)


INVALIDATORS.append(_forget_project)


def files_changed(paths: Sequence[str]) -> None:
    """Forget what ``paths`` may have changed: cached results and the project index's answers."""
    _lint.cache_clear()
    for invalidate in INVALIDATORS:
        try:
            invalidate(paths)
        except Exception:
            log.exception("cache invalidation failed")


def lint_cells(cells: Tuple[str, ...], path: str, codes: FrozenSet[str]) -> List[Tuple[int, Diagnostic]]:
    """A notebook's code cells, linted as one program: (cell index, diagnostic in the cell's lines)."""
    from ..notebook import lint_cells_with  # the CLI's mapping: IPython syntax, broken cells

    _refresh_project()
    found = lint_cells_with(list(enumerate(cells)), path, lambda source, name: _lint(source, name, codes))
    return [(d.cell, dataclasses.replace(d, cell=None)) for d in found]


def fix_cells(cells: Tuple[str, ...], path: str, codes: FrozenSet[str]) -> Optional[List[str]]:
    """The cells' texts after ``--fix`` on the notebook (the fixes ``lint_cells`` shows); None when nothing
    changes or it cannot be fixed."""
    from ..fixing.fixer import FixError
    from ..notebook import fix_cells_with

    _refresh_project()
    try:
        texts, applied, _ = fix_cells_with(list(enumerate(cells)), path,
                                           lambda source, name: _lint(source, name, codes))
    except FixError as error:
        log.warning("fix all (notebook): %s", error)
        return None
    return texts if applied else None
