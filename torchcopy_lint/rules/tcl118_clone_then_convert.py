"""TCL118: ``x.clone().to(..)`` (or ``.float()``, ``.cuda()`` ...) copies twice; ``x.to(.., copy=True)`` once."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import KIND_EVIDENCE, TRIGGERS
from ..engine import Rule
from ..imports import dotted_name
from ..semantic import Kind
from ._build import keyword, method, with_keywords
from ._convert import CAST_DTYPES, conversion_name, dtype_expression, receiver, torch_module
from ._conversion_evidence import ConversionEvidence


class CloneThenConvert(Rule):
    """``x.clone()`` copies ``x``; a conversion right after it (``.to(dtype/device)``,
    ``.float()``, ``.cuda()`` ...) copies the copy again. ``x.to(.., copy=True)`` converts in
    one copy and, like the clone, always returns a new tensor: it never aliases ``x``, even
    when nothing needs converting (``x.to(dtype)`` without ``copy=True`` would return ``x``
    itself). Values, dtype, device, strides and gradients are the same.

    Only receivers the semantic model knows are tensors are flagged (a TensorDict is none: its ``.to`` rejects
    ``copy=True``), and not a conversion to the dtype or device the receiver provably has
    (``argmax(x).clone().long()``: ``.long()`` returns the int64 clone itself). "Copies twice" is said outright
    where the code proves the conversion changes something (``.float()`` of an int64 tensor); elsewhere the
    message says when (``.to(device)``: when ``device`` is not already the tensor's), since the copy-once advice
    holds either way. No fix for ``clone(memory_format=..)`` (the layout would change) or a conversion with
    arguments the ``.to(..)`` form cannot take over; the fix is safe otherwise.
    """

    code = "TCL118"
    name = "clone-then-convert"
    message = ("`.clone().{method}` copies twice; `.to(..., copy=True)` copies once and still never "
               "aliases the source")
    #: Where nothing proves the conversion changes the dtype or device: it copies only when it does.
    conditional = ("`.clone().{method}` copies twice when {condition}; `.to(..., copy=True)` copies once either "
                   "way and, like the clone, never aliases the source")
    triggers = TRIGGERS["TCL118"]  # in codes.py, importable without LibCST
    segment_triggers = (TRIGGERS["TCL118"][0] + "|" + KIND_EVIDENCE,)

    VALID = [
        "import torch\nx = torch.randn(3)\ny = x.to(torch.float64, copy=True)",
        "def f(x):\n    return x.clone().float()",  # x unknown
        "import torch\nx = torch.randn(3)\ny = x.clone().view(-1)",
        "import copy\nclass Box:\n    def clone(self):\n        return copy.copy(self)\n"
        "    def to(self, d):\n        return self\nb = Box().clone().to('cpu')",
        # the conversion asks for what the clone has: it returns the clone, one copy in all
        "import torch\nx = torch.randn(3)\ny = x.detach().clone().to(x.device)",
        "import torch\nx = torch.randn(3)\ni = x.argmax()\ny = i.clone().long()",  # int64 already
        "import torch\nids = torch.tensor([[1, 2], [3, 4]])\ny = ids.clone().long()",  # Python ints: int64
        "import torch\nx = torch.zeros(3)\ny = x.clone().cpu()",  # made on the CPU
        # a TensorDict is no tensor (and its .to() rejects copy=True)
        "import torch\nfrom tensordict import TensorDict\n"
        "def f(policy, device):\n    return TensorDict.from_module(policy).data.detach().clone().to(device)",
    ]
    INVALID = [
        "import torch\nx = torch.randn(3)\ny = x.clone().to(torch.float64)",
        "import torch\ndef f(x: torch.Tensor):\n    return x.clone().float()",
        "import torch\nx = torch.randn(3)\ny = x.clone().cuda()",
        "import torch\nx = torch.randn(3)\ni = x.argmax()\ny = i.clone().float()",
        # the target is known at run time only: flagged with the condition ("when `device` is not already ...")
        "import torch\ndef f(x: torch.Tensor, device):\n    return x.clone().to(device)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        method_name = conversion_name(node)
        clone = receiver(node) if method_name is not None else None
        if not isinstance(clone, cst.Call) or not isinstance(clone.func, cst.Attribute) \
                or clone.func.attr.value != "clone" or any(arg.star for arg in node.args):
            return
        source = clone.func.value
        if self.context.kind_of(source) is not Kind.TENSOR or _to_itself(node, method_name, source):
            return
        conditions = ConversionEvidence(self.context, source).conditions(node, method_name)
        if conditions == []:  # it asks for what the clone has: `.long()` of an int64 tensor returns the clone
            return
        method_text = method_name + ("(...)" if node.args else "()")
        message = self.message.format(method=method_text) if conditions is None else self.conditional.format(
            method=method_text, condition=" or ".join(conditions))
        fixed = None if clone.args or clone.lpar else self._fixed(node, method_name, source)
        self.report(node, message,
                    replacement=fixed.with_changes(lpar=node.lpar, rpar=node.rpar) if fixed else None)

    def _fixed(self, node: cst.Call, method_name: str, source: cst.BaseExpression) -> Optional[cst.Call]:
        copy = {"copy": cst.Name("True")}
        if method_name == "to":
            positional = [arg for arg in node.args if arg.keyword is None]
            if len(positional) > 2:  # `.to(device, dtype, non_blocking, copy)`: copy is given positionally
                return None
            assert isinstance(node.func, cst.Attribute)
            return with_keywords(node.with_changes(func=node.func.with_changes(value=source)), copy)
        if node.args:  # `.float(memory_format=...)`, `.cuda(device, non_blocking)`
            return None
        if method_name in ("cpu", "cuda"):
            return method(source, "to", [cst.Arg(cst.SimpleString(f'"{method_name}"')), keyword("copy", cst.Name("True"))])
        torch = torch_module(self.context)
        if torch is None:
            return None
        return method(source, "to", [cst.Arg(dtype_expression(torch, CAST_DTYPES[method_name])), keyword("copy", cst.Name("True"))])


def _to_itself(node: cst.Call, method_name: str, source: cst.BaseExpression) -> bool:
    """``x.clone().to(x.device)`` (``.to(x)``, ``.to(x.dtype)``, ``.to(device=x.device)``; ``x`` maybe detached):
    the conversion asks for what the clone has and returns it itself; one copy is made, not two."""
    while isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
            and source.func.attr.value == "detach" and not source.args:
        source = source.func.value
    own = dotted_name(source)
    if method_name != "to" or own is None or not node.args:
        return False
    return all((arg.keyword is None or arg.keyword.value in ("device", "dtype")) and not arg.star
               and dotted_name(arg.value) in (own, f"{own}.device", f"{own}.dtype") for arg in node.args)
