"""TCL103: ``t.clone().detach()`` instead of ``t.detach().clone()``."""

from __future__ import annotations

import libcst as cst

from ..codes import TRIGGERS
from ..engine import Rule
from ..semantic import Kind
from ._build import call_before, method, swapped


class CloneThenDetach(Rule):
    """Both orders give identical tensors (values, strides, requires_grad=False,
    leaf). ``clone()`` first records one transient ``CloneBackward0`` node when the
    input requires grad; detaching first never touches autograd and reads as
    "a copy outside the graph". A clarity rule, not a speed rule; the fix is safe.
    """

    code = "TCL103"
    name = "clone-then-detach"
    message = "`.clone().detach()` records a throwaway autograd node first; use `.detach().clone()`"
    triggers = TRIGGERS["TCL103"]  # in codes.py, importable without LibCST

    VALID = [
        "t.detach().clone()",
        "t.clone()",
        "t.detach()",
        "import numpy as np\na = np.zeros(3)\nb = a.copy()",
    ]
    INVALID = [
        "t.clone().detach()",
        "import torch\ntorch.clone(t, memory_format=torch.contiguous_format).detach()",
        "t.clone().detach().cpu()",
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
            self.report(node, replacement=swapped(node, inner))

    def _report_function_form(self, node: cst.Call, inner: cst.Call) -> None:
        if not inner.args or inner.args[0].keyword is not None or inner.args[0].star:
            self.report(node)
            return
        first = inner.args[0]
        args = [first.with_changes(value=method(first.value, "detach")), *inner.args[1:]]
        self.report(node, replacement=inner.with_changes(args=args, lpar=node.lpar, rpar=node.rpar))
