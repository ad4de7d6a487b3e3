"""Source positions of a few chosen nodes, computed by one code-generation pass.

LibCST's PositionProvider records the position of every node in a module; the
engine needs the positions of the handful of nodes it reports (and their fix
targets) only, so this records just those. tests/test_positions.py checks the
answers against PositionProvider's.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, List, Optional, Set

import libcst as cst
from libcst._nodes.internal import CodegenState  # private, but stable across 1.x (pinned <2)
from libcst.metadata import CodePosition, CodeRange

_NEWLINE = re.compile(r"\r\n?|\n")


class _TargetPositions(CodegenState):
    """Code generation that records the positions of a few nodes only.

    LibCST's PositionProvider records every node's position, tracking line and
    column token by token; here tokens are just collected, and the line/column
    is brought up to date only when a target node starts or ends. Positions are
    the same as PositionProvider's (syntactic where the node records one, else
    whitespace-inclusive): tests/test_positions.py compares them.
    """

    def __init__(self, module: cst.Module, targets: Iterable[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets: Set[int] = {id(node) for node in targets}
        self.found: Dict[int, CodeRange] = {}
        self._open: List[CodePosition] = []
        self._synced = 0
        self._line = 1
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
