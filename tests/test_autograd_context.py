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

POSSIBLY_LIVE = {
    "module level": ("w.data.add_(1)\n", "unknown"),
    "forward": ("class M:\n    def forward(self, x):\n        w.data.add_(1)\n", "forward"),
    "hook by name": ("def pre_hook(m, x):\n    w.data.add_(1)\n", "hook"),
    "unknown helper": ("def update(m):\n    w.data.add_(1)\n", "unknown"),
    "enable_grad inside no_grad": ("import torch\nwith torch.no_grad():\n    with torch.enable_grad():\n"
                                   "        w.data.add_(1)\n", "unknown"),
    "set_grad_enabled(True)": ("import torch\nwith torch.set_grad_enabled(True):\n    w.data.add_(1)\n", "unknown"),
    "inference_mode(False)": ("import torch\nwith torch.inference_mode(False):\n    w.data.add_(1)\n", "unknown"),
    "called from __init__ and forward": ("class M:\n    def __init__(self):\n        self.setup()\n"
                                         "    def forward(self):\n        self.setup()\n"
                                         "    def setup(self):\n        w.data.add_(1)\n", "unknown"),
    "registered as a hook in __init__": ("class M:\n    def __init__(self):\n        self.register_forward_hook(self.fix)\n"
                                         "    def fix(self, m, i, o):\n        w.data.add_(1)\n", "hook"),
    "nested function registered as a hook": ("def f(model):\n    def renorm(m, i):\n        w.data.add_(1)\n"
                                             "    model.register_forward_pre_hook(renorm)\n", "hook"),
    "never called": ("class M:\n    def setup(self):\n        w.data.add_(1)\n", "unknown"),
    "a cycle of calls": ("class M:\n    def a(self):\n        self.b()\n    def b(self):\n        self.a()\n"
                         "        w.data.add_(1)\n", "unknown"),
    "def inside no_grad, called outside": ("import torch\nwith torch.no_grad():\n    def f():\n"
                                           "        w.data.add_(1)\nf()\n", "unknown"),
    "step of a non-optimizer": ("class Trainer:\n    def step(self):\n        w.data.add_(1)\n", "unknown"),
    "lambda passed to apply": ("model.apply(lambda m: w.data.add_(1))\n", "unknown"),
    "initialiser-looking hidden state": ("def init_hidden(self):\n    w.data.add_(1)\n", "unknown"),
    "no_grad only around the items": ("import torch\nwith open(torch.no_grad()):\n    w.data.add_(1)\n", "unknown"),
}


@pytest.mark.parametrize("case", sorted(GRAPH_FREE))
def test_graph_free_with_evidence(case):
    source, kind = GRAPH_FREE[case]
    assert [(live, k) for _, live, k in contexts(source) if _ == "w" or _ == "p.grad"] == [(False, kind)]


@pytest.mark.parametrize("case", sorted(POSSIBLY_LIVE))
def test_possibly_live_without_evidence(case):
    source, kind = POSSIBLY_LIVE[case]
    assert [(live, k) for _, live, k in contexts(source) if _ == "w"] == [(True, kind)]
