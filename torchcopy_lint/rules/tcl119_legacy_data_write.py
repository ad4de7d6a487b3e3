"""TCL119: a write through ``.data`` in graph-free code (opt-in)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import GRAPH_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ._data_writes import DataWrites, GraphContext


class LegacyDataWrite(DataWrites):
    """The writes TCL104 looks for (``p.data.add_()``, ``p.data[i] = v``,
    ``p.data = v``, ``nn.init.normal_(p.data)``), where nothing shows a graph
    holding the tensor is live. Where there is evidence that none can be (a
    ``torch.no_grad()``/``inference_mode()`` block or decorated function,
    ``__init__`` and methods only called from it, initialisers
    (``reset_parameters``, ``_init_weights``, functions passed to
    ``Module.apply``), ``nn.init`` calls, weight loading and conversion helpers,
    an optimizer's ``step()``, ``.grad`` buffers) the message says so; elsewhere
    (set-up code, after ``backward()``, helpers with no caller in sight) it says
    the condition instead. Opt-in (``extend-select = ["TCL119"]``): the write
    hides from autograd, so if the code is ever moved where a graph is live it
    silently corrupts gradients instead of raising.

    ``nn.init.normal_(w.data)`` -> ``nn.init.normal_(w)`` is a safe fix
    (``nn.init`` runs under ``no_grad``); ``w.data.normal_()`` ->
    ``w.detach().normal_()`` is unsafe (if a graph that saved ``w`` is live after
    all, the fixed code raises in backward). ``p.data = v`` is not a legacy form
    of ``copy_``: it gives ``p`` v's storage, dtype, shape and device and keeps
    the object; only where v is computed from ``p`` with the same dtype, shape
    and device does the message suggest ``copy_`` (with the storage condition).
    """

    code = "TCL119"
    name = "legacy-data-write"
    message = ("write through `.data`{where} (no graph can be live): a legacy idiom that hides the write from "
               "autograd; use `.detach()` or `torch.no_grad()`")
    unknown_message = ("write through `.data`: autograd does not see it; nothing here shows a graph is live (if one "
                       "that saved this tensor is, backward silently uses the new values); `.detach()` or "
                       "`torch.no_grad()` make the same write visible to autograd")
    init_message = ("`nn.init` already runs under `torch.no_grad()`: pass the tensor itself, not `.data`")
    rebind_message = ("assigning to `.data`{where}: the tensor keeps its identity (modules and optimizers keep "
                      "their reference) and takes the value's storage, dtype, shape and device; an in-place copy "
                      "would instead cast into the old storage, so keep `.data =` where that is the point")
    same_meta_message = ("assigning to `.data`{where}: the value has the tensor's dtype, shape and device, so "
                         "`with torch.no_grad(): {target}.copy_(...)` writes the same values without `.data`, "
                         "unless another tensor (a view, a `state_dict()` snapshot) shares the old storage and "
                         "must keep the old values")
    triggers = TRIGGERS["TCL119"]  # in codes.py, importable without LibCST
    segment_triggers = (TRIGGERS["TCL119"][1] + "|" + GRAPH_EVIDENCE,)  # keep the callers the context reads

    VALID = [
        "import torch.nn as nn\nmodel = nn.Linear(2, 2)\nout = model(x)\nfor p in model.parameters():\n"
        "    p.data.add_(1)\nout.sum().backward()",
        "class A(nn.Module):\n    def forward(self, x, mask):\n        y = x @ self.weight\n"
        "        self.weight.data.masked_fill_(mask, 0)\n        return y",
        "import torch\nwith torch.no_grad():\n    p.add_(1)",
        "class D(Dataset):\n    def __init__(self):\n        self.data[0] = 1\n        self.data = []",
        "from types import SimpleNamespace\ndef __init__(self):\n    ns = SimpleNamespace(data=[1])\n    ns.data[0] = 2",
    ]
    INVALID = [
        "for p in model.parameters():\n    p.data.add_(1)",
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
        where = f" {context.where}" if context.graph_free else ""
        if form == "rebind":
            if self.keeps_metadata(node):
                target = self.context.module.code_for_node(node.value)
                self.report(node, self.same_meta_message.format(where=where, target=target))
            else:
                self.report(node, self.rebind_message.format(where=where))
        elif form == "init":
            # Safe: nn.init writes under no_grad; `w` itself differs from `w.data` only in its version counter,
            # which matters only to a graph that saved `w`, and no graph is live here.
            self.report(node, self.init_message, replacement=replacement)
        else:
            # Unsafe: if a graph that saved the tensor is live after all, the fixed code raises in backward.
            message = self.message.format(where=where) if context.graph_free else self.unknown_message
            self.report(node, message, replacement=replacement, applicability=Applicability.UNSAFE)
