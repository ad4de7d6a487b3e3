"""The records of the forward pass: scopes, bindings, reads, loops, flow states and the flow graph.

What it knows: for each scope (module, function, class body, lambda, comprehension) every binding
of a name or attribute chain (``x``, ``self.w``), the item stores into containers (``d[k] = v``,
``xs.append(v)``), the ``return`` values, a statement-level flow graph (with the calls made by each
statement) and the loops. A ``Read`` is what reaches one use of a name or chain: its bindings
(loop-head ``phi`` bindings stand for "the value at the top of the loop") and the isinstance-style
narrowing in force there. States are copy-on-write overlays, so branches cost what they bind.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

Defs = Tuple["Binding", ...]


class Binding:
    """One definition of ``key``. ``how`` says what made it:

    assign (``value``, ``path`` into tuple targets), iter (for/comprehension target: ``value`` is the
    iterable), aug (``x += value``; ``previous`` holds the definitions it updates), ann (annotation
    only), param, import, def, class, buffer (register_buffer), with, unknown (del, global, except,
    match capture, ...), phi (the value at a loop head: ``previous`` are its sources).
    """

    __slots__ = ("key", "how", "node", "value", "path", "scope", "cfg", "previous", "owner")

    def __init__(self, key: str, how: str, node: cst.CSTNode, scope: "Scope", cfg: int,
                 value: Optional[cst.CSTNode] = None, path: Tuple[int, ...] = (),
                 previous: Optional[List["Binding"]] = None, owner: Optional[cst.CSTNode] = None) -> None:
        self.key, self.how, self.node, self.scope, self.cfg = key, how, node, scope, cfg
        self.value, self.path, self.previous, self.owner = value, path, previous, owner

    def __repr__(self) -> str:
        return f"Binding({self.key!r}, {self.how})"


class Read:
    """A use of ``key`` (a Name or an attribute chain) and what reaches it; ``falsy``: on every path here a
    test found it false (``if not xs``, ``len(xs) == 0``) and nothing rebound it or passed it to a call since
    (aliases and nested functions are not followed)."""

    __slots__ = ("key", "node", "defs", "fact", "scope", "cfg", "falsy")

    def __init__(self, key: str, node: cst.CSTNode, defs: Optional[Defs], fact, scope: "Scope", cfg: int,
                 falsy: bool = False) -> None:
        self.key, self.node, self.defs, self.fact, self.scope, self.cfg = key, node, defs, fact, scope, cfg
        self.falsy = falsy


class Loop:
    """A ``for``/``while`` statement: its head in the flow graph and every call in its body."""

    __slots__ = ("node", "scope", "head", "calls", "body_cfg")

    def __init__(self, node: cst.CSTNode, scope: "Scope", head: int) -> None:
        self.node, self.scope, self.head = node, scope, head
        self.calls: List[cst.Call] = []
        self.body_cfg: List[int] = []

    def calls_method(self, *names: str) -> List[cst.Call]:
        """The calls ``<anything>.<name>(...)`` in the loop body (nested loops included)."""
        return [c for c in self.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value in names]


class Scope:
    """A scope's bindings, item stores, returns and (for module and function scopes) flow graph."""

    def __init__(self, node: cst.CSTNode, kind: str, parent: Optional["Scope"],
                 owner_class: Optional[cst.ClassDef] = None) -> None:
        self.node, self.kind, self.parent, self.owner_class = node, kind, parent, owner_class
        self.flow: "Scope" = self if kind in ("module", "function") or parent is None else parent.flow
        self.bindings: Dict[str, List[Binding]] = {}
        self.item_stores: Dict[str, List[cst.BaseExpression]] = {}
        self.returns: List[Optional[cst.BaseExpression]] = []
        self.declared_global: Set[str] = set()
        self.dotted: Dict[str, Set[str]] = {}  # head name -> attribute chains bound on it
        # flow graph (only on flow scopes): statement per node, successors, calls per node
        self.cfg_nodes: List[cst.CSTNode] = []
        self.succ: List[List[int]] = []
        self.calls: List[List[cst.Call]] = []
        self.reads: List[Read] = []  # every read of this flow scope (its comprehensions, lambdas, classes)

    def new_node(self, stmt: cst.CSTNode, preds: Tuple[int, ...]) -> int:
        flow = self.flow
        index = len(flow.cfg_nodes)
        flow.cfg_nodes.append(stmt)
        flow.succ.append([])
        flow.calls.append([])
        for p in preds:
            flow.succ[p].append(index)
        return index

    def add_edges(self, preds: Tuple[int, ...], target: int) -> None:
        for p in preds:
            self.flow.succ[p].append(target)


class State:
    """Definitions and narrowing facts at one point of the pass: a copy-on-write overlay."""

    __slots__ = ("defs", "facts", "parent", "dead", "preds")

    def __init__(self, parent: Optional["State"] = None) -> None:
        self.defs: Dict[str, Defs] = {}
        self.facts: Dict[str, object] = {}
        self.parent = parent
        self.dead = parent.dead if parent is not None else False
        self.preds: Tuple[int, ...] = parent.preds if parent is not None else ()

    def get(self, key: str) -> Optional[Defs]:
        state: Optional[State] = self
        while state is not None:
            found = state.defs.get(key)
            if found is not None:
                return found or None  # () is a tombstone: rebound head, chain forgotten
            state = state.parent
        return None

    def fact(self, key: str):
        state: Optional[State] = self
        while state is not None:
            if key in state.facts:
                return state.facts[key]
            state = state.parent
        return None

    def child(self) -> "State":
        return State(self)


def union(defs_list) -> Optional[Defs]:
    """Definitions reaching a join point: every arm's, in order, without repeats."""
    out: List[Binding] = []
    seen: Set[int] = set()
    for defs in defs_list:
        for b in defs or ():
            if id(b) not in seen:
                seen.add(id(b))
                out.append(b)
    return tuple(out) if out else None


def merge_into(base: State, arms: List[State]) -> None:
    """Join the arms (overlays over ``base``) into ``base``: unions of definitions, agreed facts."""
    live = [a for a in arms if not a.dead]
    if not live:
        base.dead = True
        base.preds = ()
        return
    keys: Set[str] = set()
    fact_keys: Set[str] = set()
    for arm in live:
        keys.update(arm.defs)
        fact_keys.update(arm.facts)
    for key in keys:
        merged = union(arm.get(key) for arm in live)
        base.defs[key] = merged if merged is not None else ()
    for key in fact_keys:
        facts = [arm.fact(key) for arm in live]
        first = facts[0]
        base.facts[key] = first if all(f is not None and f == first for f in facts) else None
    base.preds = tuple(dict.fromkeys(p for arm in live for p in arm.preds))
    base.dead = False
