"""Whether a name read at the visited statement is a for-loop variable that nothing reads again before the loop
binds it anew (TCL111): there, ``t = t.to(d)`` would only rebind the loop variable, and the conversion is lost
all the same, so assigning it is not advice worth giving."""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set

import libcst as cst

from ..engine import FileContext
from ..semantic.syntax import all_params, target_keys
from ..walk import descendants

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def enclosing_for(context: FileContext, name: str) -> Optional[cst.For]:
    """The innermost ``for`` of the visited node's function (or module) whose target binds ``name``."""
    for node in reversed(context.stack):
        if isinstance(node, _SCOPES):
            return None
        if isinstance(node, cst.For) and name in target_keys(node.target):
            return node
    return None


def dead_loop_variable(context: FileContext, receiver: cst.Name) -> bool:
    """``receiver`` (read at the visited statement) is the target of a ``for`` around it, and a rebinding of it
    there would reach no read: no read of the name follows on any path before a binding of it (the ``for``
    head binds it on the way into the body, not on the way out of the loop), no nested function or lambda
    reads it (it could run later), and it is not declared ``global``/``nonlocal``."""
    key = receiver.value
    read = context.read(receiver)
    if enclosing_for(context, key) is None or read is None or read.cfg < 0:
        return False
    flow = read.scope.flow
    if key in read.scope.declared_global or key in flow.declared_global or _closure_reads(context, flow.node, key):
        return False
    heads = _loop_heads(context, flow, key)
    kills = {b.cfg for b in flow.bindings.get(key, ()) if b.how != "phi" and b.cfg not in heads}
    reads_at: Dict[int, bool] = {}
    for other in flow.reads:
        if other.key == key and other.cfg >= 0:
            reads_at[other.cfg] = True
    seen: Set[int] = set()
    pending: List[int] = list(flow.succ[read.cfg])
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        if reads_at.get(node):
            return False  # also the statement itself, come round again in an inner loop
        if node in kills:
            continue
        body = heads.get(node)
        pending.extend(s for s in flow.succ[node] if body is None or s not in body)
    return True


def _loop_heads(context: FileContext, flow, key: str) -> Dict[int, FrozenSet[int]]:
    """The flow nodes of the ``for`` heads of ``flow`` that bind ``key``, with their bodies' nodes: a path
    through such a head into the body meets a fresh binding, a path out of the loop keeps the old one."""
    heads: Dict[int, FrozenSet[int]] = {}
    for loop in context.semantic.loops.values():
        if loop.scope.flow is flow and isinstance(loop.node, cst.For) and key in target_keys(loop.node.target):
            heads[loop.head] = frozenset(loop.body_cfg)
    return heads


def _closure_reads(context: FileContext, root: cst.CSTNode, key: str) -> bool:
    """A function or lambda nested in ``root`` mentions ``key`` without binding it itself."""
    for node in descendants(root):
        if node is root or not isinstance(node, (cst.FunctionDef, cst.Lambda)):
            continue
        own = {p.name.value for p in all_params(node.params)}
        if isinstance(node, cst.FunctionDef):
            own |= context.semantic.bound_keys(node.body)
        if key not in own and any(isinstance(n, cst.Name) and n.value == key for n in descendants(node.body)):
            return True
    return False
