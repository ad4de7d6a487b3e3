"""Proofs of the structural prefilter that TCL101/TCL107/TCL108 stay silent, each case planned and linted with and
without the prefilter (the same diagnostics), the near misses kept.

Guards (guard_arms.py): ``torch.tensor(x)`` in an arm where a guard says
``x`` is no tensor (``x if isinstance(x, torch.Tensor) else torch.tensor(x)``) drops TCL101, though ``x`` is bound
to a tensor; a guard the model does not read so, or one that may not cover the read, keeps it, and linting with and
without the prefilter agrees on every case."""

from __future__ import annotations

import ast

import pytest

from torchcopy_lint.plan import structure
from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

CODES = ["TCL101", "TCL107", "TCL108"]
HEAD = "import copy\nimport numpy as np\nimport torch\nimport torch as t2\nfrom typing import Dict, List\n"

# ``x``: a tensor, as the model sees it (an IfExp's value: no list for TCL107)
X = "    x = torch.ones(2) if y else torch.zeros(2)\n"
F = "def f(y):\n" + X

# (code, the rules the plan keeps, the rules linting reports)
CASES = [
    # dropped: the guard makes the read no tensor
    (F + "    return x if isinstance(x, torch.Tensor) else torch.tensor(x)\n", set(), set()),
    (F + "    return torch.tensor(x, dtype=torch.int) if not torch.is_tensor(x) else x\n", set(), set()),
    (F + "    if not isinstance(x, torch.Tensor):\n        x = torch.tensor(x)\n    return x\n", {"TCL107"},
     set()),  # (TCL107: a name bound to a call's result)
    (F + "    if torch.is_tensor(x):\n        pass\n    else:\n        return torch.tensor(x)\n", set(), set()),
    (F + "    if isinstance(x, int):\n        return torch.tensor(x)\n", set(), set()),
    ("def f(xs: List[torch.Tensor]):\n    return [x if isinstance(x, torch.Tensor) else torch.tensor(x) for x in xs]\n",
     set(), set()),
    (F + "    return lambda: x if isinstance(x, torch.Tensor) else torch.tensor(x)\n", {"TCL107"}, set()),
    # kept: the guard does not say "no tensor" there, or names another class, module or name
    (F + "    return torch.tensor(x) if isinstance(x, torch.Tensor) else x\n", {"TCL101"}, {"TCL101"}),
    (F + "    return x if isinstance(x, np.ndarray) else torch.tensor(x)\n", {"TCL101"}, {"TCL101"}),
    (F + "    return x if isinstance(y, torch.Tensor) else torch.tensor(x)\n", {"TCL101"}, {"TCL101"}),
    (F + "    return x if isinstance(x, t2.Tensor) else torch.tensor(x)\n", {"TCL101"}, set()),  # another head
    (F + "    return x if isinstance(x, (torch.Tensor, int)) else torch.tensor(x)\n", {"TCL101"}, set()),
    (F + "    if isinstance(x, int):\n        y = 1\n        return torch.tensor(x)\n", {"TCL101"}, set()),
    (F + "    if not torch.is_tensor(x):\n        x = torch.zeros(2)\n        return torch.tensor(x)\n",
     {"TCL101", "TCL107"}, {"TCL101"}),  # rebound in the arm
    (F + "    if isinstance(x, int):\n        pass\n    elif x.sum():\n        return torch.tensor(x)\n",
     {"TCL101"}, {"TCL101"}),
    (F + "    return x if isinstance(x, torch.Tensor) else torch.tensor(data=x)\n", {"TCL101"}, set()),  # by keyword
    ("from m import isinstance\n" + F + "    if isinstance(x, int):\n        return torch.tensor(x)\n",
     {"TCL101"}, {"TCL101"}),
    ("from m import int\n" + F + "    if isinstance(x, int):\n        return torch.tensor(x)\n", {"TCL101"}, {"TCL101"}),
    ("x = torch.zeros(2)\ny = x if isinstance(x, torch.Tensor) else torch.tensor(x)\n", {"TCL101", "TCL107"}, set()),
]

# comparisons: an elementwise one of a tensor is a bool tensor; `is`, `in` and a chain never are
CASES += [
    (F + "    return torch.tensor(x > 0), copy.copy(x == 1)\n", {"TCL101", "TCL108"}, {"TCL101", "TCL108"}),
    (F + "    return torch.tensor(x is None), torch.tensor(0 < x < 1), copy.copy(x in y)\n", set(), set()),
]


@pytest.mark.parametrize("code,kept,reported", CASES)
def test_a_proven_argument_drops_the_rule(code, kept, reported):
    source = (HEAD + code).encode()
    assert set(structure.plan(ast.parse(source), source, CODES).codes) == kept


@pytest.mark.parametrize("code,kept,reported", CASES)
def test_linting_with_and_without_the_prefilter_agrees(code, kept, reported):
    source = (HEAD + code).encode()
    reference = lint_source(source, "f.py", ALL_RULES, prune=False, structural=False)
    assert lint_source(source, "f.py", ALL_RULES, prune=False) == reference
    assert {d.code for d in reference} & set(CODES) == reported  # the near misses that report are kept
