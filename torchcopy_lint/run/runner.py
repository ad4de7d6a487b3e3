"""Run the engine over files: discovery, cache, parallel workers, fixing.

Front ends (the CLI, tests) call ``run``; the flake8 plugin calls the engine
directly. Workers only ever receive a file (its content, the enabled codes and
the prefilter's answer) and return plain diagnostics, gathered and sorted in the
parent for deterministic output. Every file is linted in a worker process,
``--jobs 1`` included (isolation.py): a file that crashes the parser or runs past
the time budget costs that file only (TCL003/TCL004). Files that are not regular
files are skipped, not read.

The parent looks each file up in the cache (by its stat record, filestats.py, else by
reading it) and runs the prefilter once (codes.active_codes) as workers ask for work, so
the first files are linted while the rest are still being read; big files are handed out
first (one ``os.stat`` per file, reused for the record and the read).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..cache import ResultCache, cache_key, content_digest, dependencies_current, key_of_digest
from ..codes import READ_ERROR_CODE
from ..codes import RULE_CODES as ALL_CODES
from ..codes import active_codes
from ..settings.config import Settings
from ..diagnostics import Diagnostic, failed_to_lint, internal_error, over_budget
from ..source.files import NotRegularFile, is_notebook, read_source
from .discover import LINTED_SUFFIXES, Found, discover, discover_files  # noqa: F401  (discover: the API)
from .filestats import FileStats
from .folders import Folders, environment_key
from .progress import Progress

# The engine, the fixer and the rules (and with them LibCST) are imported on first
# use, so that a run answered entirely by the cache never pays for them.


@dataclass
class FileReport:
    path: str
    diagnostics: List[Diagnostic]
    fixed: int = 0
    diff: str = ""
    error: str = ""
    content: Optional[bytes] = None  # the (fixed) source, for stdin only
    key: str = ""  # cache key of the content that was linted, when caching
    skipped: str = ""  # why the file was not read at all (not a regular file)
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


def _rule_types(codes: FrozenSet[str]):
    from ..rules import RULES_BY_CODE

    return [RULES_BY_CODE[c] for c in ALL_CODES if c in codes]


def _read_error(path: str, error: BaseException) -> Diagnostic:
    reason = getattr(error, "strerror", None) or str(error)
    return Diagnostic(path, 1, 1, 1, 1, READ_ERROR_CODE, f"cannot read file: {reason}")


def _undecodable(path: str, content: bytes) -> List[Diagnostic]:
    """TCL001 for a file Python cannot decode, also where no rule's trigger occurs (UTF-16, bad bytes)."""
    from ..source.precheck import decode_diagnostic

    problem = decode_diagnostic(path, content)
    return [problem] if problem is not None else []


def _lint_bytes(content: bytes, path: str, codes: FrozenSet[str], project=None,
                notebook: bool = False, active: Optional[FrozenSet[str]] = None, plan=None) -> List[Diagnostic]:
    """``active``: the prefilter's answer for ``content`` (``active_codes``) when the caller has it;
    ``plan``: the structural prefilter's (structure.py), which narrowed ``active`` already."""
    if notebook:  # the prefilter runs on the cells' program: JSON escapes can hide trigger text
        from ..notebook import lint_notebook

        return lint_notebook(content, path, _rule_types(codes), project=project)
    if active is None:
        active = active_codes(content, codes)
    if not active:
        return _undecodable(path, content)  # the engine (and LibCST) is not even imported
    from ..engine import lint_source

    return lint_source(content, path, _rule_types(active), project=project, prefiltered=True, plan=plan)


def _has_applicable_fix(diagnostics: Iterable[Diagnostic], unsafe: bool) -> bool:
    from ..fixing.edits import applies

    return any(applies(d, unsafe) for d in diagnostics)


@dataclass(frozen=True)
class Job:
    path: str
    codes: FrozenSet[str]
    mode: str = "check"  # check | fix | diff
    unsafe: bool = False
    content: Optional[bytes] = None  # as read by the parent; None: the worker reads the file (and reports why not)
    cache: bool = False  # whether the parent wants the cache key of what was linted
    origin: Optional[str] = None  # where stdin's content belongs (--stdin-filename): gives its project
    summary_cache: Optional[str] = None  # the cache directory, for the project index's summaries
    notebook: bool = False  # a Jupyter notebook (.ipynb): see notebook/
    active: Optional[FrozenSet[str]] = None  # the prefilter's answer for ``content``, when the parent ran it
    key: str = ""  # the cache key of ``content``, when the parent computed it
    python: Optional[str] = None  # the ``python`` setting for this file (environment.py), None: not set
    src: Tuple[str, ...] = ()  # the ``src`` setting for this file (semantic/roots.py)


def _project_index(job: Job):
    """The project index of the file (of ``--stdin-filename`` for stdin), summaries cached with results."""
    from ..settings.environment import configure
    from ..semantic.project import ProjectIndex, configure_summary_cache

    configure_summary_cache(job.summary_cache)
    configure(job.python, job.src)
    return ProjectIndex.for_path(job.origin if job.path == "-" else job.path)


def process(job: Job) -> FileReport:
    """Lint (and maybe fix) one file. Never raises: bad input is reported, an internal error is TCL003."""
    content = job.content
    if content is None:
        try:
            content = read_source(job.path)
        except NotRegularFile as error:
            return FileReport(job.path, [], skipped=str(error))
        except OSError as error:
            return FileReport(job.path, [_read_error(job.path, error)])
    try:
        return _lint_and_fix(job, content)
    except Exception as error:  # a bug of ours: this file is reported, the run goes on
        return FileReport(job.path, [internal_error(job.path, error)])


def _lint_and_fix(job: Job, content: bytes) -> FileReport:
    key = (job.key or cache_key(content, job.codes, job.notebook, environment_key(job.origin or job.path, job.python, job.src))
           ) if job.cache else ""
    active = None if job.notebook else job.active if job.active is not None else active_codes(content, job.codes)
    plan = None
    if active:
        from ..plan.structure import plan_source  # LibCST-free: it decides whether LibCST is needed at all

        plan = plan_source(content, active)
    if plan is not None:
        active = plan.codes
    project = _project_index(job) if job.notebook or active else None
    diagnostics = _lint_bytes(content, job.path, job.codes, project, job.notebook, active, plan)
    del plan  # its tree went to the engine and is gone
    if job.mode == "check" or not _has_applicable_fix(diagnostics, job.unsafe):
        return FileReport(job.path, diagnostics, content=content if job.path == "-" else None, key=key,
                          uses=project.dependencies() if project is not None else {})
    from ..fixing.edits import fixed_counts
    from ..fixing.fixer import FixError, fix_with, write_atomically
    from ..source.precheck import call_with_deep_stack

    def lint(source: bytes, path: str = job.path) -> List[Diagnostic]:  # as the diagnostics were made
        return _lint_bytes(source, path, job.codes, project)  # (a notebook's: its cells' program)

    try:
        if job.notebook:
            from ..notebook import fix_notebook, notebook_diff as diff

            result = call_with_deep_stack(fix_notebook, content, job.path, lint, job.unsafe)
        else:
            diff = unified_diff
            result = call_with_deep_stack(fix_with, content, lint, job.unsafe, diagnostics)
    except FixError as error:
        return FileReport(job.path, diagnostics, error=f"{job.path}: {error}")
    remaining = result.diagnostics
    fixed_codes = fixed_counts(diagnostics, result.applied_codes, job.unsafe)
    report = FileReport(job.path, remaining, fixed=sum(fixed_codes.values()),
                        content=result.source if job.path == "-" else None, fixed_codes=fixed_codes)
    if job.mode == "diff":
        report.diagnostics = diagnostics
        report.fixed = 0
        report.diff = diff(job.path, content, result.source)
        report.key = key
        report.uses = project.dependencies() if project is not None else {}
    elif job.path != "-" and result.source != content:
        try:
            write_atomically(job.path, result.source)
        except OSError as error:
            return FileReport(job.path, diagnostics, error=f"{job.path}: cannot write fixes: {error}")
    return report


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    import difflib

    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, path, path))


def _worker_init() -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))


BIG_FILE = 256_000  # bytes; at most one file this big is parsed at a time, so that two never add up


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _lint_isolated(jobs: Iterable[Job], workers: int, timeout: Optional[float], bar: "Progress") -> List[FileReport]:
    """``process`` every job in worker processes; a crash or a hang costs that file only."""
    jobs = iter(jobs)
    first = next(jobs, None)
    if first is None:
        return []  # every file was answered by the caller
    from .isolation import Failure, run_isolated  # only here: a run that needs no worker does not pay for it

    def failed(job: Job, failure: Failure) -> FileReport:
        if failure.kind == "timeout" and timeout:
            return FileReport(job.path, [over_budget(job.path, timeout)])
        reason = f"the parser crashed ({failure.detail})" if failure.kind == "crash" else failure.detail
        return FileReport(job.path, [failed_to_lint(job.path, reason)])

    def heavy(job: Job) -> bool:
        return not job.notebook and (_size(job.path) if job.content is None else len(job.content)) > BIG_FILE

    return run_isolated(_engine_imported(itertools.chain([first], jobs)), process, workers=workers, on_failure=failed, timeout=timeout,
                        heavy=heavy, path=lambda job: job.path, initializer=_worker_init, progress=bar.advance)


def _engine_imported(jobs: Iterable[Job]) -> Iterator[Job]:
    """``jobs``, with the engine imported before the second: workers forked from then on (and
    replacements) inherit it. The first worker imports it only if its file needs LibCST (the
    structural prefilter may answer without), so a run of one file never pays for it in vain."""
    for count, job in enumerate(jobs):
        if sys.platform.startswith("linux"):
            if count == 1:
                from .isolation import sigint_deferred

                with sigint_deferred():
                    _rule_types(frozenset())
            elif count == 0:
                from ..plan import structure  # noqa: F401  (LibCST-free, every worker needs them)
                from ..source import precheck  # noqa: F401
        yield job


def _big_files_first(files: List[Found]) -> List[Tuple[Found, Optional[os.stat_result]]]:
    """Every file with its ``os.stat`` (None: there is nothing), big files first, so that the run does not end
    waiting for one (stable otherwise)."""
    def stat(found: Found) -> Optional[os.stat_result]:
        try:
            return os.stat(found.path)
        except (OSError, ValueError):
            return None

    stated = [(found, stat(found)) for found in files]
    return sorted(stated, key=lambda pair: is_notebook(pair[0].path) or (pair[1].st_size if pair[1] else 0) <= BIG_FILE)


def _read(path: str, info: Optional[os.stat_result]) -> Tuple[Optional[bytes], str]:
    """(the content of ``path``, ""); (None, why) for a file that is skipped (not a regular file); (None, "")
    for one that cannot be read (its worker reports why)."""
    try:
        return read_source(path, info), ""
    except NotRegularFile as error:
        return None, str(error)
    except OSError:
        return None, ""


def run(paths: Sequence[str], settings: Settings, *, mode: str = "check", unsafe: bool = False,
        jobs: Optional[int] = None, cache_dir: Optional[str] = None, progress: bool = False,
        stdin: Optional[Tuple[str, bytes]] = None) -> RunReport:
    """Lint ``paths`` (or one stdin buffer) and return every file's report."""
    report = RunReport()
    timeout = settings.file_timeout or None
    if stdin is not None:
        name, content = stdin
        codes = settings.codes_for(name, ALL_CODES)
        origin = name if name not in ("-", "<stdin>") else None
        local = settings.for_path(name) if origin else settings
        notebook = is_notebook(name)
        active = None if notebook else active_codes(content, codes)
        if notebook or active:
            job = Job("-", codes, mode, unsafe, content, origin=origin, summary_cache=cache_dir, notebook=notebook,
                      active=active, python=local.python, src=local.src)
            result = _lint_isolated([job], 1, timeout, Progress(1, False))[0]
        else:  # no rule can match: no worker, no parse
            result = FileReport("-", _undecodable("-", content), content=content)
        result.path = name
        result.diagnostics = [dataclasses.replace(d, path=name) for d in result.diagnostics]
        report.files.append(result)
        return report

    files = discover_files(paths, settings)
    cache = ResultCache(cache_dir) if cache_dir else None
    stats = FileStats(cache_dir) if cache_dir else None
    results: List[FileReport] = []
    bar = Progress(len(files), progress)

    def pending() -> Iterator[Job]:
        """The files that need a worker, looked up (by stat record, else read) as workers ask for them."""
        digests: Dict[str, str] = {}  # this run's look-ups of the files cached results depended on
        folders = Folders(settings, stats)
        for (path, folder, name), info in _big_files_first(files):
            here = folders.of(folder, path)
            codes = here.codes_for(path)
            notebook = is_notebook(path)
            content, skipped = None, ""
            digest = FileStats.digest(here.records, name, info) if stats is not None and info is not None else None
            if digest is None:  # not known by its stat: read (and hashed, with a cache)
                content, skipped = _read(path, info)
                if content is not None and stats is not None:
                    digest = content_digest(content)
                    if info is not None:
                        stats.record(here.absolute, name, info, digest)
            key = key_of_digest(digest, codes, notebook, here.environment) if cache is not None and digest else ""
            entry = cache.lookup(key, path) if key else None  # type: ignore[union-attr]
            if entry is not None and not dependencies_current(
                    cache.uses(entry), digests, stats.file_digest):  # type: ignore[union-attr]
                entry = None  # a module its result consulted changed
            if entry is not None:
                cached = cache.diagnostics(entry)  # type: ignore[union-attr]
                diagnostics = [Diagnostic.from_json({**d, "path": path}) for d in cached]
                if mode == "check" or not _has_applicable_fix(diagnostics, unsafe):
                    report.files.append(FileReport(path, diagnostics))
                    bar.advance()
                    continue
            if content is None and not skipped and key:  # known by its stat record, and needed after all
                content, skipped = _read(path, info)
                key = "" if content is None else key_of_digest(content_digest(content), codes, notebook, here.environment)
            if skipped:
                report.files.append(FileReport(path, [], skipped=skipped))
                bar.advance()
                continue
            active = active_codes(content, codes) if content is not None and not notebook else None
            if active is not None and not active:
                # no rule can match: answered here, no parse (but a file Python cannot decode is reported)
                results.append(FileReport(path, _undecodable(path, content), key=key))  # type: ignore[arg-type]
                bar.advance()
                continue
            yield Job(path, codes, mode, unsafe, content, cache=cache is not None,  # no second read
                      summary_cache=cache_dir, notebook=notebook, active=active, key=key, python=here.settings.python,
                      src=here.settings.src)

    results.extend(_lint_isolated(pending(), jobs or os.cpu_count() or 1, timeout, bar))
    bar.close()

    for result in results:
        report.files.append(result)
        if cache is not None and result.key and not result.error and not result.fixed:
            cache.put(result.key, [{k: v for k, v in d.to_json().items() if k != "path"}
                                   for d in result.diagnostics], uses=result.uses, path=result.path)
    if cache is not None:
        cache.save()
        stats.save()  # type: ignore[union-attr]
    report.files.sort(key=lambda f: f.path)
    return report
