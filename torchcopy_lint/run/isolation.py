"""Lint in worker processes that may die: a crash or a hang costs one file, never the run.

The parent hands jobs to workers, at most ``QUEUE_DEPTH`` at a time each, over a
pipe, and watches every worker's pipe and process sentinel. A worker answers its
jobs in order, so the oldest unanswered job is the one it is working on:

- a worker that dies (a segmentation fault in a native parser, ``os._exit``, the
  OOM killer) takes only that file with it: the file gets TCL003, the jobs queued
  behind it go back to the queue and a fresh worker takes its place;
- a file that runs past the per-file time budget gets TCL004; its worker is killed
  and replaced (a native parse cannot be interrupted any other way);
- on Ctrl-C the workers get SIGINT (so that a file being written is finished or
  left untouched, see fixer.write_atomically), then SIGKILL after a grace period.

With ``--jobs 1`` there is one worker, so ``-j1`` is protected the same way. The
worker is forked (Linux) after the parent imported what it needs; elsewhere the
platform's default start method is used. If no process can be started at all,
jobs run in this process (still guarded against exceptions by the handler).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections import deque
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, TypeVar

from ..source.files import remove_temp_files

J = TypeVar("J")
R = TypeVar("R")

QUEUE_DEPTH = 2  # jobs handed to a worker ahead of its answers, to hide the pipe's latency
GRACE = 1.0  # seconds workers get to stop on Ctrl-C before they are killed


class Failure:
    """Why a job got no answer: ``kind`` is "crash" or "timeout"."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail


def _interrupted(signum: int, frame: Any) -> None:
    """The first Ctrl-C stops the worker's job; later ones (the terminal's and the parent's
    both arrive) are ignored, so none can break the worker's clean exit with a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Ctrl-C arrives after the block: a KeyboardInterrupt raised in code a module runs through
    ``exec`` (dataclasses do, on import) makes CPython 3.11 end the process by SIGINT even after
    the CLI handled it (exit status -2 instead of 130)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, ValueError, OSError):  # not on this platform, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _serve(conn: Connection, handle: Callable[[Any], Any], initializer: Optional[Callable[[], None]]) -> None:
    """A worker's loop: answer ``(index, job)`` with ``(index, True, result)`` until told to stop."""
    signal.signal(signal.SIGINT, _interrupted)
    try:
        if initializer is not None:
            initializer()
        while True:
            message = conn.recv()
            if message is None:
                return
            index, job = message
            try:
                conn.send((index, True, handle(job)))
            except Exception as error:  # the handler should not raise; if it does, the parent reports it
                conn.send((index, False, f"{type(error).__name__}: {error}"))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass
    finally:
        try:
            conn.close()
        except BaseException:  # a signal landing here must not print a traceback either
            pass
    # exit without running atexit handlers inherited from the parent (fork)
    os._exit(0)


def _signal_name(exitcode: Optional[int]) -> str:
    if exitcode is None:
        return "it stopped answering"
    if exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"it exited with status {exitcode}"


class _Worker:
    def __init__(self, context: Any, handle: Callable[[Any], Any], initializer: Optional[Callable[[], None]]) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, handle, initializer), daemon=True)
        self.process.start()
        child.close()
        self.inflight: Deque[int] = deque()
        self.since = time.monotonic()  # when the job at the head of ``inflight`` started

    def send(self, index: int, job: Any) -> None:
        if not self.inflight:
            self.since = time.monotonic()
        self.inflight.append(index)
        try:
            self.conn.send((index, job))
        except OSError:  # it died since it last answered (its pipe is closed): the wait in ``run_isolated``
            pass  # sees its sentinel, and ``retire`` fails the job it was running and hands these back

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(GRACE)
        self.kill()


def _context() -> Any:
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def run_isolated(jobs: Iterable[J], handle: Callable[[J], R], *, workers: int,
                 on_failure: Callable[[J, Failure], R], timeout: Optional[float] = None,
                 heavy: Callable[[J], bool] = lambda job: False,
                 path: Callable[[J], Optional[str]] = lambda job: None,
                 initializer: Optional[Callable[[], None]] = None,
                 progress: Callable[[int], None] = lambda n: None) -> List[R]:
    """``handle(job)`` for every job, in worker processes; results in the order of ``jobs``.

    ``jobs`` is consumed as workers need work, so a caller's generator can read and filter files
    while the first ones are linted; a worker is started when there is a job for it. A job whose
    worker died or ran past ``timeout`` seconds gets ``on_failure(job, Failure)`` instead. At most
    one ``heavy`` job (a big file) is in flight at a time, so that two workers never hold a big parse
    each. ``path(job)`` is the file the job may write: after a worker is killed, its temporary files
    beside that file are removed.
    """
    source = iter(jobs)
    taken: Dict[int, J] = {}  # jobs pulled from ``source`` and not answered yet
    is_heavy: Dict[int, bool] = {}
    results: Dict[int, R] = {}
    todo: Deque[int] = deque()  # taken, not handed to a worker (or handed back by a dead one)
    exhausted = False
    context = _context()
    pool: List[_Worker] = []

    def take() -> bool:
        """Pull the next job from ``source`` into ``todo``; False when there is none."""
        nonlocal exhausted
        if exhausted:
            return False
        job = next(source, _END)
        if job is _END:
            exhausted = True
            return False
        index = len(is_heavy)
        taken[index] = job  # type: ignore[assignment]
        is_heavy[index] = heavy(job)  # type: ignore[arg-type]
        todo.append(index)
        return True

    def answer(index: int, result: R) -> None:
        results[index] = result
        del taken[index]  # its content is no longer needed
        progress(1)

    def next_job(worker: _Worker) -> bool:
        busy_heavy = any(is_heavy[i] for w in pool for i in w.inflight)
        for position, index in enumerate(todo):
            if not is_heavy[index] or not busy_heavy:
                del todo[position]
                worker.send(index, taken[index])
                return True
        while take():  # every job taken is a heavy one waiting: look further
            if not is_heavy[todo[-1]] or not busy_heavy:
                worker.send(todo[-1], taken[todo.pop()])
                return True
        return False

    def retire(worker: _Worker, failure: Failure) -> None:
        """The worker is gone: its current job (if any) fails, the ones queued behind it go back."""
        worker.kill()
        if worker.inflight:
            index = worker.inflight.popleft()
            job = taken[index]
            answer(index, on_failure(job, failure))
            todo.extendleft(reversed(worker.inflight))
            written = path(job)
            if written is not None:
                remove_temp_files(written, worker.process.pid)
        pool.remove(worker)

    try:
        while True:
            while len(pool) < max(1, workers) and (todo or take()):
                try:
                    pool.append(_Worker(context, handle, initializer))
                except OSError:  # no process to be had
                    if pool:
                        break
                    return _run_here(taken, todo, source, handle, results, progress)
                next_job(pool[-1])  # one job each first, so that two jobs go to two workers
            for worker in pool:
                while len(worker.inflight) < QUEUE_DEPTH and next_job(worker):
                    pass
            if not any(w.inflight for w in pool):
                if todo or take():
                    continue
                break
            now = time.monotonic()
            deadlines = [w.since + timeout for w in pool if w.inflight] if timeout else []
            ready = wait([w.conn for w in pool] + [w.process.sentinel for w in pool],
                         max(0.0, min(deadlines) - now) if deadlines else None)
            for worker in list(pool):
                if worker.conn in ready or worker.process.sentinel in ready:
                    if not _receive(worker, taken, answer, on_failure) or not worker.process.is_alive():
                        worker.process.join()
                        retire(worker, Failure("crash", _signal_name(worker.process.exitcode)))
                elif timeout and worker.inflight and time.monotonic() - worker.since >= timeout:
                    retire(worker, Failure("timeout", f"over {timeout:g} s"))
    except BaseException:  # Ctrl-C (or a bug here): stop the workers, never leave them behind
        for worker in pool:
            if worker.process.is_alive() and worker.process.pid:
                try:
                    os.kill(worker.process.pid, signal.SIGINT)
                except OSError:
                    pass
        deadline = time.monotonic() + GRACE
        for worker in pool:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            worker.kill()
            for index in worker.inflight:
                written = path(taken[index])
                if written is not None:
                    remove_temp_files(written, worker.process.pid)
        raise
    for worker in pool:
        worker.stop()
    return [results[i] for i in range(len(results))]


_END = object()


def _run_here(taken: Dict[int, Any], todo: Deque[int], source: Iterator[Any], handle: Callable[[Any], Any],
              results: Dict[int, Any], progress: Callable[[int], None]) -> List[Any]:
    """No worker process could be started: run the jobs in this process, unprotected from crashes
    (``handle`` itself reports exceptions)."""
    for index in sorted(todo):
        results[index] = handle(taken.pop(index))
        progress(1)
    for job in source:
        results[len(results)] = handle(job)
        progress(1)
    return [results[i] for i in range(len(results))]


def _receive(worker: _Worker, taken: Dict[int, Any], answer: Callable[[int, Any], None],
             on_failure: Callable[[Any, Failure], Any]) -> bool:
    """Take every answer waiting on the worker's pipe; False when the worker is dead."""
    try:
        while worker.conn.poll():
            index, ok, value = worker.conn.recv()
            worker.inflight.remove(index)
            worker.since = time.monotonic()
            answer(index, value if ok else on_failure(taken[index], Failure("error", value)))
    except (EOFError, OSError):
        return False
    return True
