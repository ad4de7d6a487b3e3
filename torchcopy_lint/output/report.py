"""What the CLI says on stderr after a run: the summary, ``--show-fixes``, ``--add-noqa``.

Diagnostics themselves go to stdout (or ``--output-file``) through output.py; these
messages are for the person at the terminal and never mix into machine output.
"""

from __future__ import annotations

import sys
from typing import Dict, List, Sequence, Set

from ..codes import META_CODES
from ..diagnostics import Applicability, Diagnostic


def _plural(n: int, word: str, suffix: str = "s") -> str:
    return f"{n} {word}{suffix if n != 1 else ''}"


def print_summary(report, mode: str, unsafe: bool, *, show_fixes: bool, no_files: bool, text: bool) -> None:
    """The closing lines (ruff's wording). ``no_files``: the paths held no Python file at all."""
    err = sys.stderr
    if no_files:
        print("warning: No Python files found under the given path(s)", file=err)
        return
    if show_fixes and mode == "fix":
        _print_fixed(report, err)
    if not text:
        return
    diagnostics = report.diagnostics
    parts = []
    if diagnostics:
        parts.append(f"Found {_plural(len(diagnostics), 'diagnostic')}")
    if report.fixed:
        parts.append(f"fixed {report.fixed}")
    if not parts:
        parts.append("All checks passed")
    print(", ".join(parts) + ".", file=err)
    if mode == "check":
        safe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)
        hidden = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)
        if safe or (unsafe and hidden):
            print(f"[*] {safe + (hidden if unsafe else 0)} fixable with `--fix`"
                  f"{' --unsafe-fixes' if unsafe and hidden else ''}.", file=err)
        if hidden and not unsafe:
            print(f"{_plural(hidden, 'more fix', 'es')} available with `--fix --unsafe-fixes`.", file=err)


def _print_fixed(report, err) -> None:
    from .ruledocs import code_name

    fixed = [f for f in report.files if f.fixed_codes]
    if not fixed:
        print("No errors fixed.", file=err)
        return
    total = sum(sum(f.fixed_codes.values()) for f in fixed)
    print(f"Fixed {_plural(total, 'error')}:", file=err)
    for f in fixed:
        print(f"- {f.path}:", file=err)
        for code, count in f.fixed_codes.items():
            print(f"    {count} \u00d7 {code} ({code_name(code)})", file=err)


def add_noqa_directives(diagnostics: Sequence[Diagnostic], quiet: bool = False) -> bool:
    """``--add-noqa`` over a run's remaining findings; True if a file could not be rewritten."""
    from ..fixing.add_noqa import add_noqa_to_source
    from ..fixing.fixer import write_atomically

    by_file: Dict[str, Dict[int, Set[str]]] = {}
    for d in diagnostics:
        if d.code not in META_CODES:  # a file that was not linted cannot be suppressed line by line
            by_file.setdefault(d.path, {}).setdefault(d.line, set()).add(d.code)
    added, failed = 0, False
    skipped: List[str] = []
    for path, codes_by_line in sorted(by_file.items()):
        try:
            with open(path, "rb") as handle:
                result = add_noqa_to_source(handle.read(), codes_by_line)
            if result.added:
                write_atomically(path, result.source)
        except (OSError, SyntaxError, UnicodeError) as error:
            print(f"torchcopy-lint: error: {path}: cannot add noqa directives: {error}", file=sys.stderr)
            failed = True
            continue
        added += result.added
        skipped += [f"{path}:{line}" for line in result.skipped]
    for site in skipped:
        print(f"warning: {site}: the line ends inside a string or a continuation; add the noqa by hand",
              file=sys.stderr)
    if not quiet:
        print(f"Added {_plural(added, 'noqa directive')}.", file=sys.stderr)
    return failed
