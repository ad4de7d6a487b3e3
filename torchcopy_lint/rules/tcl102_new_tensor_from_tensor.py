"""TCL102: ``x.new_tensor(y)`` where ``y`` is already a tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..diagnostics import Applicability
from ..codes import TRIGGERS
from ..engine import Rule
from ..imports import dotted_name
from ..semantic import Kind
from ._build import keyword, keyword_values, method


class NewTensorFromTensor(Rule):
    """``x.new_tensor(y)`` on a tensor ``y`` warns on every call and returns a
    detached copy of ``y`` *cast to x's dtype and device* (not ``y.clone().detach()``,
    whatever torch's docstring says). The fix spells the cast out:
    ``y.detach().to(x, copy=True)``.

    ``new_tensor`` of lists and scalars is its intended use and is never flagged.
    """

    code = "TCL102"
    name = "new-tensor-from-tensor"
    message = (
        "`x.new_tensor(y)` on a tensor `y` warns on every call and silently casts `y` to x's dtype/device; "
        "use `y.detach().to(x, copy=True)`"
    )
    triggers = TRIGGERS["TCL102"]  # in codes.py, importable without LibCST
    # Keep what the semantic model reads elsewhere (see TCL101): `-> Tensor` functions, calls passing config fields.
    segment_triggers = (r"\bnew_tensor\s*\(|->\s*['\"]?[\w.]*Tensor\b|\.(?:config|cfg)\.",)

    VALID = [
        "import torch\nx = torch.zeros(2)\nx.new_tensor([1, 2])",
        "import torch\ndef f(x, y):\n    return x.new_tensor(y)",
        "import torch\nx = torch.zeros(2)\nx.new_tensor(3.0)",
    ]
    INVALID = [
        "import torch\nx = torch.zeros(2, dtype=torch.long)\ny = torch.randn(2)\nx.new_tensor(y)",
        "import torch\ndef f(x: torch.Tensor):\n    return x.new_tensor(x)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "new_tensor" or not node.args:
            return
        if self.context.qualified_name(func.value) is not None:  # e.g. torch.new_tensor: not a method call
            return
        data = node.args[0]
        if data.star or data.keyword is not None:
            return
        if self.context.kind_of(data.value) is not Kind.TENSOR:
            return
        replacement = self._replacement(node, func.value, data.value)
        # The receiver moves (and may vanish or repeat) in the fix: only a plain name is safe.
        pure = dotted_name(func.value) is not None
        self.report(node, replacement=replacement,
                    applicability=Applicability.SAFE if pure else Applicability.UNSAFE)

    @staticmethod
    def _replacement(node: cst.Call, receiver: cst.BaseExpression, data: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        kwargs = keyword_values(node, ("dtype", "device", "requires_grad"))
        if kwargs is None:
            return None
        detached = method(data, "detach")
        same = dotted_name(receiver) is not None and dotted_name(receiver) == dotted_name(data)
        if same and not ("dtype" in kwargs or "device" in kwargs):
            copy = method(detached, "clone")
        elif same:
            copy = method(detached, "to", [keyword(k, kwargs[k]) for k in ("device", "dtype") if k in kwargs]
                          + [keyword("copy", cst.Name("True"))])
        elif not ("dtype" in kwargs or "device" in kwargs):
            copy = method(detached, "to", [cst.Arg(receiver), keyword("copy", cst.Name("True"))])
        else:
            args = [
                keyword(k, kwargs[k] if k in kwargs else cst.Attribute(value=receiver, attr=cst.Name(k)))
                for k in ("device", "dtype")
            ]
            copy = method(detached, "to", args + [keyword("copy", cst.Name("True"))])
        if "requires_grad" in kwargs:
            copy = method(copy, "requires_grad_", [cst.Arg(kwargs["requires_grad"])])
        return copy.with_changes(lpar=node.lpar, rpar=node.rpar)
