"""Command line: ``torchcopy-lint [check] PATHS``, ``torchcopy-lint rule CODE``, ``torchcopy-lint verify``.

Flags follow ruff's where both have them. Exit codes: 0 no diagnostics left, 1
diagnostics left, 2 usage, configuration or internal error. Importing this module
(and linting) never imports torch; ``verify`` does, lazily. A file in which no rule's
trigger text occurs is answered without importing LibCST (runner.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Dict, List, Optional, Sequence, TextIO

from . import __version__
from .codes import INTERNAL_ERROR_CODE, META_CODES
from .settings.config import ConfigError, Overrides, checked_python, Selection, Settings, find_pyproject, load_settings, split_selectors

OUTPUT_FORMATS = ("text", "json", "github", "sarif")


def build_parser() -> argparse.ArgumentParser:
    """The ``check`` command's options (also what a bare ``torchcopy-lint PATHS`` takes)."""
    p = argparse.ArgumentParser(
        prog="torchcopy-lint",
        description="Find and fix PyTorch tensor/model copy hazards. Commands: `check PATHS` (the default), "
        "`rule CODE` explains a rule, `verify` checks every rule's claim against the installed torch, `server` "
        "runs the language server (LSP over stdio).",
    )
    p.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .); - reads stdin")
    sel = p.add_argument_group("rule selection (comma-separated codes or prefixes, or ALL; default: every rule but "
                               "the opt-in TCL119, which only ALL or its full code selects)")
    sel.add_argument("--select", action="append", default=[], metavar="CODES",
                     help="enable exactly these (replaces the configured select)")
    sel.add_argument("--extend-select", action="append", default=[], metavar="CODES",
                     help="enable these on top of the configured select")
    sel.add_argument("--ignore", action="append", default=[], metavar="CODES", help="disable these")
    files = p.add_argument_group("files")
    files.add_argument("--exclude", action="append", default=None, metavar="PATTERNS",
                       help="patterns to skip (replaces the configured and default exclude)")
    files.add_argument("--extend-exclude", action="append", default=[], metavar="PATTERNS",
                       help="patterns to skip on top of exclude")
    files.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply exclusions to paths given by name too (for pre-commit)")
    files.add_argument("--config", metavar="PYPROJECT", help="pyproject.toml to read [tool.torchcopy-lint] from")
    files.add_argument("--python", default=None, metavar="PATH",
                       help="the project's Python environment (virtual environment, prefix or interpreter), "
                            "whose installed packages' annotations are read; default: the `python` setting, "
                            "else VIRTUAL_ENV, else an active conda environment (CONDA_PREFIX) but base, else "
                            ".venv/venv in the project root, else an active conda base environment")
    files.add_argument("--isolated", action="store_true", help="ignore configuration files")
    files.add_argument("--stdin-filename", default=None,
                       help="the name to report for input read from stdin (also finds its configuration)")
    fix = p.add_argument_group("fixing")
    fix.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    fix.add_argument("--show-fixes", action="store_true", help="with --fix: list what was fixed, per file")
    fix.add_argument("--add-noqa", action="store_true",
                     help="add `# noqa: CODE` to the line of each remaining finding (merging with an existing noqa)")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    out.add_argument("--output-file", "-o", metavar="PATH", help="write the diagnostics to PATH instead of stdout")
    out.add_argument("--statistics", action="store_true", help="count diagnostics per code instead of listing them")
    out.add_argument("--show-settings", action="store_true", help="print the resolved settings and exit")
    out.add_argument("--quiet", "-q", action="store_true", help="only the diagnostics: no summary, no progress")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even if diagnostics are left")
    run = p.add_argument_group("run")
    run.add_argument("--jobs", "-j", type=int, default=None, help="parallel workers (default: CPU count)")
    run.add_argument("--file-timeout", type=_seconds, default=None, metavar="SECONDS",
                     help="time budget per file; a file over it is reported as TCL004 (default: 10; 0: no limit)")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    run.add_argument("--cache-dir", default=None, help="cache directory (default: ./.torchcopy_lint_cache)")
    p.add_argument("--version", action="version", version=f"torchcopy-lint {__version__}")
    return p


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0 (0: no limit), not {text!r}")
    return seconds


def _split_list(values: Sequence[str]) -> tuple:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The configuration (unless --isolated), then the command line as the last layer. Raises ConfigError.

    Without ``--config``, each file takes the nearest pyproject.toml with a ``[tool.torchcopy-lint]``
    table above it (ruff's hierarchical configuration; the first path's is read up front, so that an
    error in it stops the run before it starts).
    """
    overrides = Overrides(
        Selection(split_selectors(args.select, "--select") or None,
                  split_selectors(args.extend_select, "--extend-select"), split_selectors(args.ignore, "--ignore")),
        _split_list(args.exclude) if args.exclude is not None else None,
        _split_list(args.extend_exclude), args.force_exclude,
        checked_python(args.python, os.getcwd(), "--python") if args.python is not None else None)
    if args.isolated:
        return overrides.apply(Settings())
    anchor = args.stdin_filename if args.paths == ["-"] and args.stdin_filename else (
        args.paths[0] if args.paths and args.paths[0] != "-" else ".")
    settings = overrides.apply(load_settings(args.config or find_pyproject(anchor)))
    if not args.config:
        settings.nested = overrides
    return settings


def check(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.add_noqa and (args.fix or args.diff or args.paths == ["-"]):
        parser.error("--add-noqa cannot be combined with --fix, --diff or stdin")
    try:
        return _lint(args)
    except ConfigError as error:  # the first path's configuration, or a nested one met on the way
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
        return 2


def _lint(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.file_timeout is not None:
        settings.file_timeout = args.file_timeout
    if args.show_settings:
        return show_settings(settings, args.paths[0] if args.paths != ["-"] else args.stdin_filename or "-")

    from .run.runner import run

    mode = "diff" if args.diff else "fix" if args.fix else "check"
    stdin = None
    if args.paths == ["-"]:
        stdin = (args.stdin_filename or "-", sys.stdin.buffer.read())
        if args.stdin_filename and settings.is_force_excluded(args.stdin_filename):
            if mode == "fix":
                sys.stdout.buffer.write(stdin[1])  # excluded: echoed unchanged, nothing reported
            return 0
    missing = [p for p in args.paths if p != "-" and not os.path.exists(p)]
    for path in missing:
        print(f"torchcopy-lint: error: {path}: no such file or directory", file=sys.stderr)
    existing = [p for p in args.paths if p not in missing]
    if missing and not existing:
        return 2
    cache_dir = None if args.no_cache else (args.cache_dir or os.path.join(os.getcwd(), ".torchcopy_lint_cache"))
    report = run(existing, settings, mode=mode, unsafe=args.unsafe_fixes, jobs=args.jobs, cache_dir=cache_dir,
                 progress=not args.quiet, stdin=stdin)

    for skipped in report.files:
        if skipped.skipped:
            print(f"torchcopy-lint: warning: {skipped.path}: skipped: {skipped.skipped}", file=sys.stderr)
    errors = [f.error for f in report.files if f.error]
    for error in errors:
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
    if args.add_noqa:
        from .output.report import add_noqa_directives

        return 2 if add_noqa_directives(report.diagnostics, quiet=args.quiet) or errors or missing else 0
    if mode == "diff":
        sys.stdout.write("".join(f.diff for f in report.files if f.diff))
    elif stdin is not None and mode == "fix":
        sys.stdout.flush()
        sys.stdout.buffer.write(report.files[0].content or b"")
        sys.stdout.buffer.flush()
    diagnostics = report.diagnostics
    if not (stdin is not None and mode == "fix") and mode != "diff":
        try:
            _write_output(args, diagnostics)
        except OSError as error:
            print(f"torchcopy-lint: error: {args.output_file}: cannot write: {error.strerror or error}",
                  file=sys.stderr)
            return 2
    if not args.quiet:
        from .output.report import print_summary

        print_summary(report, mode, args.unsafe_fixes, show_fixes=args.show_fixes,
                      no_files=stdin is None and not report.files and not missing,
                      text=args.output_format == "text" or args.output_file is not None)
    if errors or missing or any(d.code == INTERNAL_ERROR_CODE for d in diagnostics):
        return 2  # a TCL003 (failed to lint) is an internal error, whatever else was found
    return 0 if args.exit_zero or not diagnostics else 1


def _write_output(args: argparse.Namespace, diagnostics) -> None:
    from .output.formats import FORMATTERS, statistics

    if args.statistics:
        text = statistics(diagnostics, args.unsafe_fixes, args.output_format)
    else:
        text = FORMATTERS[args.output_format](diagnostics, unsafe=args.unsafe_fixes)
    if args.output_file is None:
        sys.stdout.write(text)
        return
    directory = os.path.dirname(os.path.abspath(args.output_file))
    os.makedirs(directory, exist_ok=True)
    with open(args.output_file, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def show_settings(settings: Settings, path: str, out: TextIO = sys.stdout) -> int:
    """``--show-settings``: what a run would use for ``path``, as TOML-like lines."""
    from .codes import DEFAULT_CODES, OPT_IN_CODES, RULE_CODES

    settings = settings.for_path(path)

    rows = {
        "config-file": settings.config_path,
        "project-root": settings.project_root or os.getcwd(),
        "default-selection": list(DEFAULT_CODES),
        "opt-in": list(OPT_IN_CODES),
        "selection-layers": [{"select": list(s.select) if s.select is not None else None,
                              "extend-select": list(s.extend_select), "ignore": list(s.ignore)}
                             for s in settings.selections],
        "enabled": sorted(settings.enabled(RULE_CODES)),
        "enabled-for-path": sorted(settings.codes_for(path, RULE_CODES)),
        "per-file-ignores": {k: list(v) for k, v in settings.per_file_ignores.items()},
        "exclude": list(settings.exclude),
        "extend-exclude": list(settings.extend_exclude),
        "force-exclude": settings.force_exclude,
        "file-timeout": settings.file_timeout,
        "src": list(settings.src),
        "python": settings.python,
        "environment": _environment(settings, path),
    }
    out.write(f"Resolved settings for: {path}\n")
    for key, value in rows.items():
        out.write(f"{key} = {json.dumps(value)}\n")
    return 0


def _environment(settings: Settings, path: str) -> Optional[dict]:
    """The environment whose packages a run over ``path`` reads (see environment.py), or None."""
    from .settings.environment import for_file

    anchor = os.path.abspath(path if path != "-" else "stdin.py")
    found = for_file(os.path.join(anchor, "x.py") if os.path.isdir(anchor) else anchor, settings.python)
    return found.describe() if found is not None else None


def explain(argv: Sequence[str]) -> int:
    """``torchcopy-lint rule CODE`` (or ``--all``): what a rule flags and why."""
    import inspect

    from .output.ruledocs import doc_page
    from .rules import ALL_RULES, RULES_BY_CODE

    parser = argparse.ArgumentParser(prog="torchcopy-lint rule", description="Explain a rule.")
    parser.add_argument("code", nargs="?")
    parser.add_argument("--all", action="store_true", help="list every rule")
    args = parser.parse_args(list(argv))
    if args.all or not args.code:
        for rule in ALL_RULES:
            print(f"{rule.code}  {rule.name:<26} {rule.message}")
        return 0
    rule = RULES_BY_CODE.get(args.code.upper())
    if rule is None and args.code.upper() in META_CODES:
        print(f"{args.code.upper()}  {META_CODES[args.code.upper()]} (reported about a file, not by a rule)")
        return 0
    if rule is None:
        print(f"torchcopy-lint: error: unknown rule {args.code!r}", file=sys.stderr)
        return 2
    page = doc_page(rule.code)
    if page is not None:
        print(page)
        return 0
    print(f"# {rule.code} ({rule.name})\n")
    print(f"{rule.message}\n")
    print(inspect.cleandoc(rule.__doc__ or ""))
    return 0


def verify(argv: Sequence[str]) -> int:
    try:
        from .verify import main as verify_main
    except ImportError as error:  # pragma: no cover - packaging problem
        print(f"torchcopy-lint: error: verify is unavailable: {error}", file=sys.stderr)
        return 2
    return verify_main(list(argv))


def server(argv: Sequence[str]) -> int:
    """``torchcopy-lint server``: the language server (LSP over stdio; the ``server`` extra)."""
    from .server import main as server_main

    return server_main(argv)


# A first argument that names a command runs it; anything else is `check`'s (so
# `torchcopy-lint src/` keeps working). A directory named like a command: `check rule/`.
SUBCOMMANDS: Dict[str, Callable[[Sequence[str]], int]] = {
    "check": check,
    "rule": explain,
    "verify": verify,
    "server": server,
}


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = SUBCOMMANDS.get(argv[0]) if argv else None
    try:
        return command(argv[1:]) if command is not None else check(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


def entry() -> None:  # pragma: no cover
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
