"""Parse only what the rules can look at: blank out the rest, keeping every position.

A LibCST tree costs ~500 bytes of memory and ~2 us per byte of source, and most of
a file that passed the prefilter is irrelevant: the trigger text sits in one or
two functions. Before the LibCST parse, CPython's ``ast`` (C speed) finds

- top-level functions and classes in which no rule's trigger occurs: their bodies
  become ``0`` (the header, with its name, bases, decorators and return
  annotation, stays: the semantic model reads those);
- inside a large class that is kept, methods with no trigger and no write to a
  ``self`` attribute (the semantic model reads those for ``self.x``);
- inside a large kept statement, the elements of big literal lists/dicts/tuples
  that contain no trigger (the semantic model never looks inside them).

A blanked span is replaced by text that ends at the same column, and the lines
inside it are cut out (LibCST would build a node for each blank line: on torch they
were 232k of the 353k lines it parsed), so every kept node has its column and, mapped
back through ``Pruned``, its line in the full file: diagnostics are identical to a full
parse (tests/test_prune.py). ``prune`` keeps every line instead (a text with the
same positions). Pruning is for reporting only; ``--fix`` always parses the whole file.

The top-level statements the structural prefilter rules out (structure.py: big inert
statements, a data table) are cut out whole instead, lines and all, so that LibCST never
sees them however big they are; ``Pruned`` maps the lines of the rest back.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Collection, List, Optional, Sequence, Tuple

from ..source.precheck import compiler_warnings_ignored

Matcher = Callable[[bytes], bool]
NodeMatcher = Callable[[bytes, ast.AST], bool]  # a segment's text and its node (structure.py refines by shape)
Edit = Tuple[int, int, int, int, bytes]  # start line, start col, end line, end col (1-based lines, byte cols)

MIN_FILE_SIZE = 8_000  # below this, pruning does not pay for the ast parse
LARGE_NODE = 16_000  # kept statements bigger than this are pruned inside
LARGE_CLASS = 2_000  # kept classes (and guard blocks) bigger than this are pruned method by method
#: Top-level statements whose blocks may hold definitions (`if TYPE_CHECKING:`, `try: import x`).
_GUARDS = (ast.If, ast.Try, ast.With)
# Conservative: anything that might assign a `self` attribute (what the semantic model reads for
# `self.x`) keeps its method: `self.x = ...`, `self.x += ...`, `self.x: T`, `self.a, self.b = ...`, `self.x[k] = ...`.
_SELF_WRITE = re.compile(
    rb"self\s*\.\s*\w+\s*(?:[-+*/@%&|^]|\*\*|//|>>|<<)?=(?!=)"
    rb"|self\s*\.\s*\w+\s*,[^\n]*?(?<![=!<>])=(?!=)"
    rb"|self\s*\.\s*\w+\s*:(?!=)"
    rb"|self\s*\.\s*\w+\s*\[[^\n]*?\]\s*=(?!=)"  # item stores: what a self.x mapping holds
    rb"|register_(?:buffer|parameter)"
)
_END = float("inf")
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def prune(source: bytes, matches: Matcher, tree: Optional[ast.Module] = None) -> Optional[bytes]:
    """``source`` with the spans no rule can need blanked; None when pruning does not apply.

    ``tree`` is ``source``'s CPython AST when the caller has it already."""
    pruned = prune_file(source, lambda segment, node: matches(segment), tree, cut_lines=False)
    return pruned.text if pruned is not None else None


@dataclass
class Pruned:
    """A pruned text, the lines of the original cut out of it (first, last; 1-based, ascending), and the lines of
    the original spans blanked in it (a node that reaches into one prints differently from the file's)."""

    text: bytes
    removed: List[Tuple[int, int]] = field(default_factory=list)
    blanked: List[Tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._marks: List[int] = [0]  # pruned lines from which ``_shifts`` applies
        self._shifts: List[int] = [0]
        self._firsts: List[int] = []  # the first original line of each removed range
        for first, last in self.removed:
            self._marks.append(first - self._shifts[-1])
            self._shifts.append(self._shifts[-1] + last - first + 1)
            self._firsts.append(first)

    def original_line(self, line: int) -> int:
        """The original line of a line of ``text``."""
        return line + self._shifts[bisect_right(self._marks, line) - 1]

    def pruned_line(self, line: int) -> int:
        """The line of ``text`` of an original line that was kept."""
        return line - self._shifts[bisect_right(self._firsts, line)]

    def reaches_blanked(self, first: int, last: int) -> bool:
        """Whether original lines ``first``..``last`` hold a line of a blanked span (spans are disjoint: sorted by
        their first lines, their last lines ascend too)."""
        at = bisect_right(self.blanked, (last, _END)) - 1  # the last span starting at or before ``last``
        return at >= 0 and self.blanked[at][1] >= first

    def is_removed(self, line: int) -> bool:
        """Whether the original line ``line`` was cut out."""
        at = bisect_right(self._firsts, line) - 1
        return at >= 0 and line <= self.removed[at][1]


def prune_file(source: bytes, matches: Optional[NodeMatcher], tree: Optional[ast.Module] = None,
               drop: Collection[int] = (), cut_lines: bool = True) -> Optional[Pruned]:
    """``prune``, and the top-level statements of ``tree`` numbered in ``drop`` cut out, whole lines
    and all (structure.py decides which); None when neither applies. ``matches`` None: cut only.
    ``cut_lines``: the lines inside a blanked span are cut out too (``Pruned`` maps lines back)."""
    if source.startswith(b"\xef\xbb\xbf") or not declares_utf8(source):
        return None
    if len(source) < MIN_FILE_SIZE:
        matches = None
    if drop and b"\r" in source:
        drop = ()  # one newline convention: LibCST infers the module's from the first line
    if matches is None and not drop:
        return None
    if tree is None:
        try:
            with compiler_warnings_ignored():
                tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None  # the LibCST parse reports it
    lines = source.splitlines(keepends=True)
    if not lines or any(line.endswith(b"\r") and not line.endswith(b"\r\n") for line in lines):
        return None  # old-Mac newlines: ast and LibCST may count lines differently
    # lines inside a blanked span are cut out too (LibCST builds a node for each blank line), unless the file has
    # a carriage return: LibCST takes the module's newline from its first line
    pruner = _Pruner(lines, matches or (lambda segment, node: True), cut_lines=cut_lines and b"\r" not in source)
    removed: List[Tuple[int, int]] = []
    for index, node in enumerate(tree.body):
        if index in drop and not (node.lineno > 1 and lines[node.lineno - 2].rstrip(b"\n").endswith(b"\\")):
            removed.append((node.lineno, node.end_lineno))  # type: ignore[arg-type]
        elif matches is not None:
            pruner.top_level(node)
    del tree
    if not pruner.edits and not removed:
        return None
    text, removed = pruner.apply(removed)
    if removed and not declares_utf8(text):
        return None  # a coding comment moved up to the first two lines
    return Pruned(text, removed, sorted((edit[0], edit[2]) for edit in pruner.edits))


def declares_utf8(source: bytes) -> bool:
    """Whether the source is UTF-8 by its PEP 263 declaration (or by default).

    ast columns are UTF-8 offsets: only files whose bytes are UTF-8 are pruned."""
    for line in source.split(b"\n", 2)[:2]:
        found = _CODING.match(line)
        if found:
            return found.group(1).lower().replace(b"_", b"-") in (b"utf-8", b"utf8")
    return True


class _Pruner:
    def __init__(self, lines: List[bytes], matches: NodeMatcher, cut_lines: bool = False) -> None:
        self.lines = lines
        self.matches = matches
        self.cut_lines = cut_lines
        self.edits: List[Edit] = []

    def text(self, node: ast.AST, whole_lines: bool = False) -> bytes:
        start = _first_line(node)
        end = node.end_lineno  # type: ignore[attr-defined]
        if whole_lines or start != end:
            return b"".join(self.lines[start - 1:end])
        return self.lines[start - 1][node.col_offset:node.end_col_offset]  # type: ignore[attr-defined]

    def top_level(self, node: ast.stmt) -> None:
        text = self.text(node, whole_lines=True)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not self.matches(text, node):
                self.stub_body(node)
            elif isinstance(node, ast.ClassDef) and len(text) > LARGE_CLASS:
                self.prune_class(node)
            elif len(text) > LARGE_NODE:
                self.shrink(node)
        elif isinstance(node, _GUARDS) and len(text) > LARGE_CLASS and self.matches(text, node):
            for block in _blocks(node):  # `if HAS_X:` / `try:` around definitions: each as if at the top level
                for stmt in block:
                    self.top_level(stmt)
        elif len(text) > LARGE_NODE:
            self.shrink(node)

    def prune_class(self, cls: ast.ClassDef) -> None:
        for stmt in cls.body:
            text = self.text(stmt, whole_lines=True)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not self.matches(text, stmt) and not _SELF_WRITE.search(text):
                    self.stub_body(stmt)
            elif isinstance(stmt, ast.ClassDef) and len(text) > LARGE_CLASS:
                if self.matches(text, stmt):
                    self.prune_class(stmt)
                elif not _SELF_WRITE.search(text):
                    self.stub_body(stmt)

    def stub_body(self, node) -> None:
        first, last = node.body[0], node.body[-1]
        if first.lineno == node.lineno and not getattr(node, "decorator_list", None):
            return  # `def f(): ...` on one line: nothing to gain
        start = _first_line(first)  # a decorated first statement starts at its decorator
        if start <= _header_end(node):
            return
        line = self.lines[start - 1]
        indent = len(line) - len(line.lstrip(b" \t"))
        self.blank(start, indent, last.end_lineno, last.end_col_offset, b"0")

    def shrink(self, node: ast.AST) -> None:
        """Blank trigger-free elements of big literals (data tables) inside a kept statement."""
        for child in ast.iter_child_nodes(node):
            if not hasattr(child, "end_lineno"):
                continue
            if isinstance(node, (ast.For, ast.AsyncFor)) and child is node.iter:
                continue  # the semantic model reads what a loop iterates over
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "parametrize":
                continue  # ... and what a test's parameter takes (semantic/parametrize.py)
            if len(self.text(child)) < LARGE_NODE:
                continue
            if isinstance(child, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and _blankable(node, child):
                self.shrink_literal(child)
            else:
                self.shrink(child)

    def shrink_literal(self, literal: ast.expr) -> None:
        items: Sequence[Optional[ast.expr]]
        if isinstance(literal, ast.Dict):
            items = [k for k in literal.keys] + list(literal.values)
        else:
            items = literal.elts  # type: ignore[attr-defined]
        for item in items:
            if item is None or isinstance(item, ast.Starred):
                continue
            text = self.text(item)
            if not self.matches(text, item):
                if len(text) > 8:
                    self.blank(item.lineno, item.col_offset, item.end_lineno, item.end_col_offset, b"0")  # type: ignore[arg-type]
            elif len(text) > LARGE_NODE:
                self.shrink(item)

    def blank(self, start_line: int, start_col: int, end_line: int, end_col: int, replacement: bytes) -> None:
        self.edits.append((start_line, start_col, end_line, end_col, replacement))

    def apply(self, removed: Sequence[Tuple[int, int]] = ()) -> Tuple[bytes, List[Tuple[int, int]]]:
        """The text with the edits made and the lines of ``removed`` cut out, and the lines cut out (ascending):
        ``removed`` and, with ``cut_lines``, the lines inside each blanked span of several lines (its first line
        holds the replacement; its last one stays if code or a comment follows the span on it)."""
        lines = list(self.lines)
        cut: List[Tuple[int, int]] = list(removed)
        for start_line, start_col, end_line, end_col, replacement in sorted(self.edits, reverse=True):
            first = lines[start_line - 1]
            last = lines[end_line - 1]
            if start_line == end_line:
                width = end_col - start_col
                lines[start_line - 1] = first[:start_col] + replacement.ljust(width) + first[end_col:]
                continue
            newline_first = first[len(first.rstrip(b"\r\n")):] or b"\n"
            lines[start_line - 1] = first[:start_col] + replacement + newline_first
            for i in range(start_line, end_line - 1):
                lines[i] = b"\n"
            rest = last[end_col:]
            lines[end_line - 1] = b" " * end_col + rest
            if self.cut_lines:
                keep_last = bool(rest.strip())
                if end_line - 1 > start_line or not keep_last:
                    cut.append((start_line + 1, end_line - 1 if keep_last else end_line))
        cut.sort()
        for first_line, last_line in reversed(cut):
            del lines[first_line - 1:last_line]
        return b"".join(lines), cut


def _blocks(node: ast.stmt) -> List[List[ast.stmt]]:
    blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]  # type: ignore[attr-defined]
    blocks += [handler.body for handler in getattr(node, "handlers", [])]
    return blocks


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])  # type: ignore[attr-defined]


def _header_end(node) -> int:
    """Last line of a def/class header (its signature may span lines)."""
    candidates = [node.lineno]
    for part in ast.iter_child_nodes(node):
        if part in node.body or part in getattr(node, "decorator_list", []):
            continue
        if hasattr(part, "end_lineno"):
            candidates.append(part.end_lineno)
    return max(candidates)


def _blankable(parent: ast.AST, literal: ast.AST) -> bool:
    """Literals whose elements the semantic model may read (iterated, unpacked) are kept whole."""
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is literal:
        return False
    if isinstance(parent, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in parent.targets):
        return False
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is literal \
            and _is_tensor_constructor(parent.func) \
            and not any(isinstance(e, _DATA_ELEMENTS) for e in getattr(literal, "elts", ())):
        return False  # `torch.tensor([a, b])`: TCL107 asks whether every element is a tensor
    return True


_DATA_ELEMENTS = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.UnaryOp)


def _is_tensor_constructor(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in ("tensor", "as_tensor")
