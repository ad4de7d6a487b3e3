"""A fix as a text edit: exactly what replacing its target node in the tree would print.

A rule's fix replaces a node (the target) by another; the diagnostic shows, and every front end
applies (fixer.py, the editor), a text edit: a span and the text to put there. The target's
position is syntactic (its parentheses, a small statement's ``;``, a statement's leading lines and
indentation lie outside it), and a node printed on its own gets no indentation on the lines it
generates inside an indented block. So where that can make a difference (parentheses, a separator,
a statement, a replacement over several lines), the target's whole code and the indentation there
are found by one code generation of the module; target and replacement are printed there, and what
they share at either end outside the target's span is left out of the edit.
"""

from __future__ import annotations

from os.path import commonprefix
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState  # private, but stable across 1.x (pinned <2)
from libcst.metadata import CodePosition, CodeRange

from ..parse.positions import _NEWLINE, _TargetPositions
from .rule import NodeFix

Extent = Tuple[CodeRange, Tuple[str, ...]]  # all of a node's code, and the indentation of the block it is in


class _TargetExtents(_TargetPositions):
    """Code generation that records the whole code of a few nodes, and the indentation there."""

    def __init__(self, module: cst.Module, targets: Iterable[cst.CSTNode]) -> None:
        super().__init__(module, targets)
        self.extents: Dict[int, Extent] = {}
        self._starts: List[Tuple[CodePosition, Tuple[str, ...]]] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._starts.append((self._now(), tuple(self.indent_tokens)))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            start, indent = self._starts.pop()
            self.extents.setdefault(id(node), (CodeRange(start, self._now()), indent))


def _prints_differently(target: cst.CSTNode, code: str) -> bool:
    """Whether the replacement's code printed alone, put in the target's span, may differ from the tree's."""
    if "\n" in code or "\r" in code or not isinstance(target, cst.BaseExpression):
        return True
    return bool(target.lpar)


def _printed(node: cst.CSTNode, module: cst.Module, indent: Tuple[str, ...]) -> str:
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens.extend(indent)
    node._codegen(state)
    return "".join(state.tokens)


def _after(start: CodePosition, text: str) -> CodePosition:
    """The position after ``text`` printed from ``start``."""
    segments = _NEWLINE.split(text)
    if len(segments) == 1:
        return CodePosition(start.line, start.column + len(text))
    return CodePosition(start.line + len(segments) - 1, len(segments[-1]))


def _index(start: CodePosition, text: str, point: CodePosition) -> Optional[int]:
    """Where ``point`` falls in ``text`` printed from ``start``; None when it does not."""
    line, column, offset = start.line, start.column, 0
    for match in _NEWLINE.finditer(text):
        if line == point.line:
            break
        line, column, offset = line + 1, 0, match.end()
    if line != point.line:
        return None
    following = _NEWLINE.search(text, offset)
    index = offset + point.column - column
    return index if offset <= index <= (following.start() if following else len(text)) else None


def fix_edits(module: cst.Module, fixes: Iterable[NodeFix], span_of) -> Dict[int, Tuple[CodeRange, str]]:
    """Fix target id -> (range in the parsed module, text): the edit that replacing the target prints.
    ``span_of``: a target's (syntactic) position in ``module``."""
    fixes = list(fixes)
    out: Dict[int, Tuple[CodeRange, str]] = {}
    wide: List[NodeFix] = []
    for fix in fixes:
        code = module.code_for_node(fix.replacement)
        out[id(fix.target)] = (span_of(fix.target), code)
        if _prints_differently(fix.target, code):
            wide.append(fix)
    if wide:
        state = _TargetExtents(module, [fix.target for fix in wide])
        module._codegen(state)
        for fix in wide:
            extent = state.extents.get(id(fix.target))
            if extent is not None:
                out[id(fix.target)] = _trimmed(module, fix, extent, out[id(fix.target)])
    return out


def _trimmed(module: cst.Module, fix: NodeFix, extent: Extent, plain: Tuple[CodeRange, str]) -> Tuple[CodeRange, str]:
    """The edit from the target's whole code to the replacement's printed there, less what both share at
    either end outside the target's span ``plain[0]``; ``plain`` when the whole code does not line up."""
    (whole, indent), span = extent, plain[0]
    before, after = _printed(fix.target, module, indent), _printed(fix.replacement, module, indent)
    first, last = _index(whole.start, before, span.start), _index(whole.start, before, span.end)
    if _after(whole.start, before) != whole.end or first is None or last is None:
        return plain
    head = min(len(commonprefix([before, after])), first)
    tail = min(len(commonprefix([before[::-1], after[::-1]])), len(before) - last,
               len(before) - head, len(after) - head)
    start = _after(whole.start, before[:head])
    end = _after(whole.start, before[:len(before) - tail])
    return CodeRange(start, end), after[head:len(after) - tail]
