"""TCL105: ``copy.deepcopy`` of a live ``nn.Module`` inside a training loop."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import TRIGGERS
from ..engine import Rule
from ..imports import dotted_name
from ..semantic import Kind
from ..semantic.vocabulary import MODULE_ONLY_METHODS
from ..semantic.syntax import binds
from ..walk import descendants

_TRAINING_CALLS = frozenset({"backward", "step"})


class DeepcopyLiveModule(Rule):
    """``copy.deepcopy(model)`` in the middle of training copies every parameter
    and buffer each time, drops ``.grad`` (it does not "copy gradients"), keeps
    forward-hook closures shared with the original, and raises outright when the
    module holds a non-leaf tensor (an activation cached in ``forward``) or uses
    legacy ``weight_norm``. A best-model snapshot only needs the weights:
    ``{k: v.detach().clone() for k, v in model.state_dict().items()}``.

    Only copies inside a loop of code that trains (calls ``.backward()`` or an
    optimizer ``.step()``) are flagged. Construction-time copies (``__init__``,
    ``ModuleList([deepcopy(layer) ...])``, a teacher/EMA copy made once) and
    ``deepcopy(model.state_dict())`` are fine. No autofix: the snapshot is used
    differently from a module.
    """

    code = "TCL105"
    name = "deepcopy-live-module"
    message = (
        "`copy.deepcopy` of a module inside the training loop copies all weights each time, drops `.grad` "
        "and can raise on cached activations; snapshot `{k: v.detach().clone() for k, v in "
        "model.state_dict().items()}` or update one preallocated copy in place"
    )
    triggers = TRIGGERS["TCL105"]  # in codes.py, importable without LibCST

    VALID = [
        "import copy\nimport torch.nn as nn\nclass Net(nn.Module):\n    pass\nmodel = Net()\nema = copy.deepcopy(model)\n"
        "for x in data:\n    loss = model(x)\n    loss.backward()",
        "import copy\nfor x in data:\n    best = copy.deepcopy(model.state_dict())\n    loss.backward()",
        "import copy\nfor x in data:\n    c = copy.deepcopy(config)\n    loss.backward()",
        "import copy\nimport torch.nn as nn\nfor width in (8, 16):\n    model = nn.Linear(width, 2)\n"
        "    reference = copy.deepcopy(model)\n    model(x).sum().backward()",
    ]
    INVALID = [
        "import copy\nimport torch.nn as nn\nmodel = nn.Linear(2, 2)\nfor x in data:\n    loss = model(x).sum()\n"
        "    loss.backward()\n    best = copy.deepcopy(model)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or self.context.qualified_name(node.func) != "copy.deepcopy":
            return
        target = node.args[0].value
        scope = self._training_loop_scope()
        if scope is None or not self._is_module(target, scope) or self._fresh_in_iteration(target) \
                or not self._used_in_loop(target):
            return
        self.report(node)

    def _used_in_loop(self, target: cst.BaseExpression) -> bool:
        """Whether the loop uses the copied module other than by copying it (calls it, passes it on,
        reads its attributes): ``for cfg in configs: ddp = DDP(copy.deepcopy(model)); train(ddp)``
        copies a module that this loop never trains."""
        name = dotted_name(target)
        outermost = None  # the training may be in an outer loop: `for epoch: for task: clone = deepcopy(m)`
        for node in reversed(self.context.stack):
            if isinstance(node, (cst.For, cst.While)):
                outermost = node
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
        if name is None or outermost is None:
            return True
        prefix = name + "."
        copies = lambda n: isinstance(n, cst.Call) and self.context.qualified_name(n.func) == "copy.deepcopy"
        for node in descendants(outermost.body, stop=copies):
            if isinstance(node, (cst.Name, cst.Attribute)) and not copies(node):
                spelled = dotted_name(node)
                if spelled is not None and (spelled == name or spelled.startswith(prefix)):
                    return True
        return False

    def _fresh_in_iteration(self, target: cst.BaseExpression) -> bool:
        """``for model in candidates: ref = deepcopy(model)`` or ``model = Net(); ref = deepcopy(model)``
        in one loop iteration, before any training call: a copy of a new, untrained module (set-up)."""
        name = dotted_name(target)
        stack = self.context.stack
        loop_index = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], (cst.For, cst.While))),
                          None)
        if name is None or loop_index is None or loop_index + 2 >= len(stack):
            return False
        loop, block, stmt = stack[loop_index], stack[loop_index + 1], stack[loop_index + 2]
        if block is not loop.body or not isinstance(block, cst.IndentedBlock):
            return False
        body = list(block.body)
        k = next((j for j, s in enumerate(body) if s is stmt), None)
        if k is None:
            return False
        parts = name.split(".")
        names = [".".join(parts[: i + 1]) for i in range(len(parts))]  # ddp.module is new with ddp
        start = None
        if isinstance(loop, cst.For) and any(binds(loop.target, n) for n in names):
            start = 0
        for j in range(k - 1, -1, -1):
            if any(_assigns(body[j], n) for n in names):
                start = j + 1
                break
        if start is None:
            return False
        return not any(_calls_any(s, _TRAINING_CALLS) or _rebinds_by_call(s, names) for s in body[start:k])

    def _training_loop_scope(self) -> Optional[cst.CSTNode]:
        """The enclosing function (or module) if the call sits in a loop of code that trains."""
        in_loop = False
        for node in reversed(self.context.stack):
            if isinstance(node, (cst.For, cst.While)):
                in_loop = True
            elif isinstance(node, (cst.FunctionDef, cst.Module)):
                if not in_loop or (isinstance(node, cst.FunctionDef) and node.name.value == "__init__"):
                    return None
                return node if _calls_any(node, _TRAINING_CALLS) else None
            elif isinstance(node, (cst.ClassDef, cst.Lambda)):
                return None
        return None

    def _is_module(self, target: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        kind = self.context.kind_of(target)
        if kind is Kind.MODULE:
            return True
        if kind is not Kind.UNKNOWN:
            return False
        name = dotted_name(target)
        return name is not None and _calls_any(scope, MODULE_ONLY_METHODS, receiver=name)


def _calls_any(scope: cst.CSTNode, methods: frozenset, receiver: Optional[str] = None) -> bool:
    """Whether ``scope`` calls ``<receiver>.<one of methods>(...)``; at module level, function and
    class bodies are other code and are not searched."""
    top_level_only = isinstance(scope, cst.Module)
    for node in descendants(scope, stop=lambda n: top_level_only and isinstance(n, (cst.FunctionDef, cst.ClassDef))):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in methods:
            if receiver is None or dotted_name(node.func.value) == receiver:
                return True
    return False


def _rebinds_by_call(stmt: cst.CSTNode, names) -> bool:
    """Whether a compound statement rebinds one of ``names`` from a call it is given to (``clone =
    adapt(clone, ...)`` in an inner loop): what it holds afterwards may have been trained there."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return False
    for node in descendants(stmt):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            given = {dotted_name(a.value) for a in node.value.args}
            if any(binds(t.target, name) and name in given for t in node.targets for name in names):
                return True
    return False


def _assigns(stmt: cst.CSTNode, name: str) -> bool:
    """Whether a simple statement line assigns ``name`` (``name = ...``)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Assign) and any(binds(t.target, name) for t in small.targets):
            return True
        if isinstance(small, cst.AnnAssign) and small.value is not None and dotted_name(small.target) == name:
            return True
    return False
