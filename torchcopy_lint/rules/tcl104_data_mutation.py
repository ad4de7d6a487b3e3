"""TCL104: mutation through ``.data`` where a graph may be live."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import GRAPH_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ..parse.positions import holder_of, positions_of
from ..rulepass.rule import NodeFix, Violation
from ._data_writes import DataWrites, GraphContext


class DataMutation(DataWrites):
    """Writes through ``.data`` bypass autograd's version counter. If a live graph
    saved the tensor, ``backward()`` silently uses the new values: with
    ``p=[1,2,3]``, ``loss=(p*p).sum()``, ``p.data.add_(1)`` gives the gradient
    ``[4,6,8]`` instead of ``[2,4,6]``. The same write through ``p.detach()`` or
    under ``torch.no_grad()`` raises instead of corrupting. ``p.data = v`` rebinds
    storage, dtype and shape behind the graph.

    Reported only where there is evidence that a graph holding the tensor is live:
    in a module's ``forward`` (or a method called from it) after something in it
    used the tensor (a write before every use changes what this forward computes:
    ``self.scale.data.clamp_(...)``, then ``x * self.scale``), in a forward or
    backward hook (not a forward pre-hook writing the hooked module's own tensor
    before anything used it: the module's forward has not run yet), or after a forward of the written tensor's module and before
    that step's ``backward()`` of a loss not computed anew after the write (the
    message names both calls). Every other
    ``.data`` write (set-up before any forward, after ``backward()``, target
    networks only run under ``no_grad``, helpers with no caller in sight) is
    TCL119's (opt-in). Reads (``x.data.cpu()``, ``x.data.shape``) and ``.data``
    attributes of non-tensors (a Dataset's ``self.data``, configs) are not flagged.
    """

    code = "TCL104"
    name = "data-mutation"
    message = (
        "in-place write through `.data` {where}: autograd does not see the write, so backward() silently uses the "
        "new values; use `.detach()` (backward then raises) or `torch.no_grad()`"
    )
    rebind_fact = (
        "assigning to `.data` swaps the tensor's storage, dtype and shape behind autograd {where}: backward uses "
        "the new values where the graph saved the tensor as an input (`x * w`), the old ones where it saved a view "
        "(`F.linear` saves `w.t()`) or the tensor as an op's output (`relu`, `exp`)"
    )
    rebind_message = rebind_fact + "; rebind it outside the step, after `backward()`"
    triggers = TRIGGERS["TCL104"]  # in codes.py, importable without LibCST
    segment_triggers = (TRIGGERS["TCL104"][1] + "|" + GRAPH_EVIDENCE,)  # keep the callers the context reads

    VALID = [
        "x = t.data.cpu()",
        "for p in model.parameters():\n    p.data.add_(1)",
        "import torch\np = torch.zeros(3)\np.data = torch.ones(3)",
        "def f(param):\n    param.data = param.data.to(torch.float32)",
        "out = model(x)\nloss = out.sum()\nloss.backward()\nfor p in model.parameters():\n    p.data.add_(1)",
        "import torch\nwith torch.no_grad():\n    out = model(x)\nfor p in model.parameters():\n    p.data.add_(1)\n"
        "loss.backward()",
        "out = policy(x)\nfor p in target.parameters():\n    p.data.mul_(0.9)\nout.sum().backward()",
        "class D(Dataset):\n    def f(self):\n        self.data[0] = 1\n        self.data = []",
        "cfg.data = 'path'",
        "card = ModelCard.load(repo)\ncard.data = card_data",
        "def lower(x, val):\n    x.data = val.data",
        "import dataclasses\ndef lower(buffer):\n    buffer.data = dataclasses.replace(buffer.data, ranges=[0])",
        "import torch\nwith torch.no_grad():\n    p.add_(1)",
        "import torch.nn as nn\nnn.init.normal_(m.weight.data)",
        "import torch\nwith torch.no_grad():\n    for p in model.parameters():\n        p.data.add_(1)",
        "class M(nn.Module):\n    def __init__(self):\n        self.fc.weight.data.normal_(0, 0.01)",
        "class A(nn.Module):\n    def forward(self, x):\n        self.scale.data.clamp_(0, 4)\n        return x * self.scale",
        "def hook(module, inputs):\n    module.weight.data.mul_(0.5)\nmodel.register_forward_pre_hook(hook)",
    ]
    INVALID = [
        "import torch.nn as nn\nmodel = nn.Linear(2, 2)\nout = model(x)\nfor p in model.parameters():\n"
        "    p.data.add_(1)\nout.sum().backward()",
        "import torch.nn as nn\nnet = nn.Linear(2, 2)\nloss = net(x).sum()\nnet.weight.data[0] = 1\nloss.backward()",
        "import torch.nn as nn\nnet = nn.Linear(2, 2)\nloss = net(x).sum()\nnet.weight.data = net.weight.data.half()\n"
        "loss.backward()",
        "class A(nn.Module):\n    def forward(self, x, mask):\n        y = x @ self.weight\n"
        "        self.weight.data.masked_fill_(mask, 0)\n        return y",
        "def hook(module, inputs, output):\n    module.weight.data.mul_(0.5)\nmodel.register_forward_hook(hook)",
    ]

    def __init__(self, context) -> None:
        super().__init__(context)
        self._pending: list = []

    def wants(self, context: GraphContext) -> bool:
        return context.live

    def found(self, node: cst.Attribute, context: GraphContext, evidence: str, form: str,
              replacement: Optional[cst.BaseExpression]) -> None:
        if form == "rebind" and context.kind == "step":  # (no fix: DataWrites gives a rebind none)
            message = self.rebind_message
        elif form == "rebind":  # in a forward or hook the rebind may be the point (feeding values forward):
            message = self.rebind_fact  # no place to move it to
        elif context.kind in ("forward", "hook"):
            message = (f"in-place write through `.data` {context.where}: autograd does not see it, so backward() "
                       "silently uses the new values; use `.detach()` (backward then raises) or `torch.no_grad()`")
        else:
            message = self.message
        if context.kind == "step":  # the lines of the forward and the backward are known after the walk
            self._pending.append((node, context, message, replacement, holder_of(self.context.stack)))
            return
        # Unsafe: with a live graph the fixed code raises where the old one silently corrupted.
        self.report(node, message.format(where=context.where), replacement=replacement,
                    applicability=Applicability.UNSAFE)

    def leave_Module(self, node: cst.Module) -> None:
        if not self._pending:
            return
        calls = [call for _, context, _, _, _ in self._pending for call in context.evidence]
        found = positions_of(self.context.module, calls)
        line = self.context.original_line
        for where, context, message, replacement, holder in self._pending:
            forward, backward = context.evidence
            phrase = (f"between `{_short(self.context.module, forward)}` (line {line(found[id(forward)].start.line)}), "
                      f"whose graph saved this tensor, and `{_short(self.context.module, backward)}` "
                      f"(line {line(found[id(backward)].start.line)}), which backpropagates through it")
            fix = NodeFix(where, replacement, Applicability.UNSAFE) if replacement is not None else None
            self.context.violations.append(Violation(self.code, where, message.format(where=phrase), fix, holder))
        self._pending = []


def _short(module: cst.Module, call: cst.Call) -> str:
    """``model(x)``, or ``model(...)`` when the call's text is long or spans lines."""
    text = module.code_for_node(call)
    if len(text) <= 40 and "\n" not in text:
        return text
    return (module.code_for_node(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else "...") + "(...)"
