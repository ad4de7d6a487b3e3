"""TCL101: ``torch.tensor(t)`` where ``t`` is already a tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import KIND_EVIDENCE, TENSOR_IMPORT, TENSOR_OF_NAME, TRIGGERS
from ..engine import Rule
from ..semantic import Kind
from ._build import keyword, keyword_values, method


class TensorCopyConstruct(Rule):
    """``torch.tensor()`` is for Python data; on a tensor it copy-constructs it and
    warns (UserWarning) on every call. ``t.detach().clone()`` says what it does,
    keeps strides and memory format, and does not warn.

    Only arguments the semantic model *knows* are tensors are flagged; lists, numpy
    arrays, scalars and anything unknown are left alone. ``torch.as_tensor(t)`` is
    not a copy (it returns ``t`` itself) and is not flagged.
    """

    code = "TCL101"
    name = "tensor-copy-construct"
    message = "`torch.tensor()` on a tensor copy-constructs it and warns on every call; use {form}"
    triggers = TRIGGERS["TCL101"]  # in codes.py, importable without LibCST
    # Also keep what the semantic model reads elsewhere in the file (KIND_EVIDENCE).
    segment_triggers = (TENSOR_OF_NAME + "|" + KIND_EVIDENCE,)
    unprunable = TENSOR_IMPORT  # `tensor` under another name: calls can't be found by text

    VALID = [
        "import torch\ntorch.tensor([1.0, 2.0])",
        "import torch, numpy as np\ntorch.tensor(np.zeros(3))",
        "import torch\nt = torch.randn(3)\ntorch.as_tensor(t)",
        "import torch\ndef f(x):\n    return torch.tensor(x)",
        "import torch\ndef f(x):\n    if isinstance(x, torch.Tensor):\n        return x\n    return torch.tensor(x)",
        "import torch\nt = torch.randn(3)\nt = t.tolist()\ntorch.tensor(t)",
        # an annotation that the code contradicts: the function returns a list
        "import torch\ndef sizes(n: int) -> torch.Tensor:\n    out = []\n    out.append(n)\n    return out\n"
        "torch.tensor(sizes(3))",
        # an annotation that the callers contradict: they pass config values
        "import torch\nclass P:\n    @staticmethod\n    def norm(x: torch.Tensor, mean: torch.Tensor):\n"
        "        return x - torch.tensor(mean)\n    def run(self, x):\n        return self.norm(x, self.vae.config.mean)",
    ]
    INVALID = [
        "import torch\nt = torch.randn(3)\ntorch.tensor(t)",
        "import torch as th\ndef f(x: th.Tensor):\n    return th.tensor(x, dtype=th.float64)",
        "from torch import tensor as mk, zeros\nz = zeros(2)\nmk(z)",
        "import torch\ndef make(n: int) -> torch.Tensor:\n    return torch.zeros(n)\ntorch.tensor(make(3))",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or self.context.qualified_name(node.func) != "torch.tensor":
            return
        data = node.args[0]
        if data.star or (data.keyword is not None and data.keyword.value != "data"):
            return
        if self.context.kind_of(data.value) is not Kind.TENSOR:
            return
        self.report(node, self.message.format(form=self._form(node)), replacement=self._replacement(node, data))

    @staticmethod
    def _form(node: cst.Call) -> str:
        """The advised form, with the call's own ``device=``/``dtype=``/``requires_grad=`` kept (as the fix keeps
        them): ``.detach().clone()`` alone would drop a conversion the call asks for."""
        kwargs = keyword_values(node, ("dtype", "device", "requires_grad", "pin_memory"))
        if kwargs is None or "pin_memory" in kwargs:
            return "`.detach().clone()`, and map the call's other arguments"
        given = [k for k in ("device", "dtype") if k in kwargs]
        form = f".detach().to({', '.join(k + '=...' for k in given)}, copy=True)" if given else ".detach().clone()"
        return "`" + form + (".requires_grad_(...)" if "requires_grad" in kwargs else "") + "`"

    @staticmethod
    def _replacement(node: cst.Call, data: cst.Arg) -> Optional[cst.BaseExpression]:
        if data.keyword is not None:
            return None
        kwargs = keyword_values(node, ("dtype", "device", "requires_grad", "pin_memory"))
        if kwargs is None or "pin_memory" in kwargs:  # pin_memory on a tensor raises: nothing to keep
            return None
        detached = method(data.value, "detach")
        to_args = [keyword(k, kwargs[k]) for k in ("device", "dtype") if k in kwargs]
        if to_args:  # copy=True: without it a matching dtype/device returns an alias
            copy = method(detached, "to", to_args + [keyword("copy", cst.Name("True"))])
        else:
            copy = method(detached, "clone")
        if "requires_grad" in kwargs:
            copy = method(copy, "requires_grad_", [cst.Arg(kwargs["requires_grad"])])
        return copy.with_changes(lpar=node.lpar, rpar=node.rpar)
