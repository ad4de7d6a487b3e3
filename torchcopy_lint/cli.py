"""Command line: ``torchcopy-lint [check] PATHS``, ``rule CODE``, ``verify``, ``server`` (LSP over stdio).

Exit codes: 0 no diagnostics left, 1 diagnostics left, 2 usage or internal error.
Importing this module (and linting) never imports torch; ``verify`` does, lazily.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from typing import List, Optional, Sequence

from . import __version__
from .config import ConfigError, Settings, _split_codes, find_pyproject, load_settings, validate_codes

SUBCOMMANDS = ("check", "rule", "verify", "server")


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torchcopy-lint",
        description="Find and fix PyTorch tensor/model copy hazards (TCL101-TCL105). "
        "Other commands: `torchcopy-lint rule CODE` explains a rule; `torchcopy-lint verify` "
        "checks every rule's claim against the installed torch; `torchcopy-lint server` is a language "
        "server (LSP over stdio, needs the `server` extra).",
    )
    p.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .); - reads stdin")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="comma-separated codes or prefixes to enable (default: all)")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES",
                   help="comma-separated codes or prefixes to disable")
    p.add_argument("--output-format", choices=("text", "json", "github", "sarif"), default="text")
    p.add_argument("--config", metavar="PYPROJECT", help="pyproject.toml to read [tool.torchcopy-lint] from")
    p.add_argument("--isolated", action="store_true", help="ignore configuration files")
    p.add_argument("--jobs", "-j", type=int, default=None, help="parallel workers (default: CPU count)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--cache-dir", default=None, help="cache directory (default: ./.torchcopy_lint_cache)")
    p.add_argument("--stdin-filename", default=None, help="the name to report for input read from stdin")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line and no progress bar")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even if diagnostics are left")
    p.add_argument("--version", action="version", version=f"torchcopy-lint {__version__}")
    return p


def _settings(args: argparse.Namespace) -> Settings:
    if args.isolated:
        settings = Settings()
    else:
        pyproject = args.config or find_pyproject(args.paths[0] if args.paths and args.paths[0] != "-" else ".")
        settings = load_settings(pyproject)
    from .runner import ALL_CODES

    select, ignore = _split_codes(args.select), _split_codes(args.ignore)
    validate_codes(select + ignore + settings.select + settings.ignore + settings.extend_select, ALL_CODES)
    if select:
        settings.select, settings.extend_select = select, ()
    settings.ignore = tuple(settings.ignore) + ignore
    return settings


def check(argv: Sequence[str]) -> int:
    parser = _check_parser()
    args = parser.parse_args(list(argv))
    try:
        settings = _settings(args)
    except ConfigError as error:
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")

    from .output import FORMATTERS
    from .runner import run

    mode = "diff" if args.diff else "fix" if args.fix else "check"
    stdin = None
    if args.paths == ["-"]:
        stdin = (args.stdin_filename or "-", sys.stdin.buffer.read())
    missing = [p for p in args.paths if p != "-" and not os.path.exists(p)]
    for path in missing:
        print(f"torchcopy-lint: error: {path}: no such file or directory", file=sys.stderr)
    existing = [p for p in args.paths if p not in missing]
    if missing and not existing:
        return 2
    cache_dir = None if args.no_cache else (args.cache_dir or os.path.join(os.getcwd(), ".torchcopy_lint_cache"))
    report = run(existing, settings, mode=mode, unsafe=args.unsafe_fixes, jobs=args.jobs, cache_dir=cache_dir,
                 progress=not args.quiet, stdin=stdin)

    errors = [f.error for f in report.files if f.error]
    for error in errors:
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
    out = sys.stdout
    if mode == "diff":
        out.write("".join(f.diff for f in report.files if f.diff))
    elif stdin is not None and mode == "fix":
        content = report.files[0].content or b""
        out.flush()
        sys.stdout.buffer.write(content)
        sys.stdout.buffer.flush()
    diagnostics = report.diagnostics
    if not (stdin is not None and mode == "fix") and mode != "diff":
        out.write(FORMATTERS[args.output_format](diagnostics, unsafe=args.unsafe_fixes))
    if not args.quiet and args.output_format == "text":
        _summary(diagnostics, report.fixed, mode, args.unsafe_fixes)
    if errors or missing:
        return 2
    return 0 if args.exit_zero or not diagnostics else 1


def _summary(diagnostics, fixed: int, mode: str, unsafe: bool) -> None:
    from .diagnostics import Applicability

    parts = []
    if diagnostics:
        parts.append(f"Found {len(diagnostics)} diagnostic{'s' if len(diagnostics) != 1 else ''}")
    if fixed:
        parts.append(f"fixed {fixed}")
    if not parts:
        parts.append("All checks passed")
    print(", ".join(parts) + ".", file=sys.stderr)
    if mode == "check":
        safe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)
        hidden = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)
        if safe or (unsafe and hidden):
            print(f"[*] {safe + (hidden if unsafe else 0)} fixable with `--fix`"
                  f"{' --unsafe-fixes' if unsafe and hidden else ''}.", file=sys.stderr)
        if hidden and not unsafe:
            print(f"{hidden} more fix{'es' if hidden != 1 else ''} available with `--fix --unsafe-fixes`.",
                  file=sys.stderr)


def explain(argv: Sequence[str]) -> int:
    """``torchcopy-lint rule CODE`` (or ``--all``): what a rule flags and why."""
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
    if rule is None:
        print(f"torchcopy-lint: error: unknown rule {args.code!r}", file=sys.stderr)
        return 2
    from .ruledocs import doc_page

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


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS and not os.path.exists(argv[0]):
            command, rest = argv[0], argv[1:]
            if command == "rule":
                return explain(rest)
            if command == "verify":
                return verify(rest)
            if command == "server":
                from .server import main as server_main

                return server_main(rest)
            return check(rest)
        return check(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


def entry() -> None:  # pragma: no cover
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
