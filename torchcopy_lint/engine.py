"""The lint engine: one parse per file, every enabled rule in one traversal.

Cost model (see benchmarks/bench.py): most files cannot match any rule, so a
regex prefilter derived from the rules' own ``triggers`` skips the LibCST parse
for them. Files that are parsed are walked once by a read-only traversal that
does not rebuild nodes (LibCST's own visitor reconstructs every node), and
positions are computed only for files that produced a violation.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple, Type, Union

import libcst as cst
from libcst.metadata import CodeRange

from . import codes
from .diagnostics import Applicability, Diagnostic, Fix
from .imports import ImportMap
from .semantic import Binding, GraphContext, Kind, Loop, Read, SemanticModel, Value
from .noqa import is_suppressed
from .positions import StatementStarts, ast_statement_lines, holder_of, positions_in_statements, positions_of, statement_starts
from .precheck import call_with_deep_stack, cpython_tree, decode_diagnostic, syntax_error_diagnostic
from .prune import prune as prune_source
from .reparse import Reparser
from .semantic.project import ProjectIndex
from .walk import child_fields, every_descendant, is_node_type

Source = Union[str, bytes]


# --- what rules produce ---------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeFix:
    """Replace ``target`` (a node of the parsed module) with ``replacement``."""

    target: cst.CSTNode
    replacement: cst.CSTNode
    applicability: Applicability


@dataclass(frozen=True)
class Violation:
    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[NodeFix] = None
    holder: Optional[cst.CSTNode] = None  # the statement whose code holds it (positions.holder_of)


@dataclass
class FileContext:
    """What a rule may consult while visiting one file."""

    module: cst.Module
    imports: ImportMap
    semantic: SemanticModel
    stack: List[cst.CSTNode] = field(default_factory=list)
    violations: List[Violation] = field(default_factory=list)
    path: str = ""
    project: ProjectIndex = field(default_factory=ProjectIndex)  # the null index unless a path gives one

    def kind_of(self, expr: cst.BaseExpression) -> Kind:
        """Kind of ``expr`` (a descendant of the node being visited): TENSOR, MODULE, NOT_TENSOR, UNKNOWN."""
        return self.semantic.kind_of(expr, self.stack)

    def value_of(self, expr: cst.BaseExpression) -> Value:
        """The fine-grained value of ``expr``: kind (parameter, record, mapping, ...), class, items."""
        return self.semantic.value_of(expr, self.stack)

    def read(self, node: cst.CSTNode) -> Optional[Read]:
        """The read record of a Name or attribute chain below the visited node."""
        return self.semantic.read_of(node, self.stack)

    def reaching(self, node: cst.CSTNode) -> List[Binding]:
        """The bindings that can reach the read ``node``."""
        return self.semantic.reaching(node, self.stack)

    def loop(self) -> Optional[Loop]:
        """The innermost loop around the visited node, in its function."""
        return self.semantic.loop_of(self.stack)

    def qualified_name(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualified_name(expr)

    def graph_context(self, written: Optional[cst.BaseExpression] = None) -> GraphContext:
        """Whether a graph can be live at the visited node (``written``: the tensor it writes, if any)."""
        return self.semantic.autograd.context(self.stack, written)

    def parent(self, levels: int = 1) -> Optional[cst.CSTNode]:
        """The ancestor ``levels`` above the node being visited."""
        index = len(self.stack) - 1 - levels
        return self.stack[index] if index >= 0 else None


class Rule:
    """Base class of a rule: subclass it in one module per rule.

    A rule declares ``code``, ``name``, ``message``, ``triggers`` (regexes that must
    all occur in a file's text for the rule to possibly fire: they drive the
    prefilter, so a rule cannot be forgotten by it) and Fixit-style ``VALID`` /
    ``INVALID`` examples, which the test-suite runs. It implements
    ``visit_<NodeType>(self, node)`` methods and calls ``self.report``.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    triggers: ClassVar[Tuple[str, ...]]
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[str]] = ()
    # For pruning (prune.py): the triggers a top-level def/class must contain to be kept
    # (default: ``triggers``), and a pattern that, found in a file, turns pruning off.
    segment_triggers: ClassVar[Optional[Tuple[str, ...]]] = None
    unprunable: ClassVar[Optional[str]] = None

    def __init__(self, context: FileContext) -> None:
        self.context = context

    @classmethod
    def may_match(cls, source: Source) -> bool:
        """The prefilter: False means this rule cannot report anything in ``source``."""
        return codes.may_match(cls.code, source)

    @classmethod
    def may_match_segment(cls, segment: bytes) -> bool:
        """Whether a top-level def/class (or literal element) may hold something this rule reports."""
        return all(p.search(segment) for p in _pruning_patterns(cls, isinstance(segment, bytes))[0])

    @classmethod
    def allows_pruning(cls, source: bytes) -> bool:
        unprunable = _pruning_patterns(cls, isinstance(source, bytes))[1]
        return unprunable is None or not unprunable.search(source)

    def report(self, node: cst.CSTNode, message: Optional[str] = None, *,
               replacement: Optional[cst.CSTNode] = None, target: Optional[cst.CSTNode] = None,
               applicability: Applicability = Applicability.SAFE) -> None:
        fix = None
        if replacement is not None:
            fix = NodeFix(target if target is not None else node, replacement, applicability)
        holder = holder_of(self.context.stack)
        self.context.violations.append(Violation(self.code, node, message or self.message, fix, holder))


@lru_cache(maxsize=None)
def _pruning_patterns(rule: Type[Rule], as_bytes: bool) -> Tuple[Tuple[codes.Trigger, ...], Optional[codes.Trigger]]:
    """A rule's compiled ``segment_triggers`` (default: its triggers) and ``unprunable``."""
    segments = tuple(codes.compile_trigger(t, as_bytes) for t in rule.segment_triggers or rule.triggers)
    return segments, codes.compile_trigger(rule.unprunable, as_bytes) if rule.unprunable else None


# --- traversal -----------------------------------------------------------------------------------

Handler = Callable[[cst.CSTNode], None]


def _handler_tables(rules: Sequence[Rule]) -> Tuple[Dict[type, List[Handler]], Dict[type, List[Handler]]]:
    visit: Dict[type, List[Handler]] = {}
    leave: Dict[type, List[Handler]] = {}
    for rule in rules:
        for attr in dir(type(rule)):
            for prefix, table in (("visit_", visit), ("leave_", leave)):
                if attr.startswith(prefix):
                    node_type = getattr(cst, attr[len(prefix):], None)
                    if isinstance(node_type, type):
                        table.setdefault(node_type, []).append(getattr(rule, attr))
    return visit, leave


def run_rules(module: cst.Module, rule_types: Sequence[Type[Rule]], path: str = "",
              project: Optional[ProjectIndex] = None, source: Optional[Source] = None) -> List[Violation]:
    """Walk ``module`` once, dispatching each node to every rule that visits its type.

    ``source`` is the text ``module`` was parsed from, if the caller has it (it saves the model
    from generating it again)."""
    project = project if project is not None else ProjectIndex()
    imports = ImportMap(module, project.absolute_import)
    semantic = SemanticModel(module, imports, project, source=source)
    context = FileContext(module, imports, semantic, path=path, project=project)
    rules = [rule_type(context) for rule_type in rule_types]
    visit, leave = _handler_tables(rules)
    stack = context.stack
    fields_of = child_fields
    is_node = is_node_type

    def walk(node: cst.CSTNode) -> None:
        stack.append(node)
        node_type = type(node)
        handlers = visit.get(node_type)
        if handlers:
            for handler in handlers:
                handler(node)
        for name in fields_of(node_type):
            value = getattr(node, name)
            cls = value.__class__
            if cls is tuple or cls is list:
                for item in value:
                    if is_node(item.__class__):
                        walk(item)
            elif is_node(cls):
                walk(value)
        handlers = leave.get(node_type)
        if handlers:
            for handler in handlers:
                handler(node)
        stack.pop()

    limit = sys.getrecursionlimit()
    if limit < 20000:
        sys.setrecursionlimit(20000)
    walk(module)
    return context.violations


# --- from violations to diagnostics --------------------------------------------------------------

@dataclass
class ParsedFile:
    """A file's parse and its violations, with positions resolved on demand."""

    module: cst.Module
    violations: List[Violation]
    lines: List[str]
    starts: Optional[StatementStarts] = None  # where each top-level statement starts, when known
    _positions: Optional[Dict[int, CodeRange]] = None

    def position(self, node: cst.CSTNode) -> CodeRange:
        if self._positions is None:
            self._positions = self._resolve_positions()
        return self._positions[id(node)]

    def _resolve_positions(self) -> Dict[int, CodeRange]:
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
    return _parse_active(source, active, prune, path, project) if active else None


def _parse_active(source: Source, active: Sequence[Type[Rule]], prune: bool, path: str = "",
                  project: Optional[ProjectIndex] = None, reparser: Optional[Reparser] = None) -> ParsedFile:
    """``parse`` for the rules that passed the prefilter; ``reparser``: an editor document's (reparse.py)."""
    tree = cpython_tree(source)  # raises TooDeeplyNested before LibCST's parser can crash on it
    pruned = None
    if prune and tree is not None and isinstance(source, bytes) and all(r.allows_pruning(source) for r in active):
        pruned = prune_source(source, lambda segment: any(r.may_match_segment(segment) for r in active), tree)
    lines_of_statements = ast_statement_lines(tree)
    if reparser is None or pruned is not None:
        tree = None  # the AST can be large: not kept alive through the LibCST parse
    module = None
    if pruned is not None:
        try:
            module = cst.parse_module(pruned)
        except cst.ParserSyntaxError:
            module = None  # report against the real source below
    parsed_text = pruned if module is not None else source
    if module is None:
        module = reparser.parse(source, tree) if reparser is not None else cst.parse_module(source)
    violations = run_rules(module, active, path, project, source=parsed_text)
    if not violations:
        return ParsedFile(module, violations, [])
    # pruning keeps every line where it was, so the AST's lines hold for a pruned parse too
    return ParsedFile(module, violations, _decode_lines(source, module), statement_starts(module, lines_of_statements))


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
    for v in parsed.unsuppressed():
        pos = parsed.position(v.node)
        fix = None
        if v.fix is not None:
            fpos = parsed.position(v.fix.target)
            fix = Fix(
                effective_applicability(parsed, v.fix),
                parsed.module.code_for_node(v.fix.replacement),
                fpos.start.line, fpos.start.column + 1, fpos.end.line, fpos.end.column + 1,
            )
        out.append(Diagnostic(path, pos.start.line, pos.start.column + 1, pos.end.line,
                              pos.end.column + 1, v.code, v.message, fix))
    out.sort(key=lambda d: d.sort_key)
    return out


def lint_source(source: Source, path: str, rule_types: Sequence[Type[Rule]], prune: bool = True,
                project: Optional[ProjectIndex] = None, prefiltered: bool = False,
                reparser: Optional[Reparser] = None) -> List[Diagnostic]:
    """All diagnostics for one file's source. Never raises for bad input: it reports TCL001.

    A file Python cannot decode is reported even when no rule could match it; the parse
    and the rules run on a thread with a deep stack (precheck.py). ``project`` is the file's
    project index (default: found from ``path``); pass one to read afterwards which other
    files the result depended on (``project.dependencies()``). ``prefiltered``: every rule
    of ``rule_types`` passed the prefilter on ``source`` already (the runner ran it once).
    ``reparser``: re-use the parse of the statements unchanged since its last parse (the editor).
    """
    problem = decode_diagnostic(path, source) if isinstance(source, bytes) else None
    if problem is not None:
        return [problem]
    active = list(rule_types) if prefiltered else [r for r in rule_types if r.may_match(source)]
    if not active:
        return []
    if project is None:
        project = ProjectIndex.for_path(path)
    return call_with_deep_stack(_lint_parsed, source, path, active, prune, project, reparser)


def _lint_parsed(source: Source, path: str, active: Sequence[Type[Rule]], prune: bool,
                 project: ProjectIndex, reparser: Optional[Reparser] = None) -> List[Diagnostic]:
    with gc_paused():
        try:
            parsed = _parse_active(source, active, prune, path, project, reparser)
        except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as error:  # TooDeeplyNested too
            return [syntax_error_diagnostic(path, error, source)]
        if not parsed.violations:
            return []
        return to_diagnostics(path, parsed)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is linted.

    A file's tree and model are all alive until its diagnostics are made, so collections during
    the lint find nothing to free, and each full one walks the whole tree again: for big files
    that made the time grow faster than the file (benchmarks/scaling.py). The file's cyclic
    garbage is collected after it, as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
