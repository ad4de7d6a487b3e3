"""Parsing a file for the rules: CPython's tree first, the pruned text, LibCST, then the rules.

``parse_active`` turns a source and the rules that passed the prefilters into a ``ParsedFile``:
CPython's tree (from the structural plan, or built here: it rejects nesting LibCST's parser
would crash on) drives pruning (prune.py: blanked spans, and the top-level statements the
structural prefilter dropped, cut out whole); LibCST parses what is left (or an editor's
``Reparser`` re-uses unchanged statements); ``rule.run_rules`` walks it. ``ParsedFile`` resolves
the positions of the few reported nodes on demand, mapped back to the original lines when lines
were cut out. ``--fix`` uses ``parse``, which never prunes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Pattern, Sequence, Tuple, Type, Union

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ..codes import TRIGGERS
from ..parse.cst_parse import parse_module
from .noqa import is_suppressed
from ..parse.positions import (AstLines, StatementStarts, ast_statement_lines, positions_in_statements, positions_of,
                        statement_starts)
from ..source.precheck import cpython_tree
from ..parse.prune import Pruned, prune_file
from ..parse.reparse import Reparser
from .fix_text import fix_edits
from .rule import NodeFix, Rule, Violation, run_rules
from ..semantic.project import ProjectIndex
from ..plan.structure import ALIAS_SHAPED, Plan

Source = Union[str, bytes]


@dataclass
class ParsedFile:
    """A file's parse and its violations, with positions resolved on demand."""

    module: cst.Module
    violations: List[Violation]
    lines: List[str]
    starts: Optional[StatementStarts] = None  # where each top-level statement starts, when known
    moved: Optional[Pruned] = None  # the module was parsed from this text, with lines cut out
    _positions: Optional[Dict[int, CodeRange]] = None
    _in_module: Optional[Dict[int, CodeRange]] = None  # the same, in the parsed module's lines

    def position(self, node: cst.CSTNode) -> CodeRange:
        if self._positions is None:
            self._positions = self._resolve_positions()
        return self._positions[id(node)]

    def fix_edits(self, fixes: Sequence[NodeFix]) -> Dict[int, Tuple[CodeRange, str]]:
        """Fix target id -> the text edit (range, text) that replacing the target prints (fix_text.py)."""
        if self._positions is None:
            self._positions = self._resolve_positions()
        edits = fix_edits(self.module, fixes, lambda node: self._in_module[id(node)])  # type: ignore[index]
        return {key: (self._original(where), text) for key, (where, text) in edits.items()}

    def _resolve_positions(self) -> Dict[int, CodeRange]:
        found = self._in_module = self._positions_in_module()
        if self.moved is None:
            return found
        return {key: self._original(r) for key, r in found.items()}

    def _original(self, r: CodeRange) -> CodeRange:
        """``r`` (in the parsed module) in the original's lines."""
        moved = self.moved
        if moved is None:
            return r
        return CodeRange(CodePosition(moved.original_line(r.start.line), r.start.column),
                         CodePosition(moved.original_line(r.end.line), r.end.column))

    def _positions_in_module(self) -> Dict[int, CodeRange]:
        targets = [v.node for v in self.violations] + [v.fix.target for v in self.violations if v.fix]
        holders = [v.holder for v in self.violations] + [v.holder for v in self.violations if v.fix]
        if self.starts is not None and all(h is not None for h in holders):
            found = positions_in_statements(self.module, targets, holders, self.starts)  # type: ignore[arg-type]
            if found is not None:
                return found
        return positions_of(self.module, targets)

    def unsuppressed(self) -> List[Violation]:
        out = []
        for v in self.violations:
            line = self.position(v.node).start.line
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            if not is_suppressed(text, v.code):
                out.append(v)
        return out


def _decode_lines(source: Source, module: cst.Module) -> List[str]:
    text = source.decode(module.encoding, errors="replace") if isinstance(source, bytes) else source
    return text.splitlines()


def parse(source: Source, rule_types: Sequence[Type[Rule]], prune: bool = False, path: str = "",
          project: Optional[ProjectIndex] = None) -> Optional[ParsedFile]:
    """Parse and run ``rule_types``; None when no rule can match (prefilter).

    Raises ParserSyntaxError, or TooDeeplyNested (a SyntaxError) when CPython's parser
    gives up on the nesting, which LibCST's is then never asked to parse.

    With ``prune``, spans no rule can need are blanked before the parse (positions are
    unchanged, see prune.py); fixing always parses the full source.
    """
    active = [r for r in rule_types if r.may_match(source)]
    return parse_active(source, active, prune, path, project) if active else None


def parse_active(source: Source, active: Sequence[Type[Rule]], prune: bool, path: str = "",
                  project: Optional[ProjectIndex] = None, reparser: Optional[Reparser] = None,
                  plan: Optional[Plan] = None) -> ParsedFile:
    """``parse`` for the rules that passed the prefilter; ``reparser``: an editor document's (reparse.py);
    ``plan``: the structural prefilter's (structure.py), with CPython's tree, which it lets go of."""
    tree = plan.take_tree() if plan is not None else cpython_tree(source)  # raises TooDeeplyNested
    drop = plan.dropped if plan is not None else frozenset()
    pruned = None
    # a rule whose calls may hide under an import alias (text cannot find them) is pruned by shape alone,
    # which resolves the aliases, or the file is not pruned
    by_shape = frozenset(r.code for r in active if not r.allows_pruning(source)) if isinstance(source, bytes) \
        else frozenset()
    if tree is not None and isinstance(source, bytes) and (
            not by_shape or plan is not None and by_shape <= ALIAS_SHAPED):
        callers = None
        data = any(r.code in _DATA_WRITE_RULES for r in active)
        grad = any(r.code in _GRAD_MODE_RULES for r in active)
        if prune and plan is not None and (data or grad):
            from ..parse.callers import context_callers

            seeds = [TRIGGERS[code][1] for code, wanted in (("TCL104", data), ("TCL117", grad)) if wanted]
            callers = context_callers(tree, source, seeds, references=grad)
        blank = _segment_matcher(active, plan, by_shape, callers) if prune else None
        if blank is not None or drop:
            pruned = prune_file(source, blank, tree, drop)
    if plan is not None:
        plan.release()
    full_lines = ast_statement_lines(tree)
    if reparser is None or pruned is not None:
        tree = None  # the AST can be large: not kept alive through the LibCST parse
    module = None
    if pruned is not None:
        try:
            module = parse_module(pruned.text)
        except cst.ParserSyntaxError:
            module = None  # report against the real source below
    if module is None:
        pruned = None
        module = reparser.parse(source, tree) if reparser is not None else parse_module(source)
    violations = run_rules(module, active, path, project, source=pruned.text if pruned is not None else source,
                           original_line=pruned.original_line if pruned is not None else None, whole_source=source)
    if not violations:
        return ParsedFile(module, violations, [])
    # pruning keeps every line where it was, or maps it back (``Pruned``): the AST's lines hold
    lines = kept_statement_lines(full_lines, pruned) if pruned is not None and pruned.removed else full_lines
    moved = pruned if pruned is not None and pruned.removed else None
    parsed = ParsedFile(module, violations, _decode_lines(source, module), statement_starts(module, lines), moved)
    if pruned is not None and any(v.fix is not None and _prints_pruned(v.fix.target, parsed, pruned)
                                  for v in violations):
        # such a fix is built from the whole source
        module = parse_module(source)
        violations = run_rules(module, active, path, project, source=source)
        parsed = ParsedFile(module, violations, _decode_lines(source, module) if violations else [],
                            statement_starts(module, full_lines))
    return parsed


def _prints_pruned(target: cst.CSTNode, parsed: ParsedFile, pruned: Pruned) -> bool:
    """Whether a fix of ``target``, built from the pruned parse, would print what pruning left out: TCL109's,
    which rewrites the whole module (it adds `import copy`), or one whose target holds a blanked span
    (`torch.tensor([<a table over 16 KB>]).to(device)`, TCL116: its rows are `0`s in the pruned text)."""
    if isinstance(target, cst.Module):
        return True
    where = parsed.position(target)
    return pruned.reaches_blanked(where.start.line, where.end.line)


_DATA_WRITE_RULES = ("TCL104", "TCL119")
_GRAD_MODE_RULES = ("TCL103", "TCL117")  # they read the grad mode of a private function from its callers


def _segment_matcher(active: Sequence[Type[Rule]], plan: Optional[Plan], by_shape: FrozenSet[str] = frozenset(),
                     callers: Optional[Pattern[bytes]] = None):
    """What pruning keeps: a segment some rule's segment text occurs in, and (with the structural plan)
    that the rule can fire in or reads as evidence (``Plan.keeps``); for the rules in ``by_shape``, what
    ``Plan.keeps`` says alone (their calls may hide under an import alias, which its shapes resolve); with
    the plan, also a segment holding what the semantic model reads for an active rule (``Plan.is_evidence``)
    and, for TCL104/TCL119, a call of a function that writes ``.data`` or calls one (``callers``: callers.py)."""
    def matches(segment: bytes, node) -> bool:
        if callers is not None and callers.search(segment):
            return True
        return any((r.code in by_shape or r.may_match_segment(segment))
                   and (plan is None or plan.keeps(r.code, segment, node))
                   or plan is not None and plan.is_evidence(r.code, segment) for r in active)
    return matches


def kept_statement_lines(lines: Optional[AstLines], pruned: Pruned) -> Optional[AstLines]:
    """``lines`` (``ast_statement_lines`` of the original) of the statements ``pruned`` kept, in its lines
    (at every depth: lines inside a def's blanked body are cut out too)."""
    if lines is None:
        return None
    out: AstLines = []
    for first, keyword, inner in lines:
        if pruned.is_removed(keyword):
            continue
        out.append((pruned.pruned_line(first), pruned.pruned_line(keyword),
                    kept_statement_lines(inner, pruned) if inner is not None else None))
    return out
