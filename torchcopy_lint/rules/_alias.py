"""What the aliasing rules (TCL113-TCL115) share: the sides of an alias, and reports that name lines.

A hazard is reported where the alias is made; its message names the line of the in-place write and
of the later read. Those lines are found once per file, after the walk (one code generation of the
file, only in files with such a finding), not per finding.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from ..diagnostics import Applicability
from ..engine import NodeFix, Rule, Violation
from ..imports import dotted_name
from ..parse.positions import holder_of, positions_of


class AliasRule(Rule):
    """A rule whose findings name two more lines (the write, the read) in their message."""

    def __init__(self, context) -> None:
        super().__init__(context)
        self._pending: List[Tuple] = []

    def report_hazard(self, node: cst.CSTNode, hazard, detail: str,
                      replacement: Optional[cst.CSTNode] = None, target: Optional[cst.CSTNode] = None) -> None:
        """``detail`` is formatted with ``write`` and ``read`` (their line numbers)."""
        write, read = hazard
        fix = None
        if replacement is not None:
            fix = NodeFix(target if target is not None else node, replacement, Applicability.UNSAFE)
        self._pending.append((node, write.node, read.node, detail, fix, holder_of(self.context.stack)))

    def leave_Module(self, node: cst.Module) -> None:
        if not self._pending:
            return
        found = positions_of(self.context.module, [n for p in self._pending for n in p[1:3]])
        for where, write, read, detail, fix, holder in self._pending:
            line = self.context.original_line
            lines = {"write": line(found[id(write)].start.line), "read": line(found[id(read)].start.line)}
            message = f"{self.message} ({detail.format(**lines)})"
            self.context.violations.append(Violation(self.code, where, message, fix, holder))
        self._pending = []


def binding_at(read, key: str, target: cst.CSTNode):
    """The binding of ``key`` that the assignment target ``target`` makes (in the read's scope)."""
    for b in read.scope.bindings.get(key, ()):
        if b.node is target:
            return b
    return None


def name_of(expr: cst.BaseExpression) -> str:
    return dotted_name(expr) or "?"
