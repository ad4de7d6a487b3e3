"""TCL117: ``x.cpu().detach()`` (or ``.to(..)``, ``.float()`` ...) instead of ``x.detach().cpu()``."""

from __future__ import annotations

import libcst as cst

from ..codes import CAST_CALL, KIND_EVIDENCE, TRIGGERS
from ..engine import Rule
from ..semantic import Grad, Kind
from ._build import call_before, short_code, swapped
from ._convert import conversion_name, receiver


class ConvertThenDetach(Rule):
    """On a tensor that requires grad, a conversion (``.cpu()``, ``.cuda()``, ``.to(..)``,
    ``.float()``, ...) records an autograd node (``ToCopyBackward0``) that the ``.detach()``
    right after it throws away. Detaching first gives the same tensor (values, dtype,
    device, strides, no grad, storage shared with ``x`` exactly when the conversion was a
    no-op) without touching autograd, and says "a value, not part of the graph" up front.

    Only receivers the semantic model knows are tensors are flagged: a project object with
    its own ``.to()``/``.detach()`` is left alone, and so is a tensor that cannot require grad
    there (the semantic model's requires-grad evidence: a bool or integer tensor, a factory's
    result, ``.data``, a value made under ``no_grad``, the statement under ``no_grad``...), and a
    conversion to an integer or bool dtype (``.long()``, ``.to(torch.int32)``): its result never requires
    grad, so it records nothing. Where nothing says whether the receiver requires grad, the message says
    "when it does". The fix swaps the two calls (safe).
    """

    code = "TCL117"
    name = "convert-then-detach"
    message = ("`.{method}.detach()` records an autograd copy node (where the conversion copies) and then drops it; "
               "detach first: `.detach().{method}`")
    conditional = ("when {tensor} requires grad, `.{method}` records an autograd copy node (where it copies) that "
                   "`.detach()` then drops; detach first: `.detach().{method}`")
    triggers = TRIGGERS["TCL117"]  # in codes.py, importable without LibCST
    segment_triggers = (CAST_CALL + "|" + KIND_EVIDENCE,)

    VALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.detach().cpu()",
        "def f(x):\n    return x.cpu().detach()",  # x unknown
        "import torch\nx = torch.randn(3)\ny = x.cpu().numpy()",
        "import torch\nx = torch.randn(3)\ny = x.clone().detach()",  # TCL103's
        "import torch\nx = torch.randn(3)\ny = x.float().detach()",  # a factory's result: nothing to record
        "import torch\ndef f(x: torch.Tensor):\n    return (x > 0).cpu().detach()",  # bool
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.long().detach()",  # an integer result
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.to('cpu', torch.bool).detach()",
        "import torch\ndef f(x: torch.Tensor):\n    with torch.no_grad():\n        return x.cpu().detach()",
        "class Box:\n    def to(self, d):\n        return self\n    def detach(self):\n        return self\n"
        "b = Box().to('cpu').detach()",
    ]
    INVALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.cpu().detach()",
        "import torch\ndef f(x: torch.Tensor):\n    return x.to(torch.float64).detach().numpy()",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = (x * 2).float().detach()",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        inner = call_before(node, "detach")
        if inner is None:
            return
        method = conversion_name(inner)
        if method is None or any(arg.star for arg in inner.args):
            return
        tensor = receiver(inner)
        if self.context.kind_of(tensor) is not Kind.TENSOR:
            return
        grad = self.context.requires_grad(tensor)
        if grad is Grad.NO or self.context.requires_grad(inner) is Grad.NO:
            return  # nothing requires grad, or an integer or bool result (`.long()`, `.to(torch.int32)`)
        call = method + ("(...)" if inner.args else "()")
        message = self.message.format(method=call) if grad is Grad.YES else \
            self.conditional.format(method=call, tensor=short_code(self.context, tensor))
        self.report(node, message, replacement=swapped(node, inner))

