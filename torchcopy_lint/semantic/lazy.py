"""Lazy summaries: a module's classes and functions, each summarized when first asked for (summaries.py).

A cold run asks for a few dozen of the thousands of definitions in the modules it imports (torch's own sources:
147 modules read, 2,878 classes and functions, 156 asked for); summarizing them all took ~2 s of CPU. A pending
definition keeps where it is in its module's bytes, not its ``ast`` (thousands of nodes per module, alive for the
whole run, that every garbage collection would walk), and is parsed again alone when asked for.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional

from ..source.precheck import compiler_warnings_ignored, parsed_or_none

class _Pending:
    """An entry not summarized yet: how to, from what."""

    __slots__ = ("build", "node")

    def __init__(self, build: Callable[[Any], Dict[str, Any]], node: Any) -> None:
        self.build, self.node = build, node


class Text:
    """A module's bytes, from which a definition not summarized yet is read again when asked for (its ``ast``
    is not kept: thousands of nodes per module, alive for the whole run, that every collection would walk)."""

    __slots__ = ("source", "_starts")

    def __init__(self, source: bytes) -> None:
        self.source = source
        self._starts: Optional[List[int]] = None

    def locate(self, node: ast.stmt) -> "Located":
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        return Located(self, first, node.end_lineno or node.lineno, node.lineno, node.col_offset)

    def lines(self, first: int, last: int) -> bytes:
        if self._starts is None:
            self._starts = _line_starts(self.source)
        starts = self._starts
        end = starts[last] if last < len(starts) else len(self.source)
        return self.source[starts[first - 1]:end]


class Located:
    """Where a definition is in its module: its lines (decorators included), its ``def``/``class`` line and column."""

    __slots__ = ("text", "first", "last", "line", "column")

    def __init__(self, text: Text, first: int, last: int, line: int, column: int) -> None:
        self.text, self.first, self.last, self.line, self.column = text, first, last, line, column

    def read(self) -> ast.stmt:
        """The definition's ``ast``: its lines parsed alone (inside ``if 1:`` when indented), else the module's."""
        segment = self.text.lines(self.first, self.last)
        try:
            with compiler_warnings_ignored():
                tree = ast.parse(b"if 1:\n" + segment if self.column else segment)
            node = tree.body[0].body[0] if self.column else tree.body[0]  # type: ignore[attr-defined]
            if isinstance(node, _DEFINITIONS):
                return node
        except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, OverflowError, IndexError, AttributeError):
            pass  # an encoding declaration, a line continued from the one before: the whole module
        tree = parsed_or_none(self.text.source)
        for stmt in ast.walk(tree) if tree is not None else ():
            if isinstance(stmt, _DEFINITIONS) and (stmt.lineno, stmt.col_offset) == (self.line, self.column):
                return stmt
        raise LookupError(f"no definition at line {self.line}")  # the bytes changed under the summary: a bug


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _line_starts(source: bytes) -> List[int]:
    """The offset of every line's first byte, as ``ast`` counts lines (``\\n``, ``\\r\\n`` or ``\\r``)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class LazyEntries(Mapping):
    """A module's classes or functions by name, each summarized when first asked for; a redefinition
    replaces the entry (the last one wins, as Python binds the name), in the first one's place."""

    def __init__(self) -> None:
        self._entries: Dict[str, Any] = {}

    def define(self, name: str, build: Callable[[Any], Dict[str, Any]], node: Any) -> None:
        self._entries[name] = _Pending(build, node)

    def __setitem__(self, name: str, value: Dict[str, Any]) -> None:
        self._entries[name] = value

    def __getitem__(self, name: str) -> Dict[str, Any]:
        found = self._entries[name]
        if found.__class__ is _Pending:
            node = found.node.read() if found.node.__class__ is Located else found.node
            try:
                built = found.build(node)
            except RecursionError:  # nested too deeply to follow: its signature only
                built = found.build(signature_only(node))
            found = self._entries[name] = built
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def summarized(self) -> Dict[str, Optional[Dict[str, Any]]]:
        """The entries as JSON, None for one not summarized yet (nothing is summarized for this)."""
        return {name: None if value.__class__ is _Pending else value for name, value in self._entries.items()}


def signature_only(node: Any) -> Any:
    """A def or class without its body (``pass``), for one too deeply nested to summarize."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node
    shallow = copy.copy(node)
    shallow.body = [ast.Pass()]
    return shallow


def as_json(summary: Dict[str, Any]) -> Dict[str, Any]:
    """``summary`` as plain JSON: its lazy entries as they stand (None: not summarized yet)."""
    return {key: value.summarized() if isinstance(value, LazyEntries) else value for key, value in summary.items()}


