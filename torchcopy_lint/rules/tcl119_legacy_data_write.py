"""TCL119: a write through ``.data`` in graph-free code (opt-in)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import GRAPH_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ._data_writes import DataWrites, GraphContext


class LegacyDataWrite(DataWrites):
    """The writes TCL104 looks for (``p.data.add_()``, ``p.data[i] = v``,
    ``p.data = v``, ``nn.init.normal_(p.data)``), where no graph can be live:
    in a ``torch.no_grad()``/``inference_mode()`` block or decorated function,
    ``__init__`` and methods only called from it, initialisers
    (``reset_parameters``, ``_init_weights``, functions passed to
    ``Module.apply``), ``nn.init`` calls, weight loading and conversion helpers,
    an optimizer's ``step()``, ``.grad`` buffers. There a ``.data`` write does
    what the modern form does, so this is a legacy idiom, not a bug: opt-in
    (``extend-select = ["TCL119"]``). It hides the write from autograd: if the
    code is ever moved where a graph is live, it silently corrupts gradients
    instead of raising. ``nn.init.normal_(w.data)`` -> ``nn.init.normal_(w)`` is
    a safe fix (``nn.init`` runs under ``no_grad``); ``w.data.normal_()`` ->
    ``w.detach().normal_()`` is unsafe (the context is inferred: if a graph
    that saved ``w`` is live after all, the fixed code raises in backward).
    """

    code = "TCL119"
    name = "legacy-data-write"
    message = ("write through `.data` {where} (no graph can be live): a legacy idiom that hides the write from "
               "autograd; use `.detach()` or `torch.no_grad()`")
    init_message = ("`nn.init` already runs under `torch.no_grad()`: pass the tensor itself, not `.data`")
    rebind_message = ("assigning to `.data` {where} (no graph can be live) swaps the tensor's storage "
                      "(dtype/shape may change silently); prefer `with torch.no_grad(): p.copy_(v)` or a new Parameter")
    triggers = TRIGGERS["TCL119"]  # in codes.py, importable without LibCST
    segment_triggers = (TRIGGERS["TCL119"][1] + "|" + GRAPH_EVIDENCE,)  # keep the callers the context reads

    VALID = [
        "for p in model.parameters():\n    p.data.add_(1)",
        "class A(nn.Module):\n    def forward(self, x, mask):\n        self.weight.data.masked_fill_(mask, 0)",
        "import torch\nwith torch.no_grad():\n    p.add_(1)",
        "class D(Dataset):\n    def __init__(self):\n        self.data[0] = 1\n        self.data = []",
        "from types import SimpleNamespace\ndef __init__(self):\n    ns = SimpleNamespace(data=[1])\n    ns.data[0] = 2",
    ]
    INVALID = [
        "import torch.nn as nn\nnn.init.normal_(m.weight.data)",
        "import torch\nwith torch.no_grad():\n    for p in model.parameters():\n        p.data.add_(1)",
        "class M(nn.Module):\n    def __init__(self):\n        self.fc.weight.data.normal_(0, 0.01)",
        "def _init_weights(m):\n    m.bias.data.zero_()",
        "def helper(m):\n    m.bias.data.zero_()\nmodel.apply(helper)",
        "for p in model.parameters():\n    p.grad.data.zero_()",
        "import torch\nclass SGD(torch.optim.Optimizer):\n    def step(self):\n        for group in self.param_groups:\n"
        "            for p in group['params']:\n                p.data.add_(p.grad, alpha=-0.1)",
    ]

    def wants(self, context: GraphContext) -> bool:
        return not context.live

    def found(self, node: cst.Attribute, context: GraphContext, evidence: str, form: str,
              replacement: Optional[cst.BaseExpression]) -> None:
        if form == "rebind":
            self.report(node, self.rebind_message.format(where=context.where))
        elif form == "init":
            # Safe: nn.init writes under no_grad; `w` itself differs from `w.data` only in its version counter,
            # which matters only to a graph that saved `w`, and no graph is live here.
            self.report(node, self.init_message, replacement=replacement)
        else:
            # Unsafe: the context is inferred; if a graph that saved the tensor is live after all, backward raises.
            self.report(node, self.message.format(where=context.where), replacement=replacement,
                        applicability=Applicability.UNSAFE)
