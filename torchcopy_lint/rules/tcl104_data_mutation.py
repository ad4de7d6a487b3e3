"""TCL104: mutation through ``.data``."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from ..diagnostics import Applicability
from ..codes import TRIGGERS
from ..engine import Rule
from ..imports import dotted_name
from ..semantic import Kind

# In-place tensor methods that do not write values.
_HARMLESS_IN_PLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad", "detach_"})
# Attributes that hold parameters, buffers or gradients: `m.weight.data = ...` is a tensor's `.data`.
_TENSOR_ATTRIBUTES = frozenset({"weight", "bias", "grad", "_grad", "running_mean", "running_var", "weight_g",
                                "weight_v", "weight_orig", "bias_orig"})
_TENSOR_NAME = re.compile(r"^(?:\w+_)?(?:param|params|parameter|tensor|weight|bias|grad|buffer|embeddings)$")
# Methods that return a tensor when called on one: `p.data = p.data.to(dtype)` rebinds a tensor's storage.
_TENSOR_SELF_METHODS = frozenset({"to", "cpu", "cuda", "float", "half", "double", "bfloat16", "view", "view_as",
                                  "type_as", "reshape", "contiguous", "clone", "detach", "pin_memory", "resize_"})


class DataMutation(Rule):
    """Writes through ``.data`` bypass autograd's version counter. If a live graph
    saved the tensor, ``backward()`` silently uses the new values: with
    ``p=[1,2,3]``, ``loss=(p*p).sum()``, ``p.data.add_(1)`` gives the gradient
    ``[4,6,8]`` instead of ``[2,4,6]``. The same write through ``p.detach()`` or
    under ``torch.no_grad()`` raises instead of corrupting. ``p.data = v`` rebinds
    storage (dtype and shape may change silently).

    Reads (``x.data.cpu()``, ``x.data.shape``) and ``.data`` attributes of
    non-tensors (a Dataset's ``self.data``, configs) are not flagged.
    """

    code = "TCL104"
    name = "data-mutation"
    message = (
        "in-place write through `.data` bypasses autograd: a live graph silently gets wrong gradients; "
        "use `.detach()` or `torch.no_grad()`"
    )
    rebind_message = (
        "assigning to `.data` swaps the tensor's storage behind autograd (dtype/shape may change silently); "
        "use `with torch.no_grad(): p.copy_(v)`"
    )
    triggers = TRIGGERS["TCL104"]  # in codes.py, importable without LibCST

    VALID = [
        "x = t.data.cpu()",
        "class D(Dataset):\n    def f(self):\n        self.data[0] = 1\n        self.data = []",
        "cfg.data = 'path'",
        "card = ModelCard.load(repo)\ncard.data = card_data",
        "def lower(x, val):\n    x.data = val.data",
        "import dataclasses\ndef lower(buffer):\n    buffer.data = dataclasses.replace(buffer.data, ranges=[0])",
        "import torch\nwith torch.no_grad():\n    p.add_(1)",
    ]
    INVALID = [
        "for p in model.parameters():\n    p.data.add_(1)",
        "import torch\np = torch.zeros(3)\np.data = torch.ones(3)",
        "import torch.nn as nn\nnn.init.normal_(m.weight.data)",
        "for p in model.parameters():\n    p.data[0] = 1",
        "def f(param):\n    param.data = param.data.to(torch.float32)",
        "def f(shared_param, prim_param):\n    shared_param.data = prim_param",
        "import torch\ndef f(mask):\n    mask.data = torch.zeros_like(mask)",
        "for group in optimizer.param_groups:\n    for p in group['params']:\n        p.data = p.to('cpu')",
    ]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        receiver = node.value
        parent = self.context.parent()
        grand = self.context.parent(2)
        if isinstance(parent, cst.Attribute) and parent.value is node:  # p.data.add_(...)
            name = parent.attr.value
            if isinstance(grand, cst.Call) and grand.func is parent and name.endswith("_") \
                    and not name.startswith("__") and name not in _HARMLESS_IN_PLACE:
                self._report_write(node, receiver, _detach(node))
        elif isinstance(parent, cst.Subscript) and parent.value is node:  # p.data[i] = v, p.data[i] += v
            if isinstance(grand, (cst.AssignTarget, cst.AugAssign)) and grand.target is parent:
                self._report_write(node, receiver, _detach(node))
        elif isinstance(parent, cst.AugAssign) and parent.target is node:  # p.data += v
            self._report_write(node, receiver, None)
        elif isinstance(parent, cst.AssignTarget) and parent.target is node:  # p.data = v
            value = grand.value if isinstance(grand, cst.Assign) else None
            if value is None or not self._visibly_not_tensor(value):
                evidence = self._evidence(receiver)
                if evidence is None and value is not None and self.context.value_of(receiver).kind is Kind.UNKNOWN \
                        and self._rebinds_from_tensor(receiver, value):
                    evidence = "likely"
                if evidence is not None:
                    self.report(node, self.rebind_message)
        elif isinstance(parent, cst.Arg) and parent.value is node and isinstance(grand, cst.Call) \
                and grand.args and grand.args[0] is parent:
            self._check_in_place_function(node, grand)

    def _check_in_place_function(self, node: cst.Attribute, call: cst.Call) -> None:
        """``nn.init.normal_(m.weight.data)`` and other in-place torch functions."""
        q = self.context.qualified_name(call.func)
        if not q or not q.startswith("torch.") or not q.endswith("_") or q.endswith("__"):
            return
        # nn.init functions already run under no_grad: the plain parameter is the idiom.
        if q.startswith("torch.nn.init."):
            replacement: cst.BaseExpression = node.value.with_changes(
                lpar=[*node.lpar, *node.value.lpar], rpar=[*node.value.rpar, *node.rpar])
        else:
            replacement = _detach(node)
        self._report_write(node, node.value, replacement)

    def _report_write(self, node: cst.Attribute, receiver: cst.BaseExpression,
                      replacement: Optional[cst.BaseExpression]) -> None:
        """One evidence ladder for every form of write: a receiver known to be a tensor is flagged with
        the fix; one that is probably a tensor is flagged without a fix; anything else is silent."""
        evidence = self._evidence(receiver)
        if evidence is None:
            return
        # Unsafe: with a live graph the fixed code raises where the old one silently corrupted.
        self.report(node, replacement=replacement if evidence == "known" else None,
                    applicability=Applicability.UNSAFE)

    def _evidence(self, receiver: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """'known' (the model knows a tensor), 'likely' (unknown to the model, but named or made like a
        tensor and not known to be anything else) or None."""
        kind = self.context.value_of(receiver).kind
        if kind.is_tensor:
            return "known"  # `self` too, in a Tensor subclass
        if kind.is_known_other or depth > 2 or isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return None
        name = dotted_name(receiver)
        if name is not None and _TENSOR_NAME.search(name.rsplit(".", 1)[-1]) is not None:
            return "likely"
        if isinstance(receiver, cst.Attribute) and receiver.attr.value in _TENSOR_ATTRIBUTES:
            base = receiver.value
            if not (isinstance(base, cst.Name) and base.value == "self") \
                    and (self.context.value_of(base).kind in (Kind.MODULE, Kind.UNKNOWN)
                         or self.context.value_of(base).kind.is_tensor):  # p._grad
                return "likely"
        if isinstance(receiver, cst.Subscript):
            return self._evidence(receiver.value, depth + 1)
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value in _TENSOR_SELF_METHODS:
            return self._evidence(receiver.func.value, depth + 1)
        if isinstance(receiver, cst.Name):  # b = m.bias.view(n, -1); b.data[:, 4] += v
            bindings = self.context.reaching(receiver)
            if bindings and all(b.how == "assign" and not b.path for b in bindings) \
                    and all(self._evidence(b.value, depth + 1) for b in bindings):
                return "likely"
        return None

    def _visibly_not_tensor(self, value: cst.BaseExpression) -> bool:
        """``buffer.data = dataclasses.replace(...)``: a value known not to be a tensor, or made by a
        non-torch library function."""
        if self.context.value_of(value).kind.is_known_other:
            return True
        if isinstance(value, cst.Call):
            q = self.context.qualified_name(value.func)
            return q is not None and not q.startswith("torch.") and q.split(".")[0] not in ("copy",)
        return False

    def _rebinds_from_tensor(self, receiver: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """``x.data = <tensor>``: the assigned value is a tensor, or converts ``x`` itself
        (``p.data = p.data.to(torch.float32)``, ``p.data = p.to(device)``)."""
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return False
        if self.context.value_of(value).kind.is_tensor:
            return True
        name = dotted_name(receiver)
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _TENSOR_SELF_METHODS:
            inner = value.func.value
            if name is not None and dotted_name(inner) in (name, name + ".data"):
                return True
            value = inner
        return False


def _detach(node: cst.Attribute) -> cst.Call:
    """``p.data`` → ``p.detach()``, keeping the dot's formatting and any parentheses."""
    return cst.Call(func=node.with_changes(attr=cst.Name("detach"), lpar=[], rpar=[]),
                    lpar=node.lpar, rpar=node.rpar)
