"""TCL103: ``t.clone().detach()`` instead of ``t.detach().clone()``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import TRIGGERS
from ..engine import Rule
from ..semantic import Grad, Kind
from ._build import call_before, method, short_code, swapped


class CloneThenDetach(Rule):
    """Both orders give identical tensors (values, strides, requires_grad=False,
    leaf). ``clone()`` first records one transient ``CloneBackward0`` node when the
    input requires grad; detaching first never touches autograd and reads as
    "a copy outside the graph". A clarity rule, not a speed rule; the fix is safe.

    Silent where no node can be recorded (the semantic model's requires-grad evidence: a bool or
    integer tensor, a factory's result, ``.data``, a value made under ``no_grad``, the statement
    itself under ``no_grad``...); where nothing says whether ``t`` requires grad, the message says
    "when it does".
    """

    code = "TCL103"
    name = "clone-then-detach"
    message = "`.clone().detach()` records a throwaway autograd node first; use `.detach().clone()`"
    conditional = ("when {tensor} requires grad, `.clone()` records an autograd node that `.detach()` "
                   "then drops; use `.detach().clone()`")
    triggers = TRIGGERS["TCL103"]  # in codes.py, importable without LibCST

    VALID = [
        "t.detach().clone()",
        "t.clone()",
        "t.detach()",
        "import numpy as np\na = np.zeros(3)\nb = a.copy()",
        "import torch\nmask = torch.randn(3) > 0\nkept = mask.clone().detach()",  # bool: never requires grad
        "import torch\nwith torch.no_grad():\n    w = torch.nn.Parameter(torch.ones(2)).clone().detach()",
        "import torch\nx = torch.randn(3, requires_grad=True)\nx.requires_grad = False\ny = x.clone().detach()",
    ]
    INVALID = [
        "t.clone().detach()",
        "import torch\ntorch.clone(t, memory_format=torch.contiguous_format).detach()",
        "t.clone().detach().cpu()",
        "import torch\nmask = torch.randn(3, requires_grad=True) > 0\nw = torch.randn(3, requires_grad=True)\n"
        "kept = (w * mask).clone().detach()",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        inner = call_before(node, "detach")
        if inner is None:
            return
        if self.context.qualified_name(inner.func) == "torch.clone":
            self._report_function_form(node, inner)
        elif isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "clone":
            receiver = inner.func.value
            if self.context.kind_of(receiver) is Kind.NOT_TENSOR:
                return
            message = self._message(receiver)
            if message is not None:
                self.report(node, message, replacement=swapped(node, inner))

    def _message(self, tensor: cst.BaseExpression) -> Optional[str]:
        """None where no node can be recorded; the condition where nothing says whether one is."""
        grad = self.context.requires_grad(tensor)
        if grad is Grad.NO:
            return None
        return self.message if grad is Grad.YES else self.conditional.format(tensor=short_code(self.context, tensor))

    def _report_function_form(self, node: cst.Call, inner: cst.Call) -> None:
        if not inner.args or inner.args[0].keyword is not None or inner.args[0].star:
            self.report(node)
            return
        first = inner.args[0]
        message = self._message(first.value)
        if message is None:
            return
        args = [first.with_changes(value=method(first.value, "detach")), *inner.args[1:]]
        self.report(node, message, replacement=inner.with_changes(args=args, lpar=node.lpar, rpar=node.rpar))
