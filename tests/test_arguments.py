"""The structural prefilter's reading of TCL101/TCL107/TCL108's arguments (arguments.py, function_values.py): a
parameter the semantic model knows nothing about, read before anything rebinds it, or a name the function binds
only to values that are never tensors, drops the rule; anything the model may call a tensor keeps it (and a
builtin's name bound or imported by the file), and linting with and without the prefilter agrees on every case."""

from __future__ import annotations

import ast

import pytest

from torchcopy_lint.plan import structure
from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

CODES = ["TCL101", "TCL107", "TCL108"]
HEAD = "import copy\nimport torch\nfrom typing import List, Optional\n"

# (code, the rules the plan keeps)
CASES = [
    ("def f(x):\n    return torch.tensor(x)\n", set()),
    ("def f(x: int, y: Optional[float] = None, *a, **k):\n    return torch.tensor(x) + torch.tensor(y)\n"
     "def g(xs: List[int], a):\n    return torch.tensor(xs), copy.copy(a)\n", set()),
    ("def f(a, b):\n    return torch.tensor([a, b]), torch.tensor([a.item(), b])\n", set()),
    ("def f(x):\n    x = torch.tensor(x)\n    return x\n", set()),  # the read comes before its own rebinding
    ("def f(x):\n    y = torch.tensor(x)\n    x = y\n    return copy.copy(x)\n", {"TCL108"}),  # rebound between
    ("def f(x: torch.Tensor):\n    return torch.tensor(x)\n", {"TCL101"}),
    ("def f(x: 'torch.Tensor'):\n    return torch.tensor(x)\n", {"TCL101"}),
    ("def f(x):\n    if isinstance(x, torch.Tensor):\n        return torch.tensor(x)\n", {"TCL101"}),
    ("def f(x):\n    assert torch.is_tensor(x)\n    return copy.copy(x)\n", {"TCL108"}),
    ("def f(x):\n    x = torch.zeros(3)\n    return torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("def f(x, n):\n    for _ in range(n):\n        x = torch.tensor(x)\n    return x\n", {"TCL101", "TCL107"}),
    ("def f(x):\n    while x.sum() > 0:\n        x = torch.tensor(x) - 1\n", {"TCL101"}),  # never a list
    ("def f(x, xs):\n    return [torch.tensor(x) for x in xs]\n", {"TCL101"}),  # a loop's variable: no list
    ("def f(x):\n    y = (x := torch.zeros(2)) + torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("def f(x):\n    return lambda: torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("def f(x):\n    def g():\n        return torch.tensor(x)\n    return g\n", {"TCL101", "TCL107"}),
    ("def f(x):\n    def g():\n        nonlocal x\n        x = torch.zeros(2)\n    g()\n    return torch.tensor(x)\n",
     {"TCL101", "TCL107"}),
    ("class T(torch.Tensor):\n    def c(self):\n        return copy.copy(self)\n", {"TCL108"}),
    ("x = torch.zeros(2)\ndef f():\n    return torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("def f(xs):\n    ys = []\n    ys.append(torch.zeros(()))\n    return torch.tensor(ys), torch.tensor(xs)\n",
     {"TCL107"}),  # a list, never a tensor
    # every binding in the function is a value the model never calls a tensor (or a list of tensors)
    ("def f(x, t):\n    n = float(x)\n    m = n * 2 if x else len(t)\n    k = t.item()\n    k += m\n"
     "    return torch.tensor(m), torch.tensor(k), copy.copy(n), torch.tensor([n, 1])\n", set()),
    ("def f(x):\n    n = 0\n    while n < x:\n        n = n + 1\n    return torch.tensor(n)\n", set()),
    ("def f(x):\n    xs = [1, x]\n    ys = sorted(x)\n    return torch.tensor(xs), torch.tensor(ys)\n", set()),
    # ... unless a binding may be one, the name is bound elsewhere, or the builtin or receiver is the file's own
    ("def f(x):\n    n = float(x)\n    if x:\n        n = torch.zeros(2)\n    return torch.tensor(n)\n",
     {"TCL101", "TCL107"}),
    ("def f(x):\n    n, m = float(x), 1\n    return torch.tensor(n)\n", {"TCL101"}),
    ("def f(x):\n    for n in x:\n        pass\n    return torch.tensor(n)\n", {"TCL101"}),
    ("def f(x):\n    def g():\n        n = 1\n    return torch.tensor(n)\n", {"TCL101", "TCL107"}),
    ("def float(x):\n    return torch.zeros(2)\ndef f(x):\n    n = float(x)\n    return torch.tensor(n)\n",
     {"TCL101", "TCL107"}),
    ("from torch import zeros as len\ndef f(x):\n    n = len(x)\n    return torch.tensor(n)\n", {"TCL101", "TCL107"}),
    ("import numpy as x\ndef f(y):\n    n = x.item(y)\n    return torch.tensor(n)\n", {"TCL101", "TCL107"}),
    ("def f(x: torch.Tensor):\n    ys = [x, x]\n    return torch.tensor(ys)\n", {"TCL107"}),
    # a builtin's name bound anywhere (a nested function's parameter) or an item stored keeps the rule
    ("def f(x):\n    n = len(x)\n    def g(len):\n        return len\n    return torch.tensor(n)\n", {"TCL101", "TCL107"}),
    ("def f(d, t):\n    d[0] = t\n    return copy.copy(d.x)\n", {"TCL108"}),
    # any isinstance test keeps the name: a module's class narrows it to a module, whose attributes are parameters
    ("def f(x):\n    if isinstance(x, torch.nn.Linear):\n        return copy.copy(x.weight)\n", {"TCL108"}),
    ("def f(x):\n    if isinstance(x, torch.nn.Linear):\n        y = x\n        return copy.copy(y.weight)\n",
     {"TCL108"}),
    # attributes: of a name the function never stores attributes of, bound to values that have none the model knows
    ("def f(node, t):\n    m = node.meta\n    return copy.copy(node.meta), torch.tensor(t.shape), torch.tensor(m.x)\n",
     set()),
    ("def f(node):\n    node.meta = torch.zeros(2)\n    return copy.copy(node.meta)\n", {"TCL108"}),
    ("class C:\n    def f(self):\n        return copy.copy(self.meta)\n", {"TCL108"}),
    ("def f(node):\n    if isinstance(node.meta, torch.Tensor):\n        return copy.copy(node.meta)\n", {"TCL108"}),
    ("def f(node: torch.nn.Module):\n    return copy.copy(node.weight)\n", {"TCL108"}),
    ("import torch.nn as node\ndef f(x):\n    return copy.copy(node.Parameter)\n", {"TCL108"}),
    ("def f(x):\n    ys = list(x)\n    return torch.tensor(ys)\n", {"TCL107"}),
    # a guard or an annotation's name under another name: not followed
    ("from torch import is_tensor as it\ndef f(x):\n    if it(x):\n        return torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("from torch import Tensor as Any\ndef f(x: Any):\n    return torch.tensor(x)\n", {"TCL101", "TCL107"}),
    ("class List(torch.Tensor):\n    pass\ndef f(x: List):\n    return torch.tensor(x)\n", {"TCL101", "TCL107"}),
]


@pytest.mark.parametrize("code,kept", CASES)
def test_plans_keep_a_rule_only_where_the_argument_may_be_a_tensor(code, kept):
    source = (HEAD + code).encode()
    assert set(structure.plan(ast.parse(source), source, CODES).codes) == kept


@pytest.mark.parametrize("code,kept", CASES)
def test_linting_with_and_without_the_prefilter_agrees(code, kept):
    source = (HEAD + code).encode()
    reference = lint_source(source, "f.py", ALL_RULES, prune=False, structural=False)
    assert lint_source(source, "f.py", ALL_RULES, prune=False) == reference
    assert {d.code for d in reference} & set(CODES) <= kept  # what fires was kept


def test_what_the_kept_cases_report():
    """The cases above that are kept for a reason the model sees do report (the prefilter is not vacuous)."""
    reported = {}
    for code, kept in CASES:
        source = (HEAD + code).encode()
        reported[code] = {d.code for d in lint_source(source, "f.py", ALL_RULES, prune=False)} & set(CODES)
    assert reported["def f(x: torch.Tensor):\n    return torch.tensor(x)\n"] == {"TCL101"}
    assert reported["def f(x):\n    if isinstance(x, torch.Tensor):\n        return torch.tensor(x)\n"] == {"TCL101"}
    assert reported["def f(x):\n    x = torch.zeros(3)\n    return torch.tensor(x)\n"] == {"TCL101"}
    assert reported["class T(torch.Tensor):\n    def c(self):\n        return copy.copy(self)\n"] <= {"TCL108"}
    # the conditions of the bindings' reading matter: a builtin's name imported, an attribute stored or guarded
    assert reported["from torch import zeros as len\ndef f(x):\n    n = len(x)\n    return torch.tensor(n)\n"] \
        == {"TCL101"}
    assert reported["def f(x: torch.Tensor):\n    ys = [x, x]\n    return torch.tensor(ys)\n"] == {"TCL107"}
    assert reported["def f(x):\n    if isinstance(x, torch.nn.Linear):\n        return copy.copy(x.weight)\n"] == {"TCL108"}
    assert reported["def f(node):\n    node.meta = torch.zeros(2)\n    return copy.copy(node.meta)\n"] == {"TCL108"}
    assert reported["def f(node):\n    if isinstance(node.meta, torch.Tensor):\n        return copy.copy(node.meta)\n"] \
        == {"TCL108"}


# TCL105's place (training.py): a deepcopy in a loop of a function, other than __init__, that trains
PLACES = [
    ("def fit(m, opt, data):\n    m.train()\n    for x in data:\n        best = copy.deepcopy(m)\n"
     "        m(x).sum().backward()\n        opt.step()\n    return best\n", {"TCL105"}),
    ("def fit(m, data):\n    for x in data:\n        best = copy.deepcopy(m)\n    return best\n", set()),  # no training
    ("def fit(m, opt):\n    best = copy.deepcopy(m)\n    opt.step()\n    return best\n", set()),  # in no loop
    ("class T:\n    def __init__(self, m, opt):\n        for _ in range(2):\n            self.c = copy.deepcopy(m)\n"
     "            opt.step()\n", set()),
    ("class T:\n    def fit(self, m, opt, data):\n        m.train()\n        for x in data:\n"
     "            self.c = copy.deepcopy(m)\n            m(x).sum().backward()\n            opt.step()\n", {"TCL105"}),
    ("def fit(m, opt, data):\n    for x in data:\n        f = lambda: copy.deepcopy(m)\n        opt.step()\n", set()),
    ("def fit(m, opt, data):\n    for x in data:\n        def inner():\n            return copy.deepcopy(m)\n"
     "        opt.step()\n", set()),  # the innermost function does not train
    ("from copy import deepcopy\nfor x in data:\n    best = deepcopy(m)\n", {"TCL105"}),  # module level: kept
    ("from copy import deepcopy as dc\ndef fit(m, opt, data):\n    m.train()\n    for x in data:\n        b = dc(m)\n"
     "        m(x).sum().backward()\n        opt.step()\n", {"TCL105"}),
]


@pytest.mark.parametrize("code,kept", PLACES)
def test_a_deepcopy_is_kept_only_in_a_loop_of_code_that_trains(code, kept):
    source = (HEAD + code).encode()
    assert set(structure.plan(ast.parse(source), source, ["TCL105"]).codes) == kept
    reference = lint_source(source, "f.py", ALL_RULES, prune=False, structural=False)
    assert lint_source(source, "f.py", ALL_RULES, prune=False) == reference
    assert {d.code for d in reference} & {"TCL105"} == (kept if "m.train()" in code else set())
