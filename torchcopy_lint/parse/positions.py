"""Source positions of a few chosen nodes, computed by code generation.

LibCST's PositionProvider records the position of every node in a module; the
engine needs the positions of the handful of nodes it reports (and their fix
targets) only, so this records just those. When CPython's AST of the same text
says on which line each top-level statement starts, only the statements that hold
a target are generated (``positions_in_statements``; on a 1,000-line file with 48
findings: 26 ms -> a few ms); a statement whose own start disagrees with the AST
turns this off. tests/test_positions.py checks the answers against PositionProvider's.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState  # private, but stable across 1.x (pinned <2)
from libcst.metadata import CodePosition, CodeRange

from ..walk import StatementMemo

_NEWLINE = re.compile(r"\r\n?|\n")


class _TargetPositions(CodegenState):
    """Code generation that records the positions of a few nodes only.

    LibCST's PositionProvider records every node's position, tracking line and
    column token by token; here tokens are just collected, and the line/column
    is brought up to date only when a target node starts or ends. Positions are
    the same as PositionProvider's (syntactic where the node records one, else
    whitespace-inclusive): tests/test_positions.py compares them.
    """

    def __init__(self, module: cst.Module, targets: Iterable[cst.CSTNode], line: int = 1) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets: Set[int] = {id(node) for node in targets}
        self.found: Dict[int, CodeRange] = {}
        self._open: List[CodePosition] = []
        self._synced = 0
        self._line = line  # where the generated code starts (a top-level statement's first line)
        self._column = 0

    def _now(self) -> CodePosition:
        tokens = self.tokens
        for token in tokens[self._synced:]:
            if "\n" in token or "\r" in token:
                segments = _NEWLINE.split(token)
                self._line += len(segments) - 1
                self._column = len(segments[-1])
            else:
                self._column += len(token)
        self._synced = len(tokens)
        return CodePosition(self._line, self._column)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._open.append(self._now())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            start = self._open.pop()
            self.found.setdefault(id(node), CodeRange(start, self._now()))

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> Iterator[None]:
        if id(node) not in self.targets:
            yield
            return
        for hoisted in (start_node, end_node):
            if hoisted is not None:
                self.targets.add(id(hoisted))
        start = self._now()
        yield
        end = self._now()
        if start_node is not None:
            start = self.found[id(start_node)].start
        if end_node is not None:
            end = self.found[id(end_node)].end
        self.found[id(node)] = CodeRange(start, end)


def positions_of(module: cst.Module, targets: Iterable[cst.CSTNode]) -> Dict[int, CodeRange]:
    """Positions (by node id) of ``targets``, nodes of ``module``."""
    state = _TargetPositions(module, targets)
    module._codegen(state)
    return state.found


#: Lines of the statements of a block, from CPython's AST: per statement (first line with
#: decorators, line of its keyword, the same for the statements directly in its body if it is a
#: def or class, else None).
AstLines = List[Tuple[int, int, Optional[list]]]


@dataclass
class StatementStart:
    """Where a statement of LibCST's tree starts: the line its code starts on (its leading blank
    and comment lines included), the line its own syntax starts on (its keyword, after decorators),
    and, for a def or class, the same for the statements directly in its body."""

    code_line: int
    keyword_line: int
    inner: Optional[List["StatementStart"]] = None


StatementStarts = List[StatementStart]


def ast_statement_lines(tree: Optional[ast.Module]) -> Optional[AstLines]:
    """The lines of the top-level statements of CPython's AST (and of those in the bodies of
    top-level defs and classes): small, so that the AST need not outlive the LibCST parse."""
    return None if tree is None else _ast_lines(tree.body, 2)


def _ast_lines(body: List[ast.stmt], depth: int) -> AstLines:
    out: AstLines = []
    for s in body:
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", None) or ()])
        inner = _ast_lines(s.body, depth - 1) \
            if depth > 1 and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
        out.append((first, s.lineno, inner))
    return out


def statement_starts(module: cst.Module, lines: Optional[AstLines]) -> Optional[StatementStarts]:
    """Where each of ``module.body`` (and the bodies of its defs and classes) starts, from ``lines``
    (``ast_statement_lines`` of the same text); None when the two do not pair up."""
    return None if lines is None else _pair(module.body, lines)


def _pair(statements: Sequence[cst.BaseStatement], lines: AstLines) -> Optional[StatementStarts]:
    """LibCST's statements against the AST's: a ``a; b`` line is one of LibCST's, two of the AST's."""
    starts: StatementStarts = []
    index = 0
    for statement in statements:
        if index >= len(lines):
            return None
        first_line, keyword_line, inner_lines = lines[index]
        inner = None
        body = getattr(statement, "body", None)
        if inner_lines is not None and isinstance(body, cst.IndentedBlock):
            inner = _pair(body.body, inner_lines)
        starts.append(StatementStart(first_line - len(statement.leading_lines), keyword_line, inner))
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return starts if index == len(lines) else None


def holder_of(stack: Sequence[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The statement ``positions_in_statements`` generates for a node reported with this visiting
    stack: the top-level statement, or the statement directly in a top-level def's or class's body."""
    if len(stack) > 3 and isinstance(stack[1], (cst.FunctionDef, cst.ClassDef)) and stack[2] is stack[1].body \
            and isinstance(stack[2], cst.IndentedBlock):
        return stack[3]
    return stack[1] if len(stack) > 1 else None


def _places(module: cst.Module, starts: StatementStarts) -> Dict[int, Tuple[cst.CSTNode, StatementStart, Optional[str]]]:
    """Statement id -> (statement, its start, the indent of its block; None at the top)."""
    places: Dict[int, Tuple[cst.CSTNode, StatementStart, Optional[str]]] = {}
    for statement, start in zip(module.body, starts):
        places[id(statement)] = (statement, start, None)
        if start.inner is not None:
            block = statement.body  # type: ignore[attr-defined]
            indent = module.default_indent if block.indent is None else block.indent
            for inner, inner_start in zip(block.body, start.inner):
                places[id(inner)] = (inner, inner_start, indent)
    return places


def positions_in_statements(module: cst.Module, targets: Sequence[cst.CSTNode], holders: Sequence[cst.CSTNode],
                            starts: StatementStarts) -> Optional[Dict[int, CodeRange]]:
    """``positions_of`` by generating only the statements in ``holders`` (``holders[i]`` holds
    ``targets[i]``; see ``holder_of``). None when a target is not where it was said to be or a
    statement's start disagrees with ``starts``: the caller then generates the whole module."""
    places = _places(module, starts)
    wanted: Dict[int, List[cst.CSTNode]] = {}
    for target, holder in zip(targets, holders):
        if id(holder) not in places:
            return None
        wanted.setdefault(id(holder), []).append(target)
    found: Dict[int, CodeRange] = {}
    style = (module.default_indent, module.default_newline)
    for holder_id, inside in wanted.items():
        statement, start, indent = places[holder_id]
        relative = _GENERATED.get(statement, (indent, style))
        if relative is None or not all(id(target) in relative for target in inside):
            state = _TargetPositions(module, [*inside, statement], line=1)
            if indent is not None:
                state.increase_indent(indent)
            statement._codegen(state)
            relative = _GENERATED.put(statement, (indent, style), state.found)
        own = relative.get(id(statement))
        if own is None or own.start.line + start.code_line - 1 != start.keyword_line:
            return None
        for key in [id(target) for target in inside] + [holder_id]:
            if key in relative:
                found[key] = _shifted(relative[key], start.code_line - 1)
    return found if all(id(target) in found for target in targets) else None


#: Positions in statements generated before, counted from the statement's first line (node id -> range), in
#: an editor (walk.remember_statements), by the statement's indent and the module's style.
_GENERATED = StatementMemo(256)


def _shifted(found: CodeRange, lines: int) -> CodeRange:
    return CodeRange(CodePosition(found.start.line + lines, found.start.column),
                     CodePosition(found.end.line + lines, found.end.column))
