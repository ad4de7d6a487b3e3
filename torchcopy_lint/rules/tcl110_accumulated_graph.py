"""TCL110: ``total += loss`` in a training loop, which keeps every step's graph alive."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from ..codes import TRIGGERS, word
from ..engine import Rule
from ..semantic import Binding, Loop
from ..walk import descendants
from ._build import method

_AUTOGRAD_ENTRY_POINTS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})


class AccumulatedGraph(Rule):
    """Adding a loss to a running total (``total += loss``, ``total = total + loss``,
    ``losses.append(loss)``) after ``loss.backward()`` keeps the loss's graph alive
    through the total: the total becomes a tensor that requires grad and grows by
    the whole autograd graph of every step (the PyTorch FAQ's first memory
    question). ``loss.detach()`` (or ``loss.item()``) adds the value only.

    Flagged only in a loop body, when the accumulator is a name bound before the
    loop (not rebound in the loop), the added name still holds the tensor that
    ``.backward()`` was called on in the same iteration, and the accumulator itself
    never reaches ``.backward()``/``torch.autograd`` in the function (summing losses
    for one later ``backward()`` is gradient accumulation, not a leak). The fix
    ``loss.detach()`` is safe: the values are identical.
    """

    code = "TCL110"
    name = "accumulated-graph"
    message = (
        "accumulating a loss that was `.backward()`-ed keeps every step's autograd graph alive through the "
        "accumulator; add `loss.detach()` (or `loss.item()`)"
    )
    triggers = TRIGGERS["TCL110"]  # in codes.py, importable without LibCST
    # Every `.backward()` and `grad(` is kept: the accumulator's may be in another function.
    segment_triggers = (r"\.\s*backward\s*\(|" + word("grad") + r"\s*\(",)

    VALID = [
        "total = 0\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    total += loss.item()",
        "total = 0\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    total += loss.detach()",
        "total = 0\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    loss = loss.item()\n"
        "    total += loss",
        "for x in data:\n    total = 0\n    loss = model(x)\n    loss.backward()\n    total += loss",
        "total = 0\nfor x in data:\n    loss = model(x)\n    total += loss\ntotal.backward()",
        "losses = []\nfor x in data:\n    loss = model(x)\n    losses.append(loss)\nsum(losses).backward()",
        "total = 0\nfor x in data:\n    loss = model(x)\n    total += loss",
    ]
    INVALID = [
        "total = 0\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    total += loss",
        "def fit(model, data):\n    total = 0.0\n    for x in data:\n        loss = model(x).sum()\n"
        "        loss.backward()\n        total = total + loss\n    return total",
        "losses = []\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    losses.append(loss)",
    ]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name):
            self._check(node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
                and isinstance(value.left, cst.Name) and value.left.value == node.targets[0].target.value:
            self._check(value.left, value.right)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star \
                and isinstance(self.context.parent(), cst.Expr):
            self._check(func.value, node.args[0].value)

    def _check(self, accumulator: cst.Name, added: cst.BaseExpression) -> None:
        if not isinstance(added, cst.Name):
            return
        loop = self.context.loop()
        if loop is None or not self._bound_before(accumulator, loop):
            return
        if not self._backwarded_in_iteration(added, loop):
            return
        if self._reaches_autograd(accumulator.value):
            return
        self.report(added, replacement=method(added, "detach"))

    def _bound_before(self, accumulator: cst.Name, loop: Loop) -> bool:
        """Some value of ``accumulator`` here comes from before the loop: not every one is made in the
        loop body (``total = 0`` earlier in the same iteration makes it a per-iteration value)."""
        reaching = self.context.reaching(accumulator)
        inside = _within(loop.node)
        return any(not inside(b.node) for b in reaching)

    def _backwarded_in_iteration(self, added: cst.Name, loop: Loop) -> bool:
        """``added.backward(...)`` is called in this loop's body on the value ``added`` holds here."""
        here = _ids(self.context.reaching(added))
        if not here:
            return False
        reads = self.context.semantic.reads
        for call in loop.calls_method("backward"):
            receiver = call.func.value  # type: ignore[union-attr]
            if isinstance(receiver, cst.Name) and receiver.value == added.value:
                read = reads.get(id(receiver))
                if read is not None and _ids(self.context.semantic.bindings_of_read(read)) == here:
                    return True
        return False

    def _reaches_autograd(self, name: str) -> bool:
        """Whether the function (or module) calls ``.backward()`` on an expression using ``name``, or passes
        it to ``torch.autograd.backward/grad``."""
        scope = next((n for n in reversed(self.context.stack) if isinstance(n, (cst.FunctionDef, cst.Module))), None)
        for node in descendants(scope) if scope is not None else ():
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "backward":
                if _mentions(func.value, name) or any(_mentions(a.value, name) for a in node.args):
                    return True
            elif self.context.qualified_name(func) in _AUTOGRAD_ENTRY_POINTS:
                if any(_mentions(a.value, name) for a in node.args):
                    return True
        return False


def _within(container: cst.CSTNode):
    """A test for "is this node inside ``container``" (by identity, computed once)."""
    members = {id(n) for n in descendants(container)}
    return lambda node: id(node) in members


def _ids(bindings: List[Binding]) -> Optional[frozenset]:
    return frozenset(id(b) for b in bindings) if bindings else None


def _mentions(expr: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in descendants(expr))
