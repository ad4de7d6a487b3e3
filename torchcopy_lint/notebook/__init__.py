"""Jupyter notebooks: the code cells linted and fixed as one program, positions per cell.

Two layers, so that the language server can reuse the first with LSP notebook documents:

- cells (program.py, magics.py): ``lint_cells`` / ``fix_cells`` take ``(cell number,
  text)`` pairs in notebook order; diagnostics come back with ``cell`` set to that
  number and lines/columns (and fix ranges) inside the cell. IPython syntax is
  neutralized in place; a cell that does not parse gets TCL001 and the rest is linted.
  ``lint_cells_with`` does the same with the caller's own lint function (program bytes,
  path -> diagnostics), e.g. an editor's cached one; ``build_program`` / ``Program``
  give the position map itself (``to_cell``, ``to_program``).
- files (ipynb.py): ``lint_notebook`` / ``fix_notebook`` / ``notebook_diff`` have the
  same shape as ``engine.lint_source`` / ``fixer.fix_source`` / ``runner.unified_diff``,
  and the runner picks them for ``.ipynb`` paths.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple, Type

from ..diagnostics import SYNTAX_ERROR_CODE, Diagnostic
from .ipynb import NotebookError, invalid_notebook, is_notebook, notebook_diff, read_notebook
from .magics import neutralize
from .program import Cells, CellSpan, Program, analyse, build_program, lint_cells_with, restore_cells

__all__ = [
    "Cells", "CellSpan", "NotebookError", "Program", "build_program", "fix_cells", "fix_notebook", "is_notebook",
    "lint_cells", "lint_cells_with", "lint_notebook", "neutralize", "notebook_diff", "read_notebook",
]


def _lint(rule_types, options):
    from ..engine import lint_source

    return lambda source, path: lint_source(source, path, rule_types, **options)


def lint_cells(cells: Cells, path: str, rule_types: Sequence[Type], **options) -> List[Diagnostic]:
    """Diagnostics of code cells linted as one program, in cell coordinates (``Diagnostic.cell``).

    ``options`` go to ``engine.lint_source`` as they are.
    """
    return lint_cells_with(cells, path, _lint(rule_types, options))


def fix_cells(cells: Cells, rule_types: Sequence[Type], unsafe: bool = False, path: str = "-") -> Tuple[List[str], int]:
    """The cells' texts with every applicable fix applied, and how many were applied.

    Cells that do not parse, IPython lines and untouched cells come back exactly as given.
    Raises ``fixer.FixError`` (nothing changed) if a fix breaks the parse or the cells.
    """
    from ..fixer import FixError, fix_source

    cells = list(cells)
    analysis = analyse(cells, path, _lint(rule_types, {}))
    if any(d.code == SYNTAX_ERROR_CODE and d.cell is None for d in analysis.diagnostics):
        return [text for _, text in cells], 0
    result = fix_source(analysis.program.text.encode("utf-8"), rule_types, unsafe=unsafe)
    if not result.applied:
        return [text for _, text in cells], 0
    try:
        return restore_cells(analysis, result.source.decode("utf-8")), result.applied
    except ValueError as error:
        raise FixError(f"{error}; notebook left unchanged") from error


def lint_notebook(content: bytes, path: str, rule_types: Sequence[Type], **options) -> List[Diagnostic]:
    """All diagnostics of one ``.ipynb`` file. Never raises for bad input: it reports TCL001."""
    try:
        notebook = read_notebook(content)
    except NotebookError as error:
        return [invalid_notebook(path, error)]
    if not notebook.is_python:
        return []
    return lint_cells(notebook.code_cells(), path, rule_types, **options)


def fix_notebook(content: bytes, rule_types: Sequence[Type], unsafe: bool = False):
    """``content`` with the fixes applied to its code cells' sources only (a ``fixer.FixResult``)."""
    from ..fixer import FixError, FixResult

    try:
        notebook = read_notebook(content)
    except NotebookError as error:
        raise FixError(f"cannot read notebook: {error}") from error
    cells = notebook.code_cells() if notebook.is_python else []
    texts, applied = fix_cells(cells, rule_types, unsafe)
    changed = {number: new for (number, old), new in zip(cells, texts) if new != old}
    if not changed:
        return FixResult(content, 0)
    try:
        return FixResult(notebook.with_sources(changed), applied)
    except NotebookError as error:
        raise FixError(f"cannot write the fixes: {error}") from error
