"""The rule base: what a rule subclasses, what it may consult, and the walk that runs rules.

A rule module subclasses ``Rule`` (``from ..engine import Rule`` keeps working: engine.py hands
it on) and reports ``Violation``s (with an optional ``NodeFix``) through ``Rule.report``; while it
visits, ``FileContext`` answers its questions (import names, the semantic model, the project
index). ``run_rules`` walks a module once, read-only (LibCST's own visitor rebuilds every node),
dispatching each node to every rule that visits its type. Parsing is parsing.py's, turning
violations into diagnostics and judging fixes fix_safety.py's.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, ClassVar, Dict, List, Optional, Sequence, Tuple, Type, Union

import libcst as cst

from .. import codes
from ..diagnostics import Applicability
from ..imports import ImportMap
from ..parse.positions import holder_of
from ..semantic import Binding, GraphContext, Grad, Kind, Loop, Read, SemanticModel, Value
from ..semantic.project import ProjectIndex
from ..walk import child_fields, is_node_type

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
    #: The file's line of a line of ``module`` (which may have been parsed with lines cut out: prune.Pruned),
    #: for line numbers a rule writes into a message.
    original_line: Callable[[int], int] = field(default=lambda line: line)

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

    def requires_grad(self, expr: cst.BaseExpression) -> Grad:
        """Whether an op on ``expr`` here records an autograd node: YES (evidence it requires grad), NO
        (it cannot, or grad mode is off here), UNKNOWN."""
        return self.semantic.grads.at(expr, self.stack)

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
              project: Optional[ProjectIndex] = None, source: Optional[Source] = None,
              original_line: Optional[Callable[[int], int]] = None,
              whole_source: Optional[Source] = None) -> List[Violation]:
    """Walk ``module`` once, dispatching each node to every rule that visits its type.

    ``source`` is the text ``module`` was parsed from, if the caller has it (it saves the model
    from generating it again); ``original_line`` maps its lines to the file's when lines were cut out;
    ``whole_source`` is the file's whole text where ``source`` had lines cut out."""
    project = project if project is not None else ProjectIndex()
    imports = ImportMap(module, project.absolute_import, project.star_name)
    semantic = SemanticModel(module, imports, project, source=source, whole_source=whole_source)
    context = FileContext(module, imports, semantic, path=path, project=project)
    if original_line is not None:
        context.original_line = original_line
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
    violations = context.violations
    # The model's parts point back at it (and it at the tree): let go of them here, so that the file's
    # tree is freed as soon as its diagnostics are made, not by a collection that walks all of it again.
    semantic.release()
    context.__dict__.clear()
    rules.clear()
    visit.clear()
    leave.clear()
    return violations
