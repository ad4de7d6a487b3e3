"""Fix safety, and violations made diagnostics.

A rule marks its fix safe or unsafe; ``effective_applicability`` overrules a safe fix that would
drop a comment or move one past another (unsafe, never applied without ``--unsafe-fixes``).
``to_diagnostics`` turns a parsed file's unsuppressed violations into sorted diagnostics, with
their positions and the fix's replacement text.
"""

from __future__ import annotations

from typing import List

import libcst as cst

from ..diagnostics import Applicability, Diagnostic, Fix
from .parsing import ParsedFile
from .rule import NodeFix
from ..walk import every_descendant


def _comments(node: cst.CSTNode) -> List[str]:
    collector = _CommentCollector()
    node.visit(collector)  # source order (LibCST's visit rebuilds nodes: only for targets with comments)
    return collector.comments


def _has_comment(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Comment) for n in every_descendant(node))


class _CommentCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.comments: List[str] = []

    def visit_Comment(self, node: cst.Comment) -> None:
        self.comments.append(node.value)


def _keeps_in_order(kept: List[str], within: List[str]) -> bool:
    rest = iter(within)
    return all(any(c == r for r in rest) for c in kept)


def effective_applicability(parsed: ParsedFile, fix: NodeFix) -> Applicability:
    """A fix that would drop a comment, or move one past another, is never safe."""
    if fix.applicability is Applicability.SAFE and _has_comment(fix.target) \
            and not _keeps_in_order(_comments(fix.target), _comments(fix.replacement)):
        return Applicability.UNSAFE
    return fix.applicability


def to_diagnostics(path: str, parsed: ParsedFile) -> List[Diagnostic]:
    out = []
    unsuppressed = parsed.unsuppressed()
    edits = parsed.fix_edits([v.fix for v in unsuppressed if v.fix is not None])
    for v in unsuppressed:
        pos = parsed.position(v.node)
        fix = None
        if v.fix is not None:
            where, content = edits[id(v.fix.target)]
            fix = Fix(effective_applicability(parsed, v.fix), content,
                      where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
        out.append(Diagnostic(path, pos.start.line, pos.start.column + 1, pos.end.line,
                              pos.end.column + 1, v.code, v.message, fix))
    out.sort(key=lambda d: d.sort_key)
    return out
