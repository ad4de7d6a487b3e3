"""Proofs of the structural prefilter that TCL101/TCL107/TCL108 stay silent, each case planned and linted with and
without the prefilter (the same diagnostics), the near misses kept.

Guards (guard_arms.py): ``torch.tensor(x)`` in an arm where a guard says
``x`` is no tensor (``x if isinstance(x, torch.Tensor) else torch.tensor(x)``) drops TCL101, though ``x`` is bound
to a tensor; a guard the model does not read so, or one that may not cover the read, keeps it, and linting with and
without the prefilter agrees on every case.

Module names (binding_names.displayed, function_values.py ``never_tensor``): ``copy.copy(TABLE)`` or
``torch.tensor(TABLE)`` in a function that does not bind ``TABLE``, where only top-level displays (``TABLE = {...}``)
bind it in the file, drops TCL101/TCL108; any other binding of the name anywhere in the file, or a guard on it, keeps
them.

Annotations (annotations.py): ``copy.copy(inst)`` of a parameter annotated with a class the model never reads as a
tensor's (``inst: Instruction``, ``inst: m.Instruction``, a string holding ``X | None``) drops TCL108; a tensor class
under that name (imported as it, defined in the file, maybe through ``import *``) or a rebinding keeps it.

Loop variables (function_values.py ``only_iterated``): ``copy.copy(node.meta)`` for ``node`` bound only by loops over
items the model calls tensors or nothing (``for node in g.nodes``, ``enumerate``/``zip`` of such) drops TCL108; an
attribute a tensor has (``t.grad``), items read from a display or a mapping, a guard, a store to ``node.meta``, another
binding, or a store of an instance of the file's own classes in ``.meta`` anywhere (semantic/field_types.py; which also
holds for the parameters and other names proven before) keeps it.

Guards (function_values.py ``ArgumentScope._tensor_guard``): ``copy.copy(g)`` of a name narrowed only by guards that
never make it a tensor (``isinstance(g, Graph)``: a module's or another class's, never read as a tensor's; a ``type(g)``
compared with nothing) drops TCL108; a tensor class (maybe: under the name, by ``import *``, a class of the file),
``is_tensor``, ``type(g) is torch.Tensor``, an attribute of the narrowed name (a module's parameters) keeps it. An
unannotated parameter of a decorated def or a method, where the file names ``parametrize`` (or imports ``*``), may be
what ``@pytest.mark.parametrize`` lists (tensors): kept."""

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

# the argument the rules read: the first (LibCST's args[0]), positional or `data=`; none after `*`/`**` or a keyword
CASES += [
    (F + "    return torch.tensor(1, **y), torch.tensor(*y), torch.tensor(**y), torch.tensor(dtype=y, data=x)\n",
     set(), set()),
    (F + "    return torch.as_tensor([1.0], *y), torch.tensor(y=1, *x)\n", set(), set()),
    # kept: a tensor read first, positional or as `data=`, before `**`
    (F + "    return torch.tensor(x, **y)\n", {"TCL101"}, {"TCL101"}),
    (F + "    return torch.tensor(data=x, **y)\n", {"TCL101"}, {"TCL101"}),
    (F + "    return torch.tensor([x, x], **y)\n", {"TCL107"}, {"TCL107"}),
    (F + "    return torch.tensor(data=x, *y)\n", {"TCL101"}, {"TCL101"}),
]

M = "def f():\n    return copy.copy(TABLE), torch.tensor(TABLE)\n"
ALL = {"TCL101", "TCL107", "TCL108"}

# module names (TCL107, a list of tensors, is not read so)
CASES += [
    ('TABLE = {"a": 1}\n' + M, {"TCL107"}, set()),
    ("TABLE = [torch.zeros(2)]\n" + M, {"TCL107"}, set()),  # a list of tensors is no tensor
    ('TABLE: Dict[str, int] = {k: i for i, k in enumerate("ab")}\nTABLE.update(x=1)\n' + M, {"TCL107"}, set()),
    ('A = B = ("a", "b")\nA = [1]\n' + M.replace("TABLE", "A"), {"TCL107"}, set()),
    # kept: another binding anywhere in the file, none, an import, or a guard in the function
    ("TABLE = t = torch.zeros(2)\n" + M, ALL, {"TCL101", "TCL108"}),
    ("TABLE = ()\nTABLE = torch.zeros(2)\n" + M, ALL, set()),
    ("TABLE = {}\ndef g():\n    global TABLE\n    TABLE = torch.zeros(2)\n" + M, ALL, set()),
    ("TABLE = {}\nclass C:\n    TABLE = torch.zeros(2)\n    def f(self):\n        return copy.copy(TABLE)\n",
     {"TCL108"}, set()),
    ("TABLE = {}\ndef f():\n    if isinstance(TABLE, torch.Tensor):\n        return copy.copy(TABLE)\n",
     {"TCL108"}, {"TCL108"}),
    ("def outer(TABLE: torch.Tensor):\n    def f():\n        return copy.copy(TABLE)\n    return f\nTABLE = {}\n",
     {"TCL108"}, {"TCL108"}),
    (M, ALL, set()),  # bound nowhere
    ("from m import TABLE\nTABLE = {}\n" + M, ALL, set()),
    ("TABLE = {}\nfor TABLE in [torch.zeros(2)]:\n    pass\n" + M, ALL, set()),
    ("TABLE = [(TABLE := torch.zeros(2))]\n" + M, ALL, set()),
    ("TABLE = {}\nTABLE += torch.zeros(2)\n" + M, ALL, set()),
    ("TABLE: torch.Tensor\nTABLE = {}\n" + M, ALL, set()),
    ("TABLE = lambda TABLE: TABLE\n" + M, ALL, set()),
]


P = "def f(inst: Instruction):\n    return copy.copy(inst)\n"

# parameters annotated with classes (TCL108 only: no torch.tensor here)
CASES += [
    ("from m import Instruction\n" + P, set(), set()),
    ("import m\ndef f(inst: m.Instruction):\n    return copy.copy(inst)\n", set(), set()),
    ('def f(x: "dict[str, int] | None"):\n    return copy.copy(x)\n', set(), set()),
    # kept: a tensor class under the name, maybe, or the annotation not the only binding read
    ("from torch import Tensor as Instruction\n" + P, {"TCL108"}, {"TCL108"}),
    ("class Instruction(torch.Tensor):\n    pass\n" + P, {"TCL108"}, {"TCL108"}),
    ("from m import *\n" + P, {"TCL108"}, set()),
    ('def f(x: "torch.Tensor"):\n    return copy.copy(x)\n', {"TCL108"}, {"TCL108"}),
    ("def f(x: t2.nn.Parameter):\n    return copy.copy(x)\n", {"TCL108"}, {"TCL108"}),
    ("def f(m: torch.nn.Linear):\n    return copy.copy(m.weight)\n", {"TCL108"}, {"TCL108"}),
    ("from m import Instruction\n" + P.replace("    return", "    if inst:\n        inst = 1\n    return"),
     {"TCL108"}, set()),
    ("from m import Instruction\n" + P.replace("    return copy.copy(inst)", "    y = inst\n    return copy.copy(y)"),
     {"TCL108"}, set()),
]

L = "def f(g):\n    for node in g.nodes:\n        return copy.copy(node.meta)\n"
EIG = "class Eig(torch.Tensor):\n    pass\n\n\ndef make(m):\n    m.meta = Eig()\n"
TS = "def f(ts: List[torch.Tensor]):\n    for t in ts:\n        return copy.copy(t.{})\n"

# attributes of loop variables
CASES += [
    (L, set(), set()),
    (L.replace("for node in g.nodes", "for i, (node, _) in enumerate(zip(g.nodes, g))").replace(".meta", ".meta.a"),
     set(), set()),
    (L + "    for node in g:\n        pass\n", set(), set()),
    (TS.format("meta"), set(), set()),  # a tensor's `.meta`: nothing the model knows
    # kept: a tensor's attribute, an instance of the file's classes stored in `.meta` (for any name), items read
    # from a display or a mapping, a store, a guard, another binding
    (TS.format("grad"), {"TCL108"}, {"TCL108"}),
    (TS.format("T"), {"TCL108"}, {"TCL108"}),
    (EIG + L, {"TCL108"}, {"TCL108"}),
    (EIG + "def f(m):\n    return copy.copy(m.meta)\n", {"TCL108"}, {"TCL108"}),
    ("def f():\n    for r in [torch.zeros(2)]:\n        return copy.copy(r.meta)\n", {"TCL108"}, set()),
    ("def f(d):\n    for r in d.values():\n        return copy.copy(r.meta)\n", {"TCL108"}, set()),
    ("def f(d):\n    for k, r in d.items():\n        return copy.copy(r.meta)\n", {"TCL108"}, set()),
    (L.replace("        return", "        node.meta = torch.zeros(2)\n        return"), {"TCL108"}, {"TCL108"}),
    (L.replace("        return", "        if isinstance(node, torch.Tensor):\n            return"), {"TCL108"}, set()),
    (L.replace("    for", "    node = torch.zeros(2)\n    for"), {"TCL108"}, set()),
    (L.replace("for node in", "for node.x in"), {"TCL108"}, set()),
]

PT = '@pytest.mark.parametrize("x", [torch.zeros(2)])\ndef test_f(x):\n    return copy.copy(x), torch.tensor(x)\n'
G = "def f(g, y):\n    if {}:\n        return copy.copy(g)\n"

# guards that narrow a name to no tensor (a builtin's class, a module's, another class's), parametrize
CASES += [
    ("from m import Graph\n" + G.format("isinstance(g, Graph)"), set(), set()),
    (G.format("isinstance(g, (dict, m.Graph))"), set(), set()),
    (G.format("not isinstance(g, int)"), set(), set()),
    (G.format('f"{type(g)}"'), set(), set()),  # a type() in no comparison
    # kept: a tensor class (maybe: under the name, by `import *`), is_tensor, type() compared, parametrize
    (G.format("isinstance(g, torch.Tensor)"), {"TCL108"}, {"TCL108"}),
    (G.format("isinstance(g, (Graph, torch.nn.Parameter))"), {"TCL108"}, set()),
    ("from torch import Tensor as Graph\n" + G.format("isinstance(g, Graph)"), {"TCL108"}, {"TCL108"}),
    ("from m import *\n" + G.format("isinstance(g, Graph)"), {"TCL108"}, set()),
    ("class Graph(torch.Tensor):\n    pass\n" + G.format("isinstance(g, Graph)"), {"TCL108"}, set()),
    (G.format("torch.is_tensor(g)"), {"TCL108"}, {"TCL108"}),
    (G.format("type(g) is torch.Tensor"), {"TCL108"}, {"TCL108"}),
    (G.format("isinstance(g, type(y))"), {"TCL108"}, set()),
    (G.format("isinstance(g.a, torch.Tensor)"), {"TCL108"}, set()),  # (narrows g.a, not g: kept all the same)
    # an attribute: the guard's class may be a module's, with parameters
    ("from m import Graph\n" + G.format("isinstance(g, Graph)").replace("copy(g)", "copy(g.meta)"), {"TCL108"}, set()),
    (G.format("isinstance(g, torch.nn.Linear)").replace("copy(g)", "copy(g.weight)"), {"TCL108"}, {"TCL108"}),
    ("import pytest\n" + PT, {"TCL101", "TCL108"}, {"TCL101", "TCL108"}),
    ("import pytest\nclass TestC:\n" + "\n".join("    " + line for line in PT.replace("(x)", "(self, x)", 1)
                                                 .splitlines()) + "\n", {"TCL101", "TCL108"},
     {"TCL101", "TCL108"}),
    ("import pytest\n" + PT.replace('"x"', '"y"').replace("(x)", "(x, y)", 1), {"TCL101", "TCL108"}, set()),
    (PT.replace("@pytest.mark.parametrize", "@functools.wraps").replace('"x", ', ""), set(), set()),
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


def test_the_plans_names_of_tensor_classes_and_attributes_cover_the_models():
    """annotations.py and function_values.py name what the model may read as a tensor's class or attribute without
    importing it (semantic/vocabulary.py imports nothing heavy, but the plan must not need it)."""
    from torchcopy_lint.plan.binding_names import tensor_class_name
    from torchcopy_lint.plan.function_values import _tensor_attribute
    from torchcopy_lint.semantic import vocabulary as v

    assert all(tensor_class_name(q.rsplit(".", 1)[-1]) for q in v.TENSOR_CLASSES)
    assert all(map(_tensor_attribute, v.TENSOR_ATTRIBUTES_OF_TENSOR | v.PARAMETER_ATTRIBUTES))
    assert not _tensor_attribute("meta")
