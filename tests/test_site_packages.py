"""Installed packages read from their annotations (semantic/site_packages.py, library_summaries.py):
found in the discovered environment in PEP 561 order, answered as project classes are, never run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from test_project_index import write_tree
from torchcopy_lint.settings import environment
from torchcopy_lint.semantic.library_summaries import summarize_library
from torchcopy_lint.semantic.project import ProjectIndex, configure_summary_cache

# A graph library as torch_geometric lays it out: the layer's class two re-exports away.
GRAPH_LIBRARY: Dict[str, str] = {
    "torch_geometric/__init__.py": "import torch_geometric.nn\n",
    "torch_geometric/nn/__init__.py": "from .conv import *\nfrom . import functional\n",
    "torch_geometric/nn/conv/__init__.py": "from .gcn_conv import GCNConv\n__all__ = ['GCNConv']\n",
    "torch_geometric/nn/conv/message_passing.py": (
        "import torch\n\nclass MessagePassing(torch.nn.Module):\n"
        "    def propagate(self, edge_index, size=None, **kwargs):\n        return self.message(**kwargs)\n"
    ),
    "torch_geometric/nn/conv/gcn_conv.py": (
        "from typing import Optional\nfrom torch import Tensor\n"
        "from .message_passing import MessagePassing\n\n"
        "class GCNConv(MessagePassing):\n"
        "    cached: bool\n"
        "    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None) -> Tensor:\n"
        "        out = self.propagate(edge_index, x=x)\n        return out\n"
        "    def reset(self) -> Optional[Tensor]:\n        return None\n"
    ),
    "torch_geometric/nn/functional.py": (
        "import torch\nfrom typing import Any, Union\n\n"
        "def normalize(x, p: float = 2.0) -> torch.Tensor:\n    return x / x.norm(p)\n\n"
        "def maybe(x) -> Union[torch.Tensor, None]:\n    return x\n\n"
        "def anything(x) -> Any:\n    return x\n\n"
        "def plain(x):\n    return torch.zeros(3)\n"  # a body says nothing: never flowed
    ),
}


def make_venv(prefix: Path, files: Dict[str, str]) -> Path:
    site = write_tree(prefix / "lib" / "python3.11" / "site-packages", files)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.4\n")
    return site


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"):
        monkeypatch.delenv(name, raising=False)
    ProjectIndex.clear()
    configure_summary_cache(None)
    environment.configure(None)
    yield
    ProjectIndex.clear()
    environment.configure(None)


def _project(tmp_path: Path, files: Dict[str, str] = GRAPH_LIBRARY) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    make_venv(root / ".venv", files)
    (root / "train.py").write_text("import torch_geometric\n")
    return root


def test_an_installed_layer_class_is_answered_as_a_project_class(tmp_path):
    root = _project(tmp_path)
    index = ProjectIndex.for_path(str(root / "train.py"))
    for name in ("torch_geometric.nn.GCNConv", "torch_geometric.nn.conv.gcn_conv.GCNConv"):
        assert index.module_class_kind(index.resolve(name) or name) == "module", name
    assert index.resolve("torch_geometric.nn.GCNConv") == "torch_geometric.nn.conv.gcn_conv.GCNConv"
    assert index.function_return("torch_geometric.nn.conv.gcn_conv.GCNConv.forward") == "tensor"
    assert index.function_return("torch_geometric.nn.functional.normalize") == "tensor"
    site = root / ".venv/lib/python3.11/site-packages/torch_geometric"
    assert str(site / "nn/conv/gcn_conv.py") in index.dependencies()


def test_union_optional_any_and_unannotated_returns_are_unknown(tmp_path):
    index = ProjectIndex.for_path(str(_project(tmp_path) / "train.py"))
    for name in ("functional.maybe", "functional.anything", "functional.plain", "conv.gcn_conv.GCNConv.reset"):
        assert index.function_return(f"torch_geometric.nn.{name}") is None, name
    assert index.attribute_kind("torch_geometric.nn.conv.gcn_conv.GCNConv", "cached") == "not-tensor"


def test_without_an_environment_the_library_is_unknown(tmp_path):
    root = _project(tmp_path)
    (root / ".venv" / "pyvenv.cfg").unlink()  # no longer recognised as an environment
    index = ProjectIndex.for_path(str(root / "train.py"))
    assert index.module_class_kind("torch_geometric.nn.GCNConv") is None


def test_stub_packages_first_and_pyi_before_py(tmp_path):
    files = {
        "fancy/__init__.py": "def make(x):\n    return x\n",
        "fancy/layers.py": "def out(x):\n    return x\n",
        "fancy/layers.pyi": "import torch\ndef out(x) -> torch.Tensor: ...\n",
        "fancy-stubs/__init__.pyi": "import torch\ndef make(x) -> torch.Tensor: ...\n",
    }
    index = ProjectIndex.for_path(str(_project(tmp_path, files) / "train.py"))
    assert index.function_return("fancy.make") == "tensor"  # from the stub package
    assert index.function_return("fancy.layers.out") == "tensor"  # partial stubs: the package's .pyi


def test_known_roots_and_the_standard_library_are_never_read_from_site_packages(tmp_path):
    files = {"numpy/__init__.py": "class ndarray:\n    pass\n",
             "json/__init__.py": "import torch\ndef loads(s) -> torch.Tensor: ...\n"}
    index = ProjectIndex.for_path(str(_project(tmp_path, files) / "train.py"))
    assert index.function_return("json.loads") is None
    assert index.module_class_kind("numpy.ndarray") is None
    assert not [path for path in index.dependencies() if ".venv" in path]


def test_overloads_agreeing_or_not(tmp_path):
    summary = summarize_library(
        b"from typing import overload\nimport torch\n"
        b"@overload\ndef f(x: int) -> torch.Tensor: ...\n@overload\ndef f(x: str) -> torch.Tensor: ...\n"
        b"@overload\ndef g(x: int) -> int: ...\n@overload\ndef g(x: str) -> torch.Tensor: ...\n"
        b"def h(x) -> 'torch.Tensor | None': ...\n"
    )
    assert summary["functions"]["f"]["ann"] == "torch.Tensor"
    assert summary["functions"]["g"]["ann"] is None and summary["functions"]["h"]["ann"] is None
    assert summary["functions"]["f"]["ret"] == [["k", "unknown"]]


def _lint(root: Path, *args: str, **variables: str) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV")}
    env.update(variables)
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "--isolated", "--output-format", "json", *args],
                            cwd=root, capture_output=True, env={**env, "PYTHONIOENCODING": "utf-8"})
    assert result.returncode in (0, 1), result.stderr
    return [(d["line"], d["code"]) for d in json.loads(result.stdout)]


USER_CODE = (
    "import copy\nimport torch\nfrom torch_geometric.nn import GCNConv\n"
    "from torch_geometric.nn.functional import normalize, maybe\n\n"
    "class Trainer:\n"
    "    def __init__(self):\n        self.conv = GCNConv(16, 16)\n\n"
    "    def fit(self, loader, opt):\n"
    "        for x, edges in loader:\n"
    "            self.conv(x, edges).sum().backward()\n"
    "            opt.step()\n"
    "            best = copy.deepcopy(self.conv)\n\n"
    "def embed(x):\n    h = normalize(x)\n    k = maybe(x)\n    return copy.copy(h), copy.copy(k)\n"
)


def test_end_to_end_an_installed_function_and_layer(tmp_path):
    root = _project(tmp_path)
    (root / "train.py").write_text(USER_CODE)
    found = _lint(root, "--no-cache", "train.py")
    assert found == [(14, "TCL105"), (19, "TCL108")]  # copy.copy(k) of an Optional: silent
    other = tmp_path / "elsewhere"  # the same environment given by --python from another project
    (other / ".git").mkdir(parents=True)
    (other / "train.py").write_text(USER_CODE)
    assert _lint(other, "--no-cache", "train.py") == []
    assert _lint(other, "--no-cache", "--python", str(root / ".venv"), "train.py") == found


def test_cached_results_follow_the_environment(tmp_path):
    root = _project(tmp_path)
    (root / "train.py").write_text(USER_CODE)
    cache = ("--cache-dir", str(tmp_path / "cache"), "train.py")
    assert _lint(root, *cache) == [(14, "TCL105"), (19, "TCL108")]
    site = root / ".venv/lib/python3.11/site-packages"
    functional = site / "torch_geometric/nn/functional.py"
    functional.write_text(functional.read_text().replace("p: float = 2.0) -> torch.Tensor", "p: float = 2.0)"))
    assert _lint(root, *cache) == [(14, "TCL105")]  # an installed file it used changed
    (root / "train.py").write_text(USER_CODE.replace("normalize(x)", "late.normalize(x)").replace(
        "import copy\n", "import copy\nimport late\n"))
    assert _lint(root, *cache) == [(15, "TCL105")]
    (site / "late.py").write_text("import torch\ndef normalize(x) -> torch.Tensor: ...\n")
    os.utime(site, ns=(os.stat(site).st_atime_ns, os.stat(site).st_mtime_ns + 10**9))  # as pip's install does
    assert _lint(root, *cache) == [(15, "TCL105"), (20, "TCL108")]  # a package installed since


def test_calling_an_installed_layer_gives_its_forward_annotation(tmp_path):
    """The motivating case: the output of a graph library's layer is a tensor, so copy.copy of it is TCL108."""
    root = _project(tmp_path)
    (root / "train.py").write_text(
        "import copy\nimport torch\nfrom torch_geometric.nn import GCNConv\n\n\n"
        "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = GCNConv(16, 16)\n\n"
        "    def forward(self, x, edge_index):\n        h = self.conv(x, edge_index)\n"
        "        return copy.copy(h)\n"
    )
    assert _lint(root, "--no-cache", "train.py") == [(13, "TCL108")]
    (root / ".venv" / "pyvenv.cfg").unlink()
    assert _lint(root, "--no-cache", "train.py") == []  # no environment: the layer's output is unknown


def test_end_to_end_packages_of_an_active_conda_environment(tmp_path):
    """A conda environment has no pyvenv.cfg: it is an installation prefix, found from CONDA_PREFIX."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "train.py").write_text(USER_CODE)
    assert _lint(root, "--no-cache", "train.py") == []  # no environment: the layer and the function are unknown
    conda = tmp_path / "miniconda3" / "envs" / "geo"
    write_tree(conda / "lib" / "python3.11" / "site-packages", GRAPH_LIBRARY)
    (conda / "conda-meta").mkdir()
    found = _lint(root, "--no-cache", "train.py", CONDA_PREFIX=str(conda), CONDA_DEFAULT_ENV="geo")
    assert found == [(14, "TCL105"), (19, "TCL108")]


def test_end_to_end_a_package_installed_editable_through_a_pth_file(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "train.py").write_text(USER_CODE)
    source = write_tree(tmp_path / "checkouts" / "geometric", GRAPH_LIBRARY)  # `pip install -e` of a checkout
    site = make_venv(root / ".venv", {"six.py": ""})  # some other installed module
    (site / "_torch_geometric.pth").write_text(f"{source}\n")
    assert _lint(root, "--no-cache", "train.py") == [(14, "TCL105"), (19, "TCL108")]
