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
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, TypeVar

from .files import remove_temp_files

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
        self.conn.send((index, job))

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


def run_isolated(jobs: Sequence[J], handle: Callable[[J], R], *, workers: int,
                 on_failure: Callable[[J, Failure], R], timeout: Optional[float] = None,
                 heavy: Optional[Sequence[bool]] = None, paths: Optional[Sequence[str]] = None,
                 initializer: Optional[Callable[[], None]] = None,
                 progress: Callable[[int], None] = lambda n: None) -> List[R]:
    """``handle(job)`` for every job, in worker processes; results in the order of ``jobs``.

    A job whose worker died or ran past ``timeout`` seconds gets ``on_failure(job, Failure)``
    instead. At most one ``heavy`` job (a big file) is in flight at a time, so that two
    workers never hold a big parse each. ``paths[i]`` is the file job ``i`` may write: after
    a worker is killed, its temporary files beside that file are removed.
    """
    results: Dict[int, R] = {}
    todo: Deque[int] = deque(range(len(jobs)))
    heavy = heavy or [False] * len(jobs)
    context = _context()
    pool: List[_Worker] = []
    try:
        pool = [_Worker(context, handle, initializer) for _ in range(max(1, min(workers, len(jobs))))]
    except OSError:  # no process to be had: run here, unprotected from crashes but not from exceptions
        for worker in pool:
            worker.kill()
        out = [handle(job) for job in jobs]
        progress(len(out))
        return out

    def next_job(worker: _Worker) -> bool:
        busy_heavy = any(heavy[i] for w in pool for i in w.inflight)
        for position, index in enumerate(todo):
            if not heavy[index] or not busy_heavy:
                del todo[position]
                worker.send(index, jobs[index])
                return True
        return False

    def retire(worker: _Worker, failure: Failure) -> None:
        """The worker is gone: its current job (if any) fails, the ones queued behind it go back."""
        worker.kill()
        if worker.inflight:
            index = worker.inflight.popleft()
            results[index] = on_failure(jobs[index], failure)
            progress(1)
            todo.extendleft(reversed(worker.inflight))
            if paths is not None:
                remove_temp_files(paths[index], worker.process.pid)
        pool.remove(worker)
        if todo:
            pool.append(_Worker(context, handle, initializer))

    try:
        while todo or any(w.inflight for w in pool):
            for worker in pool:
                while len(worker.inflight) < QUEUE_DEPTH and todo and next_job(worker):
                    pass
            now = time.monotonic()
            deadlines = [w.since + timeout for w in pool if w.inflight] if timeout else []
            ready = wait([w.conn for w in pool] + [w.process.sentinel for w in pool],
                         max(0.0, min(deadlines) - now) if deadlines else None)
            for worker in list(pool):
                if worker.conn in ready or worker.process.sentinel in ready:
                    if not _receive(worker, results, jobs, on_failure, progress) or not worker.process.is_alive():
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
            if paths is not None:
                for index in worker.inflight:
                    remove_temp_files(paths[index], worker.process.pid)
        raise
    for worker in pool:
        worker.stop()
    return [results[i] for i in range(len(jobs))]


def _receive(worker: _Worker, results: Dict[int, Any], jobs: Sequence[Any],
             on_failure: Callable[[Any, Failure], Any], progress: Callable[[int], None]) -> bool:
    """Take every answer waiting on the worker's pipe; False when the worker is dead."""
    try:
        while worker.conn.poll():
            index, ok, value = worker.conn.recv()
            worker.inflight.remove(index)
            worker.since = time.monotonic()
            results[index] = value if ok else on_failure(jobs[index], Failure("error", value))
            progress(1)
    except (EOFError, OSError):
        return False
    return True
