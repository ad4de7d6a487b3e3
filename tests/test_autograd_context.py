"""The semantic model's autograd context (semantic/autograd.py): graph-free only with evidence."""

from __future__ import annotations

import textwrap
from typing import List, Tuple

import libcst as cst
import pytest

from torchcopy_lint.engine import Rule, run_rules


class _Probe(Rule):
    """Records the context of every `<x>.data` attribute, keyed by the receiver's text."""

    code = "TCL999"
    name = "probe"
    message = ""
    triggers = ()
    found: List[Tuple[str, bool, str]] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data":
            context = self.context.graph_context(node.value)
            _Probe.found.append((self.context.module.code_for_node(node.value), context.live, context.kind))


def contexts(source: str) -> List[Tuple[str, bool, str]]:
    _Probe.found = []
    run_rules(cst.parse_module(textwrap.dedent(source)), [_Probe])
    return _Probe.found


GRAPH_FREE = {
    "no_grad block": ("import torch\nwith torch.no_grad():\n    w.data.add_(1)\n", "no_grad"),
    "inference_mode": ("import torch\nwith torch.inference_mode():\n    w.data.add_(1)\n", "no_grad"),
    "set_grad_enabled(False)": ("import torch\nwith torch.set_grad_enabled(False):\n    w.data.add_(1)\n", "no_grad"),
    "bare decorator": ("import torch\n@torch.no_grad\ndef f(w):\n    w.data.add_(1)\n", "no_grad"),
    "aliased import": ("from torch import no_grad as ng\nwith ng():\n    w.data.add_(1)\n", "no_grad"),
    "__init__": ("class M:\n    def __init__(self):\n        w.data.add_(1)\n", "init"),
    "initialiser name": ("def weights_init_normal(m):\n    w.data.add_(1)\n", "init"),
    "reset_parameters": ("class M:\n    def reset_parameters(self):\n        w.data.add_(1)\n", "init"),
    "passed to apply": ("def f(m):\n    w.data.add_(1)\nmodel.apply(f)\n", "apply"),
    "partial in named_apply": ("import functools\ndef f(m, s):\n    w.data.add_(1)\n"
                               "named_apply(functools.partial(f, s=1), model)\n", "apply"),
    "nn.init argument": ("import torch.nn as nn\ndef forward(self):\n    nn.init.zeros_(w.data)\n", "nn.init"),
    "conversion helper": ("def switch_to_deploy(self):\n    w.data = k\n", "load"),
    "state-dict hook": ("def _load_state_dict_pre_hook(m, sd, prefix):\n    w.data.add_(1)\n", "load"),
    "grad buffer": ("def forward(self):\n    p.grad.data.zero_()\n", "grad"),
    "optimizer step": ("import torch\nclass S(torch.optim.Optimizer):\n    def step(self):\n        w.data.add_(1)\n",
                       "optimizer"),
    "method called only from __init__": ("class M:\n    def __init__(self):\n        self.setup()\n"
                                         "    def setup(self):\n        w.data.add_(1)\n", "init"),
    "two levels below __init__": ("class M:\n    def __init__(self):\n        self.a()\n    def a(self):\n"
                                  "        self.b()\n    def b(self):\n        w.data.add_(1)\n", "init"),
    "nested function called in a no_grad block": ("import torch\ndef outer():\n    def inner():\n"
                                                  "        w.data.add_(1)\n    with torch.no_grad():\n"
                                                  "        inner()\n", "no_grad"),
}


LIVE = {
    "forward, after a use": ("class M:\n    def forward(self, x):\n        y = x * self.w\n        self.w.data.add_(1)\n",
                             "forward"),
    "forward, an input": ("class M:\n    def forward(self, w):\n        w.data.add_(1)\n", "forward"),
    "hook by name": ("def pre_hook(m, x):\n    w.data.add_(1)\n", "hook"),
    "called from __init__ and forward": ("class M:\n    def __init__(self):\n        self.setup()\n"
                                         "    def forward(self, x):\n        y = self.w * x\n        self.setup()\n"
                                         "    def setup(self):\n        self.w.data.add_(1)\n", "forward"),
    "registered as a hook in __init__": ("class M:\n    def __init__(self):\n        self.register_forward_hook(self.fix)\n"
                                         "    def fix(self, m, i, o):\n        w.data.add_(1)\n", "hook"),
    "nested function registered as a hook": ("def f(model):\n    def renorm(m, i):\n        w.data.add_(1)\n"
                                             "    model.register_forward_pre_hook(renorm)\n", "hook"),
    "forward hook on the module's own weight": ("def f(model):\n    def fix(m, i, o):\n        w = m.weight\n"
                                                "        w.data.add_(1)\n    model.register_forward_hook(fix)\n",
                                                "hook"),
    "pre-hook of a module called twice": ("class M:\n    def __init__(self):\n"
                                          "        self.fc.register_forward_pre_hook(renorm)\n"
                                          "    def forward(self, x):\n        return self.fc(self.fc(x))\n"
                                          "def renorm(m, i):\n    w = m.weight\n    w.data.add_(1)\n", "hook"),
    "pre-hook using the weight before the write": ("def f(model):\n    def renorm(m, i):\n        w = m.weight\n"
                                                   "        y = i[0] @ w\n        w.data.add_(1)\n        return (y,)\n"
                                                   "    model.register_forward_pre_hook(renorm)\n", "hook"),
    "between a forward and its backward": ("import torch.nn as nn\nnet = nn.Linear(2, 2)\nw = net.weight\n"
                                           "loss = net(x).sum()\nw.data.add_(1)\nloss.backward()\n", "step"),
    "enable_grad inside no_grad, in a step": ("import torch\nimport torch.nn as nn\nnet = nn.Linear(2, 2)\n"
                                              "w = net.weight\nwith torch.no_grad():\n    with torch.enable_grad():\n"
                                              "        loss = net(x).sum()\n        w.data.add_(1)\n"
                                              "        loss.backward()\n", "step"),
}

UNKNOWN = {
    "module level": "w.data.add_(1)\n",
    "unknown helper": "def update(m):\n    w.data.add_(1)\n",
    "enable_grad inside no_grad": ("import torch\nwith torch.no_grad():\n    with torch.enable_grad():\n"
                                   "        w.data.add_(1)\n"),
    "set_grad_enabled(True)": "import torch\nwith torch.set_grad_enabled(True):\n    w.data.add_(1)\n",
    "inference_mode(False)": "import torch\nwith torch.inference_mode(False):\n    w.data.add_(1)\n",
    "never called": "class M:\n    def setup(self):\n        w.data.add_(1)\n",
    "a cycle of calls": ("class M:\n    def a(self):\n        self.b()\n    def b(self):\n        self.a()\n"
                         "        w.data.add_(1)\n"),
    "def inside no_grad, called outside": ("import torch\nwith torch.no_grad():\n    def f():\n"
                                           "        w.data.add_(1)\nf()\n"),
    "step of a non-optimizer": "class Trainer:\n    def step(self):\n        w.data.add_(1)\n",
    "lambda passed to apply": "model.apply(lambda m: w.data.add_(1))\n",
    "initialiser-looking hidden state": "def init_hidden(self):\n    w.data.add_(1)\n",
    "a test named like an initialiser": "def test_weight_init_zero():\n    w.data.add_(1)\n",
    "no_grad only around the items": "import torch\nwith open(torch.no_grad()):\n    w.data.add_(1)\n",
    "after the backward": ("import torch.nn as nn\nnet = nn.Linear(2, 2)\nw = net.weight\n"
                           "loss = net(x).sum()\nloss.backward()\nw.data.add_(1)\n"),
    "forward of another module": ("import torch.nn as nn\nnet = nn.Linear(2, 2)\nother = nn.Linear(2, 2)\n"
                                  "w = other.weight\nloss = net(x).sum()\nw.data.add_(1)\nloss.backward()\n"),
    "forward under no_grad": ("import torch\nimport torch.nn as nn\nnet = nn.Linear(2, 2)\nw = net.weight\n"
                              "with torch.no_grad():\n    out = net(x)\nw.data.add_(1)\nloss.backward()\n"),
    "a backward between the forward and the write": ("import torch.nn as nn\nnet = nn.Linear(2, 2)\nw = net.weight\n"
                                                     "loss = net(x).sum()\nloss.backward(retain_graph=False)\n"
                                                     "w.data.add_(1)\nloss.backward()\n"),
    "forward, before any use": "class M:\n    def forward(self, x):\n        w.data.add_(1)\n        return x * w\n",
    "__call__ is not a forward": "class Init:\n    def __call__(self, t):\n        w.data.add_(1)\n",
    "method called from forward before the use": ("class M:\n    def forward(self, x):\n        self.setup()\n"
                                                  "        return self.w * x\n"
                                                  "    def setup(self):\n        self.w.data.add_(1)\n"),
    "forward pre-hook, the hooked module's own weight": ("def f(model):\n    def renorm(m, i):\n        w = m.weight\n"
                                                         "        w.data.add_(1)\n"
                                                         "    model.register_forward_pre_hook(renorm)\n"),
    "the loss computed anew after the write": ("import torch.nn as nn\nnet = nn.Linear(2, 2)\nw = net.weight\n"
                                               "loss = net(x).sum()\nw.data.add_(1)\nloss = net(x).sum()\n"
                                               "loss.backward()\n"),
}


@pytest.mark.parametrize("case", sorted(GRAPH_FREE))
def test_graph_free_with_evidence(case):
    source, kind = GRAPH_FREE[case]
    assert [(live, k) for _, live, k in contexts(source) if _ == "w" or _ == "p.grad"] == [(False, kind)]


@pytest.mark.parametrize("case", sorted(LIVE))
def test_live_with_evidence(case):
    source, kind = LIVE[case]
    assert [(live, k) for _, live, k in contexts(source) if _ in ("w", "self.w")] == [(True, kind)]


@pytest.mark.parametrize("case", sorted(UNKNOWN))
def test_unknown_without_evidence(case):
    """No evidence either way: not live (TCL104 says nothing), not graph-free (TCL119 states the condition)."""
    assert [(live, k) for _, live, k in contexts(UNKNOWN[case]) if _ in ("w", "self.w")] == [(False, "unknown")]
