"""TCL117: ``x.cpu().detach()`` (or ``.to(..)``, ``.float()`` ...) instead of ``x.detach().cpu()``."""

from __future__ import annotations

import libcst as cst

from ..codes import CAST_CALL, KIND_EVIDENCE, TRIGGERS
from ..engine import Rule
from ..semantic import Kind
from ._build import call_before, swapped
from ._convert import conversion_name, receiver


class ConvertThenDetach(Rule):
    """On a tensor that requires grad, a conversion (``.cpu()``, ``.cuda()``, ``.to(..)``,
    ``.float()``, ...) records an autograd node (``ToCopyBackward0``) that the ``.detach()``
    right after it throws away. Detaching first gives the same tensor (values, dtype,
    device, strides, no grad, storage shared with ``x`` exactly when the conversion was a
    no-op) without touching autograd, and says "a value, not part of the graph" up front.

    Only receivers the semantic model knows are tensors are flagged: a project object with
    its own ``.to()``/``.detach()`` is left alone. The fix swaps the two calls (safe).
    """

    code = "TCL117"
    name = "convert-then-detach"
    message = ("`.{method}.detach()` records an autograd copy node and then drops it; "
               "detach first: `.detach().{method}`")
    triggers = TRIGGERS["TCL117"]  # in codes.py, importable without LibCST
    segment_triggers = (CAST_CALL + "|" + KIND_EVIDENCE,)

    VALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.detach().cpu()",
        "def f(x):\n    return x.cpu().detach()",  # x unknown
        "import torch\nx = torch.randn(3)\ny = x.cpu().numpy()",
        "import torch\nx = torch.randn(3)\ny = x.clone().detach()",  # TCL103's
        "class Box:\n    def to(self, d):\n        return self\n    def detach(self):\n        return self\n"
        "b = Box().to('cpu').detach()",
    ]
    INVALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.cpu().detach()",
        "import torch\ndef f(x: torch.Tensor):\n    return x.to(torch.float64).detach().numpy()",
        "import torch\nx = torch.randn(3)\ny = x.float().detach()",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        inner = call_before(node, "detach")
        if inner is None:
            return
        method = conversion_name(inner)
        if method is None or any(arg.star for arg in inner.args):
            return
        if self.context.kind_of(receiver(inner)) is not Kind.TENSOR:
            return
        self.report(node, self.message.format(method=method + ("(...)" if inner.args else "()")), replacement=swapped(node, inner))

