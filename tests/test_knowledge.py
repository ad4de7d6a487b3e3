"""The torch table (torchcopy_lint/knowledge/torch_table.json) matches what the installed torch's own
annotations say, and it loads without torch."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from torchcopy_lint import knowledge
from torchcopy_lint.knowledge import generate

TORCH = importlib.util.find_spec("torch")
needs_torch = pytest.mark.skipif(TORCH is None, reason="torch is not installed: the table cannot be regenerated")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@needs_torch
def test_table_matches_installed_torch():
    directory = generate.torch_directory()
    regenerated = generate.dumps(generate.generate(directory))
    with open(knowledge.TABLE_PATH, encoding="utf-8") as f:
        shipped = f.read()
    assert generate.torch_version(directory) == knowledge.torch_version()
    assert regenerated == shipped, "run `python -m torchcopy_lint.knowledge.generate` with the pinned torch"


def test_table_says_what_torch_says():
    """A few entries read from the .pyi files and nn/modules (also a check that the file is not empty)."""
    assert knowledge.lookup("functions", "zeros") == "T"
    assert knowledge.lookup("functions", "topk") == ["nt", "torch.return_types.topk", ["values", "indices"],
                                                     ["T", "T"]]
    assert knowledge.lookup("functions", "split") == "L"  # torch/functional.py: -> tuple[Tensor, ...]
    assert knowledge.lookup("tensor_methods", "numel") == "N"
    assert knowledge.lookup("tensor_methods", "tolist") == "?"  # -> Any: the hand list says it
    assert [code for _, code in knowledge.lookup("tensor_methods", "max")["o"]] == [
        "T", "T", ["nt", "torch.return_types.max", ["values", "indices"], ["T", "T"]]]
    assert knowledge.lookup("tensor_attributes", "data") == "T"
    assert knowledge.lookup("tensor_attributes", "grad") == "?"  # Tensor | None: the hand list says it
    assert knowledge.lookup("tensor_attributes", "shape") == "X"
    assert knowledge.lookup("functional", "relu") == "T"
    assert knowledge.lookup("functional", "linear") == "T"  # re-exported from torch._C._nn
    assert knowledge.lookup("module_forward", "Linear") == "T"
    assert knowledge.lookup("module_forward", "ReLU6") == "T"  # inherited from Hardtanh.forward
    assert knowledge.lookup("module_forward", "Sequential") == "?"  # forward(self, input): unannotated
    lstm = knowledge.lookup("module_forward", "LSTM")["o"]
    assert [code for _, code in lstm] == [["()", "T", ["()", "T", "T"]], ["()", "X", ["()", "T", "T"]]]


def test_table_loads_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from torchcopy_lint import knowledge\n"
            "assert knowledge.lookup('module_forward', 'Conv2d') == 'T'\n"
            "print('ok', knowledge.torch_version())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok 2.")


def test_generator_reads_files_only(tmp_path):
    """The generator works on a directory of torch-shaped files: it reads them, it does not import them."""
    (tmp_path / "_C").mkdir()
    (tmp_path / "nn" / "modules").mkdir(parents=True)
    (tmp_path / "version.py").write_text("raise SystemExit('imported')\n__version__ = '9.9'\n")
    (tmp_path / "return_types.pyi").write_text(
        "class topk(tuple[Tensor, Tensor]):\n    @property\n    def values(self) -> Tensor: ...\n"
        "    @property\n    def indices(self) -> Tensor: ...\n")
    (tmp_path / "_C" / "_VariableFunctions.pyi").write_text(
        "def topk(input: Tensor, k: _int) -> torch.return_types.topk: ...\n"
        "def numel(self: Tensor) -> _int: ...\ndef anything(x) -> Any: ...\n")
    (tmp_path / "functional.py").write_text("def split(t, s) -> tuple[Tensor, ...]: ...\n")
    (tmp_path / "_C" / "__init__.pyi").write_text(
        "class TensorBase:\n    data: Tensor\n    grad: Tensor | None\n    _cdata: _int\n"
        "    def to(self, *a) -> Self: ...\n")
    (tmp_path / "_C" / "_nn.pyi").write_text("def gelu(x: Tensor) -> Tensor: ...\n")
    (tmp_path / "nn" / "functional.pyi").write_text("from torch._C._nn import gelu as gelu\n")
    (tmp_path / "nn" / "modules" / "m.py").write_text(
        "class Module: pass\nclass A(Module):\n    def forward(self, x: Tensor) -> Optional[Tensor]: ...\n"
        "class B(A): pass\nclass C:\n    def forward(self) -> Tensor: ...\n")
    table = generate.generate(str(tmp_path))
    assert table["torch_version"] == "9.9"
    assert table["functions"] == {"topk": ["nt", "torch.return_types.topk", ["values", "indices"], ["T", "T"]],
                                  "numel": "N", "anything": "?", "split": "L"}
    assert table["tensor_methods"] == {"to": "T"}
    assert table["tensor_attributes"] == {"data": "T", "grad": "?"}
    assert table["functional"] == {"gelu": "T"}
    assert table["module_forward"] == {"Module": "?", "A": "?", "B": "?"}  # Optional: unknown; C: no Module
