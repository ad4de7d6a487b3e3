"""IPython syntax in a code cell, made plain Python without moving anything.

IPython rewrites some lines before Python sees them: line magics (``%time f()``),
shell escapes (``!pip install x``, ``!!ls``), help (``?x``, ``x?``, ``x??``),
autocall escapes (``/f x``, ``,f a b``, ``;f a b``), magic and shell assignments
(``files = !ls``, ``t = %timeit -o f()``) and cell magics (``%%bash`` on a cell's
first line). Each such span is replaced by Python of exactly the same length
(``pass`` or ``None`` padded with spaces, or a comment), so every other character of
the cell keeps its line and column and positions map back one to one.

These escapes are recognised only where IPython recognises them: at the start of a
logical line (not inside a string, brackets or a backslash continuation). No valid
Python line starts with one of them, so plain Python is never touched.

Cell magics whose body is Python run in the user's namespace (``%%time``,
``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug``): only their first line is
neutralized and the body is linted. Any other cell magic (``%%bash``,
``%%writefile``, ...) holds another language: the whole cell becomes comments.

While scanning, the brackets, strings and continuations still open at the end of
the cell are tracked: a cell that ends inside one does not run in IPython, and
concatenated with the next cell it would swallow it, so it is reported as broken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_ESCAPES = ("%", "!", "?", "/", ",", ";")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
# `a = !cmd`, `a, b = %magic ...`: IPython's magic/shell assignment (targets are names or attributes).
_ASSIGNMENT = re.compile(r"[ \t\f]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*(?=[%!])")
_SPECIAL = re.compile(r"[#'\"()\[\]{}\\]")  # what changes the lexical state outside strings
_CELL_MAGIC = re.compile(r"[ \t\f]*%%(\w*)")


@dataclass(frozen=True)
class Neutralized:
    """A cell as plain Python, with what the scan found."""

    code: str  # same lines and columns as the cell
    changed_lines: Tuple[int, ...]  # 0-based lines rewritten (magics), to restore after fixing
    error: Optional[Tuple[int, int, str]] = None  # (1-based line, 1-based column, message) if the cell is cut off


def split_lines(text: str) -> List[str]:
    """Lines with their endings, split where Python's tokenizer splits (\\n, \\r\\n, \\r only)."""
    lines = _LINE.findall(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _ending(line: str) -> Tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def _filler(width: int, statement: bool) -> str:
    """Valid Python of exactly ``width`` characters: a statement (``pass``) or an expression (``None``)."""
    word = "pass" if statement else "None"
    if width >= 4:
        return word + " " * (width - 4)
    return ("...", "0 ", "0")[3 - width] if width else ""


def _comment(body: str) -> str:
    return "#" + body[1:] if body else body


@dataclass
class _State:
    """Lexical state between lines: an open string, open brackets, a backslash continuation."""

    quote: str = ""  # the delimiter of a string still open at the end of the line
    quote_at: Tuple[int, int] = (0, 0)
    brackets: List[Tuple[str, int, int]] = field(default_factory=list)  # (bracket, line, column), innermost last
    continued: bool = False

    @property
    def at_statement_start(self) -> bool:
        return not self.quote and not self.brackets and not self.continued


def _scan(body: str, number: int, state: _State) -> None:
    """Advance ``state`` over one line (without its ending)."""
    i, n = 0, len(body)
    state.continued = False
    while i < n:
        if state.quote:
            close = body.find(state.quote, i)
            escape = body.find("\\", i)
            if escape != -1 and (close == -1 or escape < close):
                if escape == n - 1 and len(state.quote) == 1:
                    return  # a single-quoted string continued on the next line
                i = escape + 2
                continue
            if close == -1:
                if len(state.quote) == 1:
                    state.quote = ""  # unterminated: the parser reports it
                return
            i = close + len(state.quote)
            state.quote = ""
            continue
        match = _SPECIAL.search(body, i)
        if match is None:
            return
        i = match.start()
        char = body[i]
        if char == "#":
            return
        if char in "'\"":
            triple = body[i:i + 3]
            state.quote = triple if triple in ("'''", '"""') else char
            state.quote_at = (number, i + 1)
            i += len(state.quote)
            continue
        if char in "([{":
            state.brackets.append((char, number, i + 1))
        elif char in ")]}" and state.brackets:
            state.brackets.pop()
        elif char == "\\" and i == n - 1:
            state.continued = True
        i += 1


def _code_part(body: str) -> str:
    """``body`` up to a comment that is outside strings (for the trailing-``?`` help syntax)."""
    quote = ""
    i = 0
    while i < len(body):
        char = body[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if body.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
        elif char == "#":
            return body[:i]
        elif char in "'\"":
            quote = body[i:i + 3] if body[i:i + 3] in ("'''", '"""') else char
            i += len(quote)
            continue
        i += 1
    return body


def neutralize(cell: str) -> Neutralized:
    """The cell with IPython syntax replaced by same-length Python (see the module docstring)."""
    lines = split_lines(cell)
    out: List[str] = []
    changed: List[int] = []
    state = _State()
    i = 0
    magic = _cell_magic(lines)
    if magic is not None:
        index, name = magic
        if name not in PYTHON_CELL_MAGICS:
            neutral = [_comment(_ending(line)[0]) + _ending(line)[1] for line in lines]
            return Neutralized("".join(neutral), tuple(k for k, line in enumerate(lines) if neutral[k] != line))
        out.extend(lines[:index])
        body, end = _ending(lines[index])
        indent = len(body) - len(body.lstrip(" \t\f"))
        out.append(body[:indent] + _filler(len(body) - indent, True) + end)
        changed.append(index)
        i = index + 1
    while i < len(lines):
        body, end = _ending(lines[i])
        stripped = body.lstrip(" \t\f")
        indent = len(body) - len(stripped)
        if state.at_statement_start and stripped and not stripped.startswith("#"):
            replacement = _escape_line(body, stripped, indent)
            if replacement is not None:
                out.append(replacement + end)
                changed.append(i)
                i += 1
                while body.endswith("\\") and i < len(lines):  # IPython joins continued escape lines
                    body, end = _ending(lines[i])
                    out.append(_comment(body) + end)
                    changed.append(i)
                    i += 1
                continue
        _scan(body, i + 1, state)
        out.append(lines[i])
        i += 1
    return Neutralized("".join(out), tuple(changed), _open_at_end(state, len(lines)))


def _cell_magic(lines: List[str]) -> Optional[Tuple[int, str]]:
    """(line index, magic name) when the cell's first non-blank line is a ``%%magic``."""
    for index, line in enumerate(lines):
        if line.strip():
            match = _CELL_MAGIC.match(line)
            return (index, match.group(1)) if match else None
    return None


def _escape_line(body: str, stripped: str, indent: int) -> Optional[str]:
    """The neutralized line when it is IPython syntax, else None."""
    if stripped.startswith(_ESCAPES):
        return body[:indent] + _filler(len(stripped), True)
    match = _ASSIGNMENT.match(body)
    if match is not None:
        return body[:match.end()] + _filler(len(body) - match.end(), False)
    if "?" in stripped and _code_part(stripped).rstrip().endswith("?"):
        return body[:indent] + _filler(len(stripped), True)
    return None


def _open_at_end(state: _State, line_count: int) -> Optional[Tuple[int, int, str]]:
    if state.quote:
        line, column = state.quote_at
        return line, column, "unterminated triple-quoted string literal (the cell ends inside it)"
    if state.brackets:
        char, line, column = state.brackets[-1]
        return line, column, f"'{char}' was never closed (the cell ends inside it)"
    if state.continued:
        return line_count, 1, "unexpected end of cell after a backslash continuation"
    return None
