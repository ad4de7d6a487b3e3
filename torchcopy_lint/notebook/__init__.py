"""Jupyter notebooks: the code cells linted and fixed as one program, positions per cell.

Two layers, so that the language server can reuse the first with LSP notebook documents:

- cells (program.py, magics.py): ``lint_cells`` / ``fix_cells`` take ``(cell number,
  text)`` pairs in notebook order; diagnostics come back with ``cell`` set to that
  number and lines/columns (and fix ranges) inside the cell. IPython syntax is
  neutralized in place; a cell that does not parse gets TCL001 and the rest is linted.
  ``lint_cells_with`` / ``fix_cells_with`` do the same with the caller's own lint function
  (program bytes, path -> diagnostics), e.g. an editor's cached one or the runner's (with the
  file's project index and settings: fixing applies the fixes that lint shows);
  ``build_program`` / ``Program`` give the position map itself (``to_cell``, ``to_program``).
- files (ipynb.py): ``lint_notebook`` / ``fix_notebook`` / ``notebook_diff``, the
  counterparts of ``engine.lint_source`` / ``fixer.fix_with`` / ``runner.unified_diff``,
  which the runner picks for ``.ipynb`` paths.
"""

from __future__ import annotations

from collections import Counter
from typing import List, Sequence, Tuple, Type

from ..diagnostics import SYNTAX_ERROR_CODE, Diagnostic
from .ipynb import NotebookError, invalid_notebook, is_notebook, notebook_diff, read_notebook
from .magics import neutralize
from .program import Cells, CellSpan, Lint, Program, analyse, build_program, lint_cells_with, restore_cells

__all__ = [
    "Cells", "CellSpan", "NotebookError", "Program", "build_program", "fix_cells", "fix_cells_with", "fix_notebook",
    "is_notebook", "lint_cells", "lint_cells_with", "lint_notebook", "neutralize", "notebook_diff", "read_notebook",
]


def _lint(rule_types, options):
    from ..engine import lint_source

    return lambda source, path: lint_source(source, path, rule_types, **options)


def lint_cells(cells: Cells, path: str, rule_types: Sequence[Type], **options) -> List[Diagnostic]:
    """Diagnostics of code cells linted as one program, in cell coordinates (``Diagnostic.cell``).

    ``options`` go to ``engine.lint_source`` as they are.
    """
    return lint_cells_with(cells, path, _lint(rule_types, options))


def fix_cells(cells: Cells, rule_types: Sequence[Type], unsafe: bool = False, path: str = "-",
              **options) -> Tuple[List[str], int]:
    """The cells' texts with every applicable fix applied, and how many were applied (``fix_cells_with``
    the engine's lint; ``options`` go to ``engine.lint_source``, which finds the project from ``path``)."""
    texts, applied, _ = fix_cells_with(cells, path, _lint(rule_types, options), unsafe)
    return texts, sum(applied.values())


def fix_cells_with(cells: Cells, path: str, lint: Lint, unsafe: bool = False
                   ) -> Tuple[List[str], Counter, List[Diagnostic]]:
    """The cells' texts with the fixes of ``lint``'s diagnostics applied (those shown in a cell: a fix
    that reaches past its cell is never shown, nor applied), how many of each code, and the diagnostics left (cell
    coordinates, as ``lint_cells_with`` gives them). Each round lints the program, applies the fixes
    that do not overlap and cuts the program back into cells.

    Cells that do not parse, IPython lines and untouched cells come back exactly as given.
    Raises ``fixer.FixError`` (nothing changed) if a fix breaks the parse or the cells.
    """
    from ..fixing.fixer import MAX_ROUNDS, FixError, fix_round

    numbers = [number for number, _ in cells]
    texts = [text for _, text in cells]
    applied: Counter = Counter()
    for round_number in range(MAX_ROUNDS + 1):
        found: List[List[Diagnostic]] = []  # the program's diagnostics (program lines) of the last lint

        def recording(source: bytes, name: str) -> List[Diagnostic]:
            found.append(lint(source, name))
            return found[-1]

        analysis = analyse(list(zip(numbers, texts)), path, recording)
        remaining = analysis.reported()
        program = analysis.program
        if round_number == MAX_ROUNDS or any(d.code == SYNTAX_ERROR_CODE and d.cell is None for d in remaining):
            break
        shown = [d for d in found[-1] if d.fix is not None and program.cell_diagnostic(d).fix is not None]
        source, chosen = fix_round(program.text.encode("utf-8"), shown, unsafe)
        if not chosen:
            break
        try:
            texts = restore_cells(analysis, source.decode("utf-8"))
        except ValueError as error:
            raise FixError(f"{error}; notebook left unchanged") from error
        applied.update(d.code for d in chosen)
    return texts, applied, remaining


def lint_notebook(content: bytes, path: str, rule_types: Sequence[Type], **options) -> List[Diagnostic]:
    """All diagnostics of one ``.ipynb`` file. Never raises for bad input: it reports TCL001."""
    try:
        notebook = read_notebook(content)
    except NotebookError as error:
        return [invalid_notebook(path, error)]
    if not notebook.is_python:
        return []
    return lint_cells(notebook.code_cells(), path, rule_types, **options)


def fix_notebook(content: bytes, path: str, lint: Lint, unsafe: bool = False):
    """``content`` with the fixes applied to its code cells' sources only (a ``fixer.FixResult``, with the
    diagnostics left in cell coordinates); ``lint``: a program's, as for ``fix_cells_with``."""
    from ..fixing.fixer import FixError, FixResult

    try:
        notebook = read_notebook(content)
    except NotebookError as error:
        raise FixError(f"cannot read notebook: {error}") from error
    cells = notebook.code_cells() if notebook.is_python else []
    texts, applied, remaining = fix_cells_with(cells, path, lint, unsafe) if cells else ([], Counter(), [])
    changed = {number: new for (number, old), new in zip(cells, texts) if new != old}
    if not changed:
        return FixResult(content, 0, remaining)
    try:
        return FixResult(notebook.with_sources(changed), sum(applied.values()), remaining, applied)
    except NotebookError as error:
        raise FixError(f"cannot write the fixes: {error}") from error
