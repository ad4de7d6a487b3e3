"""The structural prefilter: from CPython's ``ast`` of a file, which rules can fire, and where.

The text prefilter (codes.py) passes a file when a rule's trigger words occur anywhere in it,
comments, strings and docstrings included. CPython's tree, which precheck.py builds anyway (at C
speed, ~10x faster than LibCST's parse), tells more: whether the call shapes, attribute names and
statement forms a rule needs occur in the code. ``plan`` reads each top-level statement once and
answers

- ``Plan.codes``: the rules that can possibly report in the file; a file none can report in never
  reaches LibCST (nor imports it);
- ``Plan.dropped``: the top-level statements that never reach LibCST (prune.py cuts their lines
  out; positions are mapped back): big *inert* statements (an assignment or expression with no
  call, no scope and no walrus: a data table, a vocabulary, a docstring) that no active rule can
  fire in and whose names occur nowhere else in the file's text, so that no other statement can
  read what they bind or see them read what it binds.

What a rule needs is declared here, importable without LibCST (as its text triggers in codes.py):
``NEEDS[code]`` is a tuple of groups of *shape tokens*; a statement (or file) can hold a report of
the rule only if it holds a token of every group. Tokens: ``call:NAME`` (a call of ``NAME(...)`` or
``x.NAME(...)``, import aliases resolved: ``from copy import deepcopy as dc`` makes ``dc(...)`` a
``call:deepcopy``), ``method:NAME`` (``x.NAME(...)``), ``attr:NAME`` (any ``x.NAME``), ``form:augadd``
(``+=``) and ``form:add`` (a binary ``+``). A rule with no entry is treated conservatively: it is
active wherever its text triggers pass, and with it active no statement is dropped.
tests/test_structure.py compares linting with and without this on real files.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

Needs = Tuple[FrozenSet[str], ...]


def _needs(*groups: Iterable[str]) -> Needs:
    return tuple(frozenset(group) for group in groups)


#: Per rule: the groups of shape tokens a statement must hold (one of each group) to hold a report.
NEEDS: Dict[str, Needs] = {
    "TCL101": _needs({"call:tensor"}),  # torch.tensor(x)
    "TCL102": _needs({"method:new_tensor"}),  # x.new_tensor(t)
    "TCL103": _needs({"method:detach"}, {"call:clone"}),  # x.clone().detach(), torch.clone(x).detach()
    "TCL104": _needs({"attr:data"}),  # p.data...
    "TCL105": _needs({"call:deepcopy"}),  # copy.deepcopy(model)
    "TCL106": _needs({"method:copy_"}, {"call:empty_like", "call:zeros_like", "call:ones_like"}),
    "TCL107": _needs({"call:tensor", "call:as_tensor"}),  # torch.tensor([a, b])
    "TCL108": _needs({"call:copy"}),  # copy.copy(t)
    "TCL109": _needs({"method:state_dict"}),  # best = model.state_dict()
    # `total += loss` / `total = total + loss` / `losses.append(loss)` in the loop that calls `loss.backward()`
    "TCL110": _needs({"method:backward"}, {"method:append", "form:augadd", "form:add"}),
}

DROP_MIN = 2_000  # bytes: smaller statements cost LibCST little, and are kept (fewer line maps)
_MANY_NAMES = 32  # above this many distinct names, one scan of the file's words instead of one per name

_INERT_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# Nodes that make a statement more than data: scopes, walrus bindings, calls (side effects the
# semantic model may read: `xs.append(t)`), generators.
_ACTIVE = frozenset({ast.Call, ast.NamedExpr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                     ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom})
_FIELDS: Dict[type, Tuple[str, ...]] = {}
_CONTEXTS = (ast.Load, ast.Store, ast.Del)


def _fields(cls: type) -> Tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(cls._fields)  # type: ignore[attr-defined]
    return found


@dataclass
class Shape:
    """What one top-level statement holds: shape tokens, its Name identifiers, whether it is inert."""

    tokens: Set[str]
    names: Set[str]
    inert: bool


def shape_of(statement: ast.stmt, aliases: Dict[str, str]) -> Shape:
    """Walk ``statement`` once (iteratively: no recursion limit); ``aliases`` collects local import
    names -> the name they import (``import a.b as c``: c -> b; ``from m import x as y``: y -> x)."""
    tokens: Set[str] = set()
    names: Set[str] = set()
    inert = isinstance(statement, _INERT_STATEMENTS)
    add, add_name = tokens.add, names.add
    Constant, Name, Attribute, Call = ast.Constant, ast.Name, ast.Attribute, ast.Call
    AST = ast.AST
    stack: List[ast.AST] = [statement]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Name:
            add_name(node.id)  # type: ignore[attr-defined]
            continue
        if cls is Attribute:
            add("attr:" + node.attr)  # type: ignore[attr-defined]
        elif cls is Call:
            func = node.func  # type: ignore[attr-defined]
            if func.__class__ is Attribute:
                add("method:" + func.attr)
                add("call:" + func.attr)
            elif func.__class__ is Name:
                add("call:" + func.id)
                add("name_call:" + func.id)
        elif cls is ast.AugAssign:
            if node.op.__class__ is ast.Add:  # type: ignore[attr-defined]
                add("form:augadd")
        elif cls is ast.BinOp:
            if node.op.__class__ is ast.Add:  # type: ignore[attr-defined]
                add("form:add")
        elif cls is ast.Import or cls is ast.ImportFrom:
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.asname:
                    aliases[alias.asname] = alias.name.rsplit(".", 1)[-1]
        if inert and cls in _ACTIVE:
            inert = False
        for name in _fields(cls):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST) and item.__class__ is not Constant:
                        push(item)
            elif isinstance(value, AST) and value.__class__ is not Constant and not isinstance(value, _CONTEXTS):
                push(value)
    return Shape(tokens, names, inert)


def resolved(tokens: Set[str], aliases: Dict[str, str]) -> Set[str]:
    """``tokens`` with calls of import aliases counted as calls of what they import."""
    extra = {"call:" + aliases[t[10:]] for t in tokens if t.startswith("name_call:") and t[10:] in aliases}
    return tokens | extra if extra else tokens


def can_fire(code: str, tokens: Set[str]) -> bool:
    """Whether rule ``code`` can report in code holding ``tokens`` (True for a rule with no NEEDS)."""
    needs = NEEDS.get(code)
    return needs is None or all(not group.isdisjoint(tokens) for group in needs)


@dataclass
class Plan:
    """The structural prefilter's answer for one file (see the module docstring)."""

    codes: FrozenSet[str]
    dropped: FrozenSet[int] = frozenset()  # indices into the tree's top-level statements
    tree: Optional[ast.Module] = field(default=None, repr=False)  # handed on to the engine, then let go

    def take_tree(self) -> Optional[ast.Module]:
        tree, self.tree = self.tree, None
        return tree


def plan(tree: ast.Module, source: Union[str, bytes], codes: Iterable[str]) -> Plan:
    """Which of ``codes`` (the rules the text prefilter passed) can fire in the file of ``tree``,
    and which top-level statements need not reach LibCST."""
    codes = frozenset(codes)
    aliases: Dict[str, str] = {}
    shapes = [shape_of(statement, aliases) for statement in tree.body]
    every: Set[str] = set()
    for shape in shapes:
        every |= shape.tokens
    active = frozenset(code for code in codes if can_fire(code, resolved(every, aliases)))
    dropped: FrozenSet[int] = frozenset()
    if active and all(code in NEEDS for code in active) and isinstance(source, bytes):
        dropped = frozenset(_droppable(tree, source, shapes, active, aliases))
    return Plan(active, dropped, tree)


def _droppable(tree: ast.Module, source: bytes, shapes: List[Shape], active: FrozenSet[str],
               aliases: Dict[str, str]) -> List[int]:
    body = tree.body
    candidates = []
    line_starts: Optional[List[int]] = None
    for index, (statement, shape) in enumerate(zip(body, shapes)):
        if not shape.inert:
            continue
        if any(can_fire(code, resolved(shape.tokens, aliases)) for code in active):
            continue
        if index > 0 and (body[index - 1].end_lineno or 0) >= statement.lineno:
            continue  # shares its first line with the statement before (`a = 1; T = [...]`)
        if index + 1 < len(body) and body[index + 1].lineno <= (statement.end_lineno or 0):
            continue  # ... or its last line with the next one
        if line_starts is None:
            line_starts = _line_starts(source)
        start = line_starts[statement.lineno - 1]
        end = line_starts[statement.end_lineno] if statement.end_lineno < len(line_starts) else len(source)  # type: ignore[operator]
        if end - start < DROP_MIN or statement.col_offset != 0:
            continue
        candidates.append((index, start, end, shape.names))
    return [index for index, start, end, names in candidates if not _named_elsewhere(source, start, end, names)]


def _line_starts(source: bytes) -> List[int]:
    starts = [0]
    find = source.find
    at = find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = find(b"\n", at + 1)
    return starts


_WORD = re.compile(rb"[^\W\d]\w*")


def _named_elsewhere(source: bytes, start: int, end: int, names: Set[str]) -> bool:
    """Whether one of ``names`` occurs as a word in ``source`` outside ``[start, end)`` (comments and
    strings included: a superset of where the semantic model could see it)."""
    if not names:
        return False
    encoded = [name.encode("utf-8") for name in names]
    if any(not name.isascii() for name in encoded):
        return True  # identifiers are NFKC-normalised: a text search could miss one
    outside = (source[:start], source[end:])
    if len(encoded) > _MANY_NAMES:
        words = {w for part in outside for w in _WORD.findall(part)}
        return any(name in words for name in encoded)
    for name in encoded:
        pattern = re.compile(rb"(?<!\w)" + re.escape(name) + rb"(?!\w)")
        if any(pattern.search(part) for part in outside):
            return True
    return False


def plan_source(source: bytes, codes: Iterable[str]) -> Optional[Plan]:
    """``plan`` of ``source``, made on a deep stack without garbage collection (as the engine parses),
    before anything imports LibCST (the runner's worker: a file no rule can fire in never needs it).
    None when CPython's parser rejects the file (the engine then reports it, or leaves it to LibCST)."""
    from .precheck import call_with_deep_stack, cpython_tree, gc_paused

    def make() -> Optional[Plan]:
        with gc_paused():
            try:
                tree = cpython_tree(source)
            except SyntaxError:  # nested too deeply: the engine reports it
                return None
            return plan(tree, source, codes) if tree is not None else None

    return call_with_deep_stack(make)
