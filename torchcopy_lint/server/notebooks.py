"""Notebook documents (LSP 3.17 notebook sync): the code cells linted as one program, in notebook order.

A tensor defined in cell 1 is known in cell 3, as in the kernel. Diagnostics are
mapped back to the cell they fall in (lines relative to the cell); a fix that
would span two cells is dropped. IPython line magics and shell escapes (``%``,
``!`` at the start of a line) are turned into comments in place, so positions
do not move.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Callable, FrozenSet, List, Sequence, Tuple

from ..diagnostics import Diagnostic

_MAGIC = re.compile(r"^(\s*)[%!]", re.MULTILINE)

Lint = Callable[[str, str, FrozenSet[str]], List[Diagnostic]]


def join_cells(cells: Sequence[str]) -> Tuple[str, List[int]]:
    """The program made of ``cells`` and the 1-based line on which each cell starts."""
    parts: List[str] = []
    starts: List[int] = []
    line = 1
    for cell in cells:
        text = _MAGIC.sub(lambda m: m.group(1) + "#", cell)
        if not text.endswith("\n"):
            text += "\n"
        starts.append(line)
        parts.append(text)
        line += text.count("\n")
    return "".join(parts), starts


def _in_cell(diagnostic: Diagnostic, first_line: int) -> Diagnostic:
    shift = first_line - 1
    fix = diagnostic.fix
    if fix is not None:
        fix = dataclasses.replace(fix, start_line=fix.start_line - shift, end_line=fix.end_line - shift)
    return dataclasses.replace(diagnostic, line=diagnostic.line - shift, end_line=diagnostic.end_line - shift,
                               fix=fix)


def lint_cells(cells: Sequence[str], path: str, codes: FrozenSet[str], lint: Lint) -> List[Tuple[int, Diagnostic]]:
    program, starts = join_cells(cells)
    ends = starts[1:] + [program.count("\n") + 1]
    out = []
    for diagnostic in lint(program, path, codes):
        cell = max(bisect.bisect_right(starts, diagnostic.line) - 1, 0)
        last_line = ends[cell] - 1
        if diagnostic.end_line > last_line:
            diagnostic = dataclasses.replace(diagnostic, end_line=last_line, end_column=10**6)
        fix = diagnostic.fix
        if fix is not None and not (starts[cell] <= fix.start_line and fix.end_line <= last_line):
            diagnostic = dataclasses.replace(diagnostic, fix=None)
        out.append((cell, _in_cell(diagnostic, starts[cell])))
    return out
