"""A module whose class holds no parameter gives what its inputs give (semantic/project_grad.py): TCL117 and
TCL103 say "records a node" outright only where an input requires grad, "when ... requires grad" where it may,
and nothing where none can; a class that may hold parameters keeps the outright message."""

from __future__ import annotations

from pathlib import Path

from _support import FIXTURES

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES
from torchcopy_lint.semantic.project import ProjectIndex
from torchcopy_lint.semantic.summaries import SUMMARY_FORMAT

from test_project_index import fresh_index, write_tree  # noqa: F401 (an autouse fixture)


def _conditional(path: Path, code: str):
    """(line, whether the message is conditional) of each ``code`` diagnostic."""
    return [(d.line, d.message.startswith("when ")) for d in lint_source(path.read_bytes(), str(path), ALL_RULES)
            if d.code == code]


def test_the_fixture_marks_which_message_each_line_gets():
    case = FIXTURES / "TCL117" / "parameterless_module.py"
    lines = case.read_text().splitlines()
    found = _conditional(case, "TCL117")
    assert len(found) == 8
    for line, conditional in found:
        assert lines[line - 1].endswith("# when" if conditional else "# fact"), (line, conditional)


ROPE = '''\
import timm
import torch


class Rotary(torch.nn.Module):
    def __init__(self, dim, base=10000, precision=torch.half):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))
        self.cached = torch.empty(0, 1, dim)
        self.precision = precision

    def forward(self, x, seq_len: int = 0):
        t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)
        self.cached = torch.einsum("i,j->ij", t, self.inv_freq).cos()
        return self.cached


class Projected(Rotary):
    def __init__(self, dim):
        super().__init__(dim)
        self.proj = torch.nn.Linear(dim, dim)


class Sizes(torch.nn.Module):
    def __init__(self, k: int = 3):
        super().__init__()
        self.k = (k, 2)
        self.name = "pool"


class Mixed(torch.nn.Module):
    def __init__(self, w: torch.Tensor, dim: int):
        super().__init__()
        self.scale = torch.ones(dim).mul(w)


class BuildsOutside(torch.nn.Module):
    def forward(self, x):
        return timm.layers.Mlp(3)(x)


class Wrapped(Rotary):
    def __init__(self, dim, inner):
        super().__init__(dim)
        self.inner = inner
'''

OUTSIDE = '''\
import torch
from torch.nn import Sequential


class Outside(Sequential):
    def forward(self, x):
        return torch.relu(x)
'''

USE = '''\
import torch
from pkg import Rotary
from pkg.rope import Projected, Wrapped
from pkg.outside import Outside


def f():
    sample = torch.randn(3, 2)
    a = Rotary(2)(sample, 3).cpu().detach()
    b = Projected(2)(sample, 3).cpu().detach()
    c = Wrapped(2, None)(sample, 3).cpu().detach()
    d = Outside()(sample).cpu().detach()
    return a, b, c, d


def g(x: torch.Tensor):
    return Rotary(2)(x, 3).cpu().detach()
'''


def test_a_class_of_another_module(tmp_path: Path):
    root = write_tree(tmp_path / "proj", {"pyproject.toml": "", "pkg/__init__.py": "from .rope import Rotary\n",
                                          "pkg/rope.py": ROPE, "pkg/outside.py": OUTSIDE, "pkg/use.py": USE})
    path = root / "pkg" / "use.py"
    assert _conditional(path, "TCL117") == [(10, False), (11, False), (12, False), (17, True)]
    index = ProjectIndex.for_path(str(path))
    assert index.holds_no_parameters("pkg.Rotary")  # through the package's re-export
    assert index.holds_no_parameters("torch.nn.GELU")
    assert not index.holds_no_parameters("torch.nn.PReLU")
    assert not index.holds_no_parameters("pkg.rope.Projected")  # a Linear
    assert not index.holds_no_parameters("pkg.rope.Wrapped")  # `inner` may be a module
    assert index.holds_no_parameters("pkg.rope.Sizes")  # a tuple of numbers, a string
    assert not index.holds_no_parameters("pkg.rope.Mixed")  # a tensor argument mixed into a tensor
    assert not index.holds_no_parameters("pkg.rope.BuildsOutside")  # a class of another library built
    assert not index.holds_no_parameters("pkg.outside.Outside")  # a base outside the project other than nn.Module
    assert any(str(root / "pkg" / "rope.py") == p for p in index.dependencies())


def test_the_summary_format_names_the_new_fields():
    assert SUMMARY_FORMAT >= 6  # `holds`, `made`, `dflt` of a class (held_parameters.py)
