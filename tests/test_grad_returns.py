"""What a project function returns computed under no_grad does not require grad, across modules too."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES
from torchcopy_lint.semantic.grad_returns import no_grad_names
from torchcopy_lint.semantic.project import ProjectIndex

from test_project_index import fresh_index, write_tree  # noqa: F401 (an autouse fixture)

MODEL = '''\
import torch as th
from torch import nn


class Projected(nn.Module):
    def __init__(self):
        super().__init__()
        self.delta = nn.Embedding(4, 3)

    def get_projection(self):
        with th.no_grad():
            weights = self.delta.weight.clone()
            weights.mul_(2)
            return weights

    def the_parameter(self):
        with th.no_grad():
            return self.delta.weight


@th.no_grad()
def scaled(w, s):
    return w * s
'''

USE = '''\
from torch import nn
from .model import Projected, scaled


def f(layer: nn.Linear):
    emb = Projected()
    a = emb.get_projection().clone().detach()
    b = scaled(layer.weight, 2.0).clone().detach()
    c = emb.the_parameter().clone().detach()
    return a, b, c
'''


def test_callee_in_another_module(tmp_path: Path):
    root = write_tree(tmp_path / "proj", {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/model.py": MODEL,
                                          "pkg/use.py": USE})
    path = root / "pkg" / "use.py"
    found = [(d.line, d.code) for d in lint_source(path.read_bytes(), str(path), ALL_RULES)]
    assert found == [(9, "TCL103")]  # only the parameter returned under no_grad
    index = ProjectIndex.for_path(str(path))
    assert index.returns_without_grad("pkg.model.Projected.get_projection")
    assert index.returns_without_grad("pkg.model.scaled")
    assert not index.returns_without_grad("pkg.model.Projected.the_parameter")


def _names(source: str):
    return no_grad_names(ast.parse(textwrap.dedent(source)).body[0])


def test_what_the_answer_rests_on():
    assert _names("""
        def f(x):
            with torch.no_grad():
                y = torch.cat([x, x])
            return y
        """) == [["torch", "torch"], ["torch.no_grad", "off"]]
    assert _names("""
        @torch.inference_mode()
        def f(x):
            return x.clone(), None
        """) == [["torch.inference_mode", "off"]]
    assert _names("""
        def f(x):
            return x.detach()
        """) == []


@pytest.mark.parametrize("source", [
    "def f(x):\n    with torch.no_grad():\n        y = x * 2\n    y.add_(x)\n    return y",
    "def f(x):\n    with torch.no_grad():\n        y = x * 2\n    y[0] = x[0]\n    return y",
    "def f(x):\n    with torch.no_grad():\n        return x",
    "def f(x):\n    with torch.no_grad():\n        return x.view(-1)",
    "def f(x):\n    with torch.no_grad():\n        yield x * 2",
    "def f(x):\n    with torch.set_grad_enabled(True):\n        return x * 2",
    "@torch.no_grad()\ndef f(x):\n    with torch.enable_grad():\n        return x * 2",
    "def f(x):\n    with torch.no_grad():\n        y = x * 2\n    y = x\n    return y",
    "def f(self):\n    with torch.no_grad():\n        return self.helper()",
    "def f(x):\n    with torch.no_grad():\n        y = x * 2\n    if (y := x) is not None:\n        pass\n    return y",
])
def test_what_may_require_grad(source: str):
    assert no_grad_names(ast.parse(source).body[0]) is None
