"""Work that must not grow with the number of sites: counted, not timed (timings live in benchmarks/)."""

from __future__ import annotations

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import RULES_BY_CODE
from torchcopy_lint.rules import tcl107_tensor_of_tensors as tcl107


def test_tcl107_walks_each_scope_once_however_many_calls(monkeypatch) -> None:
    walks = []
    real = tcl107.descendants_with_paths

    def counting(node, path):
        walks.append(node)
        return real(node, path)

    monkeypatch.setattr(tcl107, "descendants_with_paths", counting)
    calls = "".join(f"y{i} = torch.tensor(xs)\n" for i in range(40))
    source = "import torch\nxs = []\nxs.append(torch.zeros(1))\n" + calls
    lint_source(source.encode(), "t.py", [RULES_BY_CODE["TCL107"]])
    assert len(walks) == 1, f"{len(walks)} walks of the module for 40 calls"
