"""TCL105: ``copy.deepcopy`` of a live ``nn.Module`` inside a training loop."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..engine import Rule
from ..imports import dotted_name
from ..inference import MODULE_ONLY_METHODS, Kind

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
    triggers = (r"\bdeepcopy\b", r"\b(?:backward|step)\s*\(")  # only training code is checked

    VALID = [
        "import copy\nimport torch.nn as nn\nclass Net(nn.Module):\n    pass\nmodel = Net()\nema = copy.deepcopy(model)\n"
        "for x in data:\n    loss = model(x)\n    loss.backward()",
        "import copy\nfor x in data:\n    best = copy.deepcopy(model.state_dict())\n    loss.backward()",
        "import copy\nfor x in data:\n    c = copy.deepcopy(config)\n    loss.backward()",
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
        if scope is None or not self._is_module(target, scope):
            return
        self.report(node)

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


class _CallFinder(cst.CSTVisitor):
    def __init__(self, methods: frozenset, receiver: Optional[str]) -> None:
        self.methods = methods
        self.receiver = receiver
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self.methods:
            if self.receiver is None or dotted_name(func.value) == self.receiver:
                self.found = True
        return not self.found


def _calls_any(scope: cst.CSTNode, methods: frozenset, receiver: Optional[str] = None) -> bool:
    """Whether ``scope`` calls ``<receiver>.<one of methods>(...)``."""
    finder = _CallFinder(methods, receiver)
    scope.visit(finder)
    return finder.found
