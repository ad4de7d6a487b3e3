"""TCL104: mutation through ``.data`` where a graph may be live."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import GRAPH_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ._data_writes import DataWrites, GraphContext


class DataMutation(DataWrites):
    """Writes through ``.data`` bypass autograd's version counter. If a live graph
    saved the tensor, ``backward()`` silently uses the new values: with
    ``p=[1,2,3]``, ``loss=(p*p).sum()``, ``p.data.add_(1)`` gives the gradient
    ``[4,6,8]`` instead of ``[2,4,6]``. The same write through ``p.detach()`` or
    under ``torch.no_grad()`` raises instead of corrupting. ``p.data = v`` rebinds
    storage (dtype and shape may change silently).

    Only writes where a graph may be live are reported: ``forward``, hooks,
    training steps and any code not known to be graph-free. The same writes in
    graph-free code (``torch.no_grad()`` blocks, ``__init__`` and initialisers,
    functions passed to ``Module.apply``, ``nn.init``, weight loading and
    conversion, an optimizer's ``step()``, ``.grad`` buffers) are TCL119's
    (opt-in). Reads (``x.data.cpu()``, ``x.data.shape``) and ``.data`` attributes
    of non-tensors (a Dataset's ``self.data``, configs) are not flagged.
    """

    code = "TCL104"
    name = "data-mutation"
    message = (
        "in-place write through `.data` where a graph may be live: autograd does not see it, so a graph that "
        "saved this tensor silently gets wrong gradients; use `.detach()` (backward then raises) or `torch.no_grad()`"
    )
    rebind_message = (
        "assigning to `.data` swaps the tensor's storage behind autograd (dtype/shape may change silently); "
        "use `with torch.no_grad(): p.copy_(v)`"
    )
    triggers = TRIGGERS["TCL104"]  # in codes.py, importable without LibCST
    segment_triggers = (TRIGGERS["TCL104"][1] + "|" + GRAPH_EVIDENCE,)  # keep the callers the context reads

    VALID = [
        "x = t.data.cpu()",
        "class D(Dataset):\n    def f(self):\n        self.data[0] = 1\n        self.data = []",
        "cfg.data = 'path'",
        "card = ModelCard.load(repo)\ncard.data = card_data",
        "def lower(x, val):\n    x.data = val.data",
        "import dataclasses\ndef lower(buffer):\n    buffer.data = dataclasses.replace(buffer.data, ranges=[0])",
        "import torch\nwith torch.no_grad():\n    p.add_(1)",
        "import torch.nn as nn\nnn.init.normal_(m.weight.data)",
        "import torch\nwith torch.no_grad():\n    for p in model.parameters():\n        p.data.add_(1)",
        "class M(nn.Module):\n    def __init__(self):\n        self.fc.weight.data.normal_(0, 0.01)",
    ]
    INVALID = [
        "for p in model.parameters():\n    p.data.add_(1)",
        "import torch\np = torch.zeros(3)\np.data = torch.ones(3)",
        "for p in model.parameters():\n    p.data[0] = 1",
        "def f(param):\n    param.data = param.data.to(torch.float32)",
        "def f(shared_param, prim_param):\n    shared_param.data = prim_param",
        "import torch\ndef f(mask):\n    mask.data = torch.zeros_like(mask)",
        "for group in optimizer.param_groups:\n    for p in group['params']:\n        p.data = p.to('cpu')",
        "class A(nn.Module):\n    def forward(self, x, mask):\n        self.weight.data.masked_fill_(mask, 0)",
    ]

    def wants(self, context: GraphContext) -> bool:
        return context.live

    def found(self, node: cst.Attribute, context: GraphContext, evidence: str, form: str,
              replacement: Optional[cst.BaseExpression]) -> None:
        if form == "rebind":
            self.report(node, self.rebind_message)
            return
        message = self.message
        if context.kind in ("forward", "hook"):
            message = (f"in-place write through `.data` {context.where}: autograd does not see it, so backward() "
                       "silently uses the new values; use `.detach()` (backward then raises) or `torch.no_grad()`")
        # Unsafe: with a live graph the fixed code raises where the old one silently corrupted.
        self.report(node, message, replacement=replacement, applicability=Applicability.UNSAFE)
