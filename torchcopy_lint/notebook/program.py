"""Code cells as one program, and every position of that program back in its cell.

This is the seam both front ends use: the CLI reads cells from an ``.ipynb`` file
(ipynb.py), the language server gets them as LSP notebook cell documents. Either
passes ``(cell number, text)`` pairs in notebook order and gets diagnostics whose
``cell`` is that number and whose lines and columns are inside that cell.

Layout of the program (every cell's text keeps its own lines and columns)::

    # torchcopy-lint: notebook code cells      <- line 1 (keeps a cell's coding comment off lines 1-2)
    # torchcopy-lint cell <nonce>              <- a marker line before each cell
    if True:                                   <- only before a cell whose first statement is indented
    <the cell, magics neutralized>             <- (IPython dedents such a cell)

The markers let a fixed program be cut back into cells even when a fix changes the
number of lines. A cell that does not parse on its own is blanked (same number of
lines) and reported as TCL001 in that cell; the other cells are still linted.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..diagnostics import SYNTAX_ERROR_CODE, Diagnostic
from .magics import Neutralized, neutralize, split_lines

Cells = Sequence[Tuple[int, str]]  # (cell number as reported, cell text), in notebook order
PREAMBLE = "# torchcopy-lint: notebook code cells\n"
HEADER = "if True:\n"


@dataclass(frozen=True)
class CellSpan:
    """Where one cell sits in the program."""

    number: int  # the cell number diagnostics carry
    first_line: int  # 1-based program line of the cell's first line
    line_count: int
    header: bool  # an `if True:` line precedes the cell (its first statement is indented)

    def holds(self, line: int) -> bool:
        return self.first_line <= line < self.first_line + self.line_count


@dataclass(frozen=True)
class Program:
    """The code cells concatenated into one Python module, with the map back to the cells."""

    text: str
    cells: Tuple[CellSpan, ...]
    marker: str  # the marker line (without its newline) that precedes each cell

    def cell_of(self, line: int) -> Optional[CellSpan]:
        for span in self.cells:
            if span.holds(line):
                return span
        return None

    def to_cell(self, line: int, column: int) -> Optional[Tuple[int, int, int]]:
        """(cell number, line in cell, column) of a program position; None outside every cell."""
        span = self.cell_of(line)
        return None if span is None else (span.number, line - span.first_line + 1, column)

    def to_program(self, number: int, line: int, column: int) -> Tuple[int, int]:
        """The program position of a position in cell ``number`` (for editors mapping requests in)."""
        for span in self.cells:
            if span.number == number:
                return span.first_line + line - 1, column
        raise KeyError(number)

    def cell_diagnostic(self, d: Diagnostic) -> Diagnostic:
        """``d`` (a program position) in cell coordinates; a position outside every cell becomes file-level."""
        span = self.cell_of(d.line)
        if span is None:
            return dataclasses.replace(d, line=1, column=1, end_line=1, end_column=1, fix=None, cell=None)
        end_line, end_column = self._clamp(span, d.end_line, d.end_column)
        fix = d.fix
        if fix is not None:
            if span.holds(fix.start_line) and span.holds(fix.end_line):
                fix = dataclasses.replace(fix, start_line=fix.start_line - span.first_line + 1,
                                          end_line=fix.end_line - span.first_line + 1)
            else:
                fix = None
        return dataclasses.replace(d, line=d.line - span.first_line + 1, end_line=end_line, end_column=end_column,
                                   fix=fix, cell=span.number)

    def _clamp(self, span: CellSpan, line: int, column: int) -> Tuple[int, int]:
        if span.holds(line):
            return line - span.first_line + 1, column
        last = span.first_line + span.line_count - 1
        text = split_lines(self.text)[last - 1].rstrip("\r\n")
        return span.line_count, len(text) + 1

    def split(self, fixed: str) -> List[str]:
        """The cells' code in a fixed version of this program; ValueError if its markers do not line up."""
        chunks: List[List[str]] = []
        for line in split_lines(fixed)[1:]:
            if line.rstrip("\r\n") == self.marker:
                chunks.append([])
            elif chunks:
                chunks[-1].append(line)
            else:
                raise ValueError("text before the first cell marker")
        if len(chunks) != len(self.cells):
            raise ValueError("the cell markers were changed")
        out = []
        for span, chunk in zip(self.cells, chunks):
            if span.header:
                if not chunk or chunk[0] != HEADER:
                    raise ValueError("the header of an indented cell was changed")
                chunk = chunk[1:]
            out.append("".join(chunk))
        return out


def build_program(codes: Sequence[Tuple[int, str]]) -> Program:
    """One program from ``(number, plain Python)`` cells (already neutralized)."""
    nonce = hashlib.blake2b("\0".join(c for _, c in codes).encode("utf-8", "surrogatepass"), digest_size=8)
    marker = "# torchcopy-lint cell " + nonce.hexdigest()
    parts = [PREAMBLE]
    spans = []
    line = 2
    for number, code in codes:
        lines = split_lines(code)
        header = _starts_indented(lines)
        parts.append(marker + "\n" + (HEADER if header else ""))
        line += 1 + header
        parts.append(code if not code or code.endswith(("\n", "\r")) else code + "\n")
        spans.append(CellSpan(number, line, len(lines), header))
        line += len(lines)
    return Program("".join(parts), tuple(spans), marker)


def _starts_indented(lines: Sequence[str]) -> bool:
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return line[:1] in (" ", "\t", "\f")
    return False


def _blank(code: str) -> str:
    """The same number of lines, all empty."""
    return "".join(line[len(line.rstrip("\r\n")):] for line in split_lines(code))


Lint = Callable[[bytes, str], List[Diagnostic]]  # (program source, path) -> diagnostics


@dataclass
class Analysis:
    """The cells prepared for linting: neutralized, with the broken ones found and blanked."""

    cells: List[Tuple[int, str]]
    neutral: List[Neutralized]
    broken: Dict[int, Diagnostic]
    program: Program
    diagnostics: List[Diagnostic]  # of the last lint, in cell coordinates

    def reported(self) -> List[Diagnostic]:
        """What a lint of the cells reports: the broken cells' TCL001 and the last lint's, sorted."""
        return sorted(list(self.broken.values()) + self.diagnostics, key=lambda d: d.sort_key)

    def codes(self) -> List[Tuple[int, str]]:
        return [(n, _blank(x.code) if n in self.broken else x.code) for (n, _), x in zip(self.cells, self.neutral)]


def analyse(cells: Cells, path: str, lint: Lint) -> Analysis:
    """Neutralize, find the cells that do not parse (blanking each), and lint what is left.

    The whole program is linted first; only when it does not parse is each cell parsed
    on its own to find the culprits (a cell can also be cut off where the scan sees it:
    an open bracket or string at its end would swallow the next cell).
    """
    cells = list(cells)
    neutral = [neutralize(text) for _, text in cells]
    errors = [(n, x.error or _encoding_error(text)) for (n, text), x in zip(cells, neutral)]
    broken = {n: _cell_error(path, n, error) for n, error in errors if error is not None}
    analysis = Analysis(cells, neutral, broken, build_program([]), [])
    for attempt in range(2):
        program = analysis.program = build_program(analysis.codes())
        found = [program.cell_diagnostic(d) for d in lint(program.text.encode("utf-8"), path)]
        analysis.diagnostics = found
        if attempt or not any(d.code == SYNTAX_ERROR_CODE for d in found):
            break
        culprits = {n: error for (n, _), x in zip(cells, neutral)
                    if n not in broken for error in [_parse_error(x.code)] if error is not None}
        if not culprits:
            break  # the error is between cells: report it as the program's
        broken.update((n, _cell_error(path, n, error)) for n, error in culprits.items())
    return analysis


def _cell_error(path: str, number: int, error: Tuple[int, int, str]) -> Diagnostic:
    line, column, message = error
    return Diagnostic(path, line, column, line, column, SYNTAX_ERROR_CODE, f"syntax error: {message}", cell=number)


def _encoding_error(text: str) -> Optional[Tuple[int, int, str]]:
    """A lone surrogate (JSON allows ``\\ud800``) cannot be UTF-8: such a cell is not linted, nor changed."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as error:
        before = split_lines(text[:error.start] + "x")
        return len(before), len(before[-1]), f"unpaired surrogate {text[error.start]!r} (not valid UTF-8)"


def _parse_error(code: str) -> Optional[Tuple[int, int, str]]:
    """Where and why one cell (neutralized) does not parse on its own; None if it parses."""
    import libcst as cst

    from ..engine import syntax_error_diagnostic

    header = _starts_indented(split_lines(code))
    text = (HEADER if header else "") + code
    try:
        cst.parse_module(text)
        return None
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as error:
        d = syntax_error_diagnostic("", error, text)
    message = d.message[len("syntax error: "):] if d.message.startswith("syntax error: ") else d.message
    return max(1, d.line - header), d.column, message


def lint_cells_with(cells: Cells, path: str, lint: Lint) -> List[Diagnostic]:
    """Diagnostics of code cells linted as one program by ``lint`` (program bytes, path -> diagnostics),
    in cell coordinates (``Diagnostic.cell`` = the number given with the cell), broken cells as TCL001."""
    return analyse(cells, path, lint).reported()


def restore_cells(analysis: Analysis, fixed_program: str) -> List[str]:
    """The cells' new texts after a fix of ``analysis.program``: IPython lines and broken cells put back.

    Raises ValueError if the fixed program cannot be cut back into cells, or a fix touched a magic line.
    """
    out = []
    for (number, text), neutral, new in zip(analysis.cells, analysis.neutral, analysis.program.split(fixed_program)):
        if not neutral.code.endswith(("\n", "\r")) and new.endswith("\n"):
            new = new[:-1]  # the newline the program added after the cell
        if number in analysis.broken or new == neutral.code:
            out.append(text)
        else:
            out.append(_put_back(text, neutral, new))
    return out


def _put_back(text: str, neutral: Neutralized, new: str) -> str:
    """``new`` (a fixed neutralized cell) with the neutralized IPython lines back as they were in ``text``."""
    if not neutral.changed_lines:
        return new
    original, plain, fixed = split_lines(text), split_lines(neutral.code), split_lines(new)
    where: Dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, plain, fixed, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            where[block.a + k] = block.b + k
    for line in neutral.changed_lines:
        if line not in where:
            raise ValueError("a fix changed an IPython magic line")
        fixed[where[line]] = original[line]
    return "".join(fixed)


