"""Run the engine over files: discovery, cache, parallel workers, fixing.

Front ends (the CLI, tests) call ``run``; the flake8 plugin calls the engine
directly. Workers only ever receive a path and the enabled codes and return
plain diagnostics, gathered and sorted in the parent for deterministic output.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from .cache import ResultCache, cache_key, dependencies_current
from .codes import RULE_CODES as ALL_CODES
from .codes import may_match
from .config import Settings
from .diagnostics import Applicability, Diagnostic

# The engine, the fixer and the rules (and with them LibCST) are imported on first
# use, so that a run answered entirely by the cache never pays for them.
READ_ERROR_CODE = "TCL002"


@dataclass
class FileReport:
    path: str
    diagnostics: List[Diagnostic]
    fixed: int = 0
    diff: str = ""
    error: str = ""
    content: Optional[bytes] = None  # the (fixed) source, for stdin only
    key: str = ""  # cache key of the content that was linted, when caching
    uses: Dict[str, str] = field(default_factory=dict)  # other files the result depended on -> digest
    fixed_codes: Dict[str, int] = field(default_factory=dict)  # how many of each code --fix removed


@dataclass
class RunReport:
    files: List[FileReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> List[Diagnostic]:
        out = [d for f in self.files for d in f.diagnostics]
        out.sort(key=lambda d: d.sort_key)
        return out

    @property
    def fixed(self) -> int:
        return sum(f.fixed for f in self.files)


def discover(paths: Sequence[str], settings: Settings) -> List[str]:
    """Python files under ``paths``: directories recurse over ``*.py`` minus excludes; files given by name are
    kept (unless ``force-exclude`` excludes them or a directory above them)."""
    found: List[str] = []
    seen = set()
    for path in paths:
        if settings.is_force_excluded(path):
            continue
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not settings.is_excluded(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if name.endswith(".py") and not settings.is_excluded(full) and full not in seen:
                        seen.add(full)
                        found.append(full)
        elif path not in seen:
            seen.add(path)
            found.append(path)
    return found


def _rule_types(codes: FrozenSet[str]):
    from .rules import RULES_BY_CODE

    return [RULES_BY_CODE[c] for c in ALL_CODES if c in codes]


def _read_error(path: str, error: BaseException) -> Diagnostic:
    reason = getattr(error, "strerror", None) or str(error)
    return Diagnostic(path, 1, 1, 1, 1, READ_ERROR_CODE, f"cannot read file: {reason}")


def may_match_any(content: bytes, codes: FrozenSet[str]) -> bool:
    """The rules' prefilter: False means no enabled rule can report anything in ``content``."""
    return any(may_match(code, content) for code in codes)


def _lint_bytes(content: bytes, path: str, codes: FrozenSet[str], project=None) -> List[Diagnostic]:
    if not may_match_any(content, codes):
        return []  # the engine (and LibCST) is not even imported
    from .engine import lint_source

    return lint_source(content, path, _rule_types(codes), project=project)


def _has_applicable_fix(diagnostics: Iterable[Diagnostic], unsafe: bool) -> bool:
    return any(d.fix is not None and (unsafe or d.fix.applicability is Applicability.SAFE) for d in diagnostics)


@dataclass(frozen=True)
class Job:
    path: str
    codes: FrozenSet[str]
    mode: str = "check"  # check | fix | diff
    unsafe: bool = False
    content: Optional[bytes] = None  # stdin only; files are read by the worker
    cache: bool = False  # whether the parent wants the cache key of what was linted
    origin: Optional[str] = None  # where stdin's content belongs (--stdin-filename): gives its project
    summary_cache: Optional[str] = None  # the cache directory, for the project index's summaries


def _project_index(job: Job):
    """The project index of the file (of ``--stdin-filename`` for stdin), summaries cached with results."""
    from .semantic.project import ProjectIndex, configure_summary_cache

    configure_summary_cache(job.summary_cache)
    return ProjectIndex.for_path(job.origin if job.path == "-" else job.path)


def process(job: Job) -> FileReport:
    """Lint (and maybe fix) one file. Never raises for bad input."""
    content = job.content
    if content is None:
        try:
            with open(job.path, "rb") as handle:
                content = handle.read()
        except OSError as error:
            return FileReport(job.path, [_read_error(job.path, error)])
    key = cache_key(content, job.codes) if job.cache else ""
    project = _project_index(job) if may_match_any(content, job.codes) else None
    diagnostics = _lint_bytes(content, job.path, job.codes, project)
    if job.mode == "check" or not _has_applicable_fix(diagnostics, job.unsafe):
        return FileReport(job.path, diagnostics, content=content if job.path == "-" else None, key=key,
                          uses=project.dependencies() if project is not None else {})
    from .fixer import FixError, fix_source, write_atomically

    try:
        result = fix_source(content, _rule_types(job.codes), unsafe=job.unsafe)
    except FixError as error:
        return FileReport(job.path, diagnostics, error=f"{job.path}: {error}")
    remaining = _lint_bytes(result.source, job.path, job.codes, project)
    report = FileReport(job.path, remaining, fixed=result.applied,
                        content=result.source if job.path == "-" else None,
                        fixed_codes=_fixed_codes(diagnostics, remaining))
    if job.mode == "diff":
        report.diagnostics = diagnostics
        report.fixed = 0
        report.diff = unified_diff(job.path, content, result.source)
        report.key = key
        report.uses = project.dependencies() if project is not None else {}
    elif job.path != "-" and result.source != content:
        try:
            write_atomically(job.path, result.source)
        except OSError as error:
            return FileReport(job.path, diagnostics, error=f"{job.path}: cannot write fixes: {error}")
    return report


def _fixed_codes(before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for d in before:
        counts[d.code] = counts.get(d.code, 0) + 1
    for d in after:
        counts[d.code] = counts.get(d.code, 0) - 1
    return {code: n for code, n in sorted(counts.items()) if n > 0}


def process_batch(jobs: Sequence[Job]) -> List[FileReport]:
    return [process(job) for job in jobs]


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, path, path))


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


def _worker_init() -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))


BIG_FILE = 256_000  # bytes; big files go to one worker so that two never parse one each at once


def _batches(jobs: List[Job], workers: int) -> List[List[Job]]:
    """Big files first, all in one batch; the rest in small batches for load balance."""
    sizes = {job.path: _size(job.path) for job in jobs}
    big = [job for job in jobs if sizes[job.path] > BIG_FILE]
    small = [job for job in jobs if sizes[job.path] <= BIG_FILE]
    size = max(1, min(16, len(small) // (workers * 8) or 1))
    return ([big] if big else []) + [small[i:i + size] for i in range(0, len(small), size)]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run(paths: Sequence[str], settings: Settings, *, mode: str = "check", unsafe: bool = False,
        jobs: Optional[int] = None, cache_dir: Optional[str] = None, progress: bool = False,
        stdin: Optional[Tuple[str, bytes]] = None) -> RunReport:
    """Lint ``paths`` (or one stdin buffer) and return every file's report."""
    report = RunReport()
    if stdin is not None:
        name, content = stdin
        codes = settings.codes_for(name, ALL_CODES)
        origin = name if name not in ("-", "<stdin>") else None
        result = process(Job("-", codes, mode, unsafe, content, origin=origin, summary_cache=cache_dir))
        result.path = name
        result.diagnostics = [dataclasses.replace(d, path=name) for d in result.diagnostics]
        report.files.append(result)
        return report

    files = discover(paths, settings)
    cache = ResultCache(cache_dir) if cache_dir else None
    pending: List[Job] = []
    results: List[FileReport] = []
    digests: Dict[str, str] = {}  # this run's look-ups of the files cached results depended on
    for path in files:
        codes = settings.codes_for(path, ALL_CODES)
        try:
            with open(path, "rb") as handle:
                content: Optional[bytes] = handle.read()
        except OSError:
            content = None  # the worker reports it
        key = cache_key(content, codes) if cache is not None and content is not None else ""
        entry = cache.lookup(key, path) if key else None  # type: ignore[union-attr]
        if entry is not None and not dependencies_current(cache.uses(entry), digests):  # type: ignore[union-attr]
            entry = None  # a module its result consulted changed
        if entry is not None:
            cached = cache.diagnostics(entry)  # type: ignore[union-attr]
            diagnostics = [Diagnostic.from_json({**d, "path": path}) for d in cached]
            if mode == "check" or not _has_applicable_fix(diagnostics, unsafe):
                report.files.append(FileReport(path, diagnostics))
                continue
        if content is not None and not may_match_any(content, codes):
            results.append(FileReport(path, [], key=key))  # no rule can match: answered here, no parse
            continue
        pending.append(Job(path, codes, mode, unsafe, cache=cache is not None, summary_cache=cache_dir))

    bar = Progress(len(files), progress)
    bar.advance(len(files) - len(pending))
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(pending) <= 1:
        for job in pending:
            results.append(process(job))
            bar.advance()
    else:
        import multiprocessing  # only here: a run that needs no pool does not pay for these imports
        from concurrent.futures import ProcessPoolExecutor, as_completed

        _rule_types(frozenset())  # import the engine once here, so that forked workers inherit it
        context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
        with ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=context,
                                 initializer=_worker_init) as pool:
            futures = [pool.submit(process_batch, batch) for batch in _batches(pending, workers)]
            for future in as_completed(futures):
                batch_results = future.result()
                results.extend(batch_results)
                bar.advance(len(batch_results))
    bar.close()

    for result in results:
        report.files.append(result)
        if cache is not None and result.key and not result.error and not result.fixed:
            cache.put(result.key, [{k: v for k, v in d.to_json().items() if k != "path"}
                                   for d in result.diagnostics], uses=result.uses, path=result.path)
    if cache is not None:
        cache.save()
    report.files.sort(key=lambda f: f.path)
    return report
