"""Paths through a training step: which calls run on every path to a write, which on none.

training_order.py reads a step in the order the code reads. Two facts need the tree's shape as well:

- a call in one branch of an ``if`` and a write in another (``if a: loss.backward()`` ... ``elif b: p.data = v``)
  never run on the same pass: that ``backward()`` frees nothing before the write, that forward records nothing
  the write can corrupt (``exclusive``);
- a ``backward()`` that is a statement of a block around the write, before the write's statement, has run on
  every path to the write, on every pass of any loop around that block (``freeing_backward``): a graph recorded
  before it in the function is freed at the write.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

Parents = Dict[int, Optional[cst.CSTNode]]  # a node's id -> its parent, for the nodes of one scope


def exclusive(parents: Parents, node: cst.CSTNode, stack: Sequence[cst.CSTNode]) -> bool:
    """Whether ``node`` (numbered in ``parents``) and the node at the top of ``stack`` lie in two branches of
    one ``if`` (``elif`` and ``else`` included)."""
    on_stack = {id(n): i for i, n in enumerate(stack)}
    child, parent = node, parents.get(id(node))
    while parent is not None and id(parent) not in on_stack:
        child, parent = parent, parents.get(id(parent))
    if not isinstance(parent, cst.If) or parent.orelse is None or on_stack[id(parent)] + 1 >= len(stack):
        return False
    other = stack[on_stack[id(parent)] + 1]
    return {id(child), id(other)} == {id(parent.body), id(parent.orelse)}


def bound_names(parents: Parents, call: cst.CSTNode) -> List[str]:
    """The names an assignment binds from ``call``'s result: ``out`` for ``out = model(x)``, ``loss`` for
    ``loss = crit(model(x), y)``, ``out, aux`` for ``out, aux = model(x)``."""
    child, parent = call, parents.get(id(call))
    while parent is not None and not isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
        child, parent = parent, parents.get(id(parent))
    if not isinstance(parent, cst.Assign) or child is not parent.value:
        return []
    names: List[str] = []
    for target in parent.targets:
        node = target.target
        parts = [element.value for element in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
        names.extend(part.value for part in parts if isinstance(part, cst.Name))
    return names


def freeing_backward(stack: Sequence[cst.CSTNode], scope_index: int, top: int,
                     frees: Callable[[cst.Call], bool]) -> Optional[Tuple[cst.Call, int]]:
    """The last ``backward()`` (``frees`` says which calls free a graph) run on every path to the node at
    ``stack[top]`` inside the function ``stack[scope_index]``: a statement of a block around it, before the
    statement holding it (or one inside a ``with`` block there). With the index of that block in ``stack``."""
    for i in range(top - 1, scope_index, -1):
        block = stack[i]
        if not isinstance(block, cst.IndentedBlock):
            continue
        before = []
        for statement in block.body:
            if statement is stack[i + 1]:
                break
            before.append(statement)
        for statement in reversed(before):
            call = _backward_of(statement, frees)
            if call is not None:
                return call, i
    return None


def _backward_of(statement: cst.CSTNode, frees: Callable[[cst.Call], bool]) -> Optional[cst.Call]:
    """The last freeing ``backward()`` that ``statement`` runs whenever it runs (not one in a branch or loop)."""
    if isinstance(statement, cst.SimpleStatementLine):
        calls = [small.value for small in statement.body
                 if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and frees(small.value)]
        return calls[-1] if calls else None
    if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
        for inner in reversed(statement.body.body):
            call = _backward_of(inner, frees)
            if call is not None:
                return call
    return None
