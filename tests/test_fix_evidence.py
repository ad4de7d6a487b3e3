"""A fix shown is a fix applied, also where its evidence comes from the project index (issue 30).

``model.fc.weight.data.zero_()`` is TCL104 (with a fix) only because the project index knows that
``DummyModel().fc`` is a module: defined in the same file, or in another module of the project.
``--fix``, ``--diff``, the API and notebooks must apply that fix, and ``N fixes available`` must be
what ``--fix`` then reports fixed. The editor's side is in test_server.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

from torchcopy_lint.fixing.edits import applies
from torchcopy_lint.engine import lint_source
from torchcopy_lint.fixing.fixer import fix_source
from torchcopy_lint.rules import ALL_RULES

MODEL = '''import torch.nn as nn


class DummyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)
'''

SAME_FILE = "import torch\n" + MODEL + '''

model = DummyModel()
out = model(torch.randn(2, 4))
model.fc.weight.data.zero_()
out.sum().backward()


def test_train():
    model = DummyModel()
    for _ in range(3):
        out = model(torch.randn(2, 4))
        model.fc.weight.data.zero_()
        model.fc.bias.data.fill_(0.1)
        out.sum().backward()
'''

OTHER_MODULE = '''import torch

from pkg.models import DummyModel


def train(steps):
    model = DummyModel()
    for _ in range(steps):
        loss = model(torch.randn(2, 4)).sum()
        model.fc.weight.data.mul_(0.5)
        loss.backward()
'''

FIXED_WRITES = {
    "pkg/test_loop.py": ["model.fc.weight.detach().zero_()", "model.fc.bias.detach().fill_(0.1)"],
    "pkg/train.py": ["model.fc.weight.detach().mul_(0.5)"],
}


def _project(root: Path) -> Path:
    (root / "pyproject.toml").write_text('[project]\nname = "loops"\n')
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "models.py").write_text(MODEL)
    (root / "pkg" / "test_loop.py").write_text(SAME_FILE)
    (root / "pkg" / "train.py").write_text(OTHER_MODULE)
    return root


def _fixable(cli, root: Path) -> Dict[str, List[dict]]:
    """Per file (relative path), the diagnostics whose fix ``--fix --unsafe-fixes`` applies, as JSON shows them."""
    done = cli("--isolated", "--no-cache", "--select", "ALL", "--output-format", "json", str(root / "pkg"))
    assert done.returncode in (0, 1), done.stderr
    out: Dict[str, List[dict]] = {}
    for d in json.loads(done.stdout):
        if d["fix"] is not None:
            out.setdefault(Path(d["path"]).relative_to(root).as_posix(), []).append(d)
    return out


def test_the_lint_advertises_the_fixes(tmp_path, cli):
    fixable = _fixable(cli, _project(tmp_path))
    assert {path: [d["code"] for d in found] for path, found in fixable.items()} == {
        "pkg/test_loop.py": ["TCL104", "TCL104", "TCL104"], "pkg/train.py": ["TCL104"]}
    assert {d["fix"]["content"] for d in fixable["pkg/test_loop.py"]} == {"model.fc.weight.detach()",
                                                                          "model.fc.bias.detach()"}


def test_fix_applies_what_was_advertised_and_counts_it(tmp_path, cli):
    root = _project(tmp_path)
    advertised = sum(len(found) for found in _fixable(cli, root).values())
    check = cli("--isolated", "--no-cache", "--select", "ALL", str(root / "pkg"))
    assert f"{advertised} more fixes available with `--fix --unsafe-fixes`." in check.stderr.decode()
    done = cli("--isolated", "--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", "--show-fixes",
               str(root / "pkg"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert f"Fixed {advertised} errors:" in err and f"fixed {advertised}." in err
    for path, writes in FIXED_WRITES.items():
        text = (root / path).read_text()
        assert ".data." not in text and all(write in text for write in writes), text
    assert _fixable(cli, root) == {}  # no fix is advertised any more: none was left behind
    again = cli("--isolated", "--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", str(root / "pkg"))
    assert (root / "pkg" / "train.py").read_text().count(".detach()") == 1 and again.returncode == 0


def test_diff_shows_what_was_advertised(tmp_path, cli):
    root = _project(tmp_path)
    before = {path: (root / path).read_text() for path in FIXED_WRITES}
    done = cli("--isolated", "--no-cache", "--select", "ALL", "--diff", "--unsafe-fixes", str(root / "pkg"))
    added = [line[1:].strip() for line in done.stdout.decode().splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert sorted(added) == sorted(w for writes in FIXED_WRITES.values() for w in writes
                                   for _ in range(2 if w.endswith("zero_()") else 1))
    assert {path: (root / path).read_text() for path in FIXED_WRITES} == before  # --diff changes nothing


def test_the_api_fixes_with_the_files_project_index(tmp_path):
    root = _project(tmp_path)
    path = root / "pkg" / "train.py"
    result = fix_source(path.read_bytes(), ALL_RULES, unsafe=True, path=str(path))
    assert result.applied == 1 and b"model.fc.weight.detach().mul_(0.5)" in result.source
    assert result.diagnostics == lint_source(result.source, str(path), ALL_RULES)
    assert not [d for d in result.diagnostics if applies(d, unsafe=True)]


def test_a_notebook_gets_the_fix_its_cells_show(tmp_path, cli):
    root = _project(tmp_path)
    cells = ["import torch\nfrom pkg.models import DummyModel\nmodel = DummyModel()\n",
             "for _ in range(2):\n    out = model(torch.randn(2, 4))\n    model.fc.weight.data.zero_()\n"
             "    out.sum().backward()\n"]
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                           "outputs": [], "source": source} for i, source in enumerate(cells)],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path = root / "train.ipynb"
    path.write_text(json.dumps(notebook))
    shown = cli("--isolated", "--no-cache", "--output-format", "json", str(path))
    (found,) = json.loads(shown.stdout)
    assert found["code"] == "TCL104" and found["cell"] == 2 and found["fix"] is not None
    done = cli("--isolated", "--no-cache", "--fix", "--unsafe-fixes", str(path))
    assert re.search(r"fixed 1\.", done.stderr.decode()), done.stderr
    fixed = json.loads(path.read_text())["cells"][1]["source"]
    assert "".join(fixed) == cells[1].replace(".data.zero_()", ".detach().zero_()")


def test_fixes_apply_in_the_files_encoding_and_line_endings():
    """The edits count characters of the decoded text and end lines where the parser does."""
    latin = "# -*- coding: latin-1 -*-\r\nimport torch\r\ny = 'éé'; x = torch.tensor(torch.zeros(3))\r\n"
    bom = "\ufeffimport torch\ny = 'é'\rx = (torch.tensor(torch.zeros(3)))\n"
    for text, encoding in ((latin, "latin-1"), (bom, "utf-8")):
        result = fix_source(text.encode(encoding), ALL_RULES)
        fixed = text.replace("torch.tensor(torch.zeros(3))", "torch.zeros(3).detach().clone()")
        assert result.source == fixed.encode(encoding) and result.applied == 1


def test_a_fix_over_several_rounds_counts_as_advertised(tmp_path, cli):
    """`t.clone().detach().clone().detach()`: two overlapping fixes, applied over rounds whose results the
    next round fixes again; --fix reports the fixes the output showed, no more."""
    path = tmp_path / "chains.py"
    path.write_text(Path(__file__).resolve().parents[1].joinpath("fixtures", "TCL103", "clone_detach.py").read_text())
    shown = json.loads(cli("--isolated", "--no-cache", "--output-format", "json", str(path)).stdout)
    advertised = len([d for d in shown if d["fix"] and d["fix"]["applicability"] == "safe"])
    done = cli("--isolated", "--no-cache", "--fix", "--show-fixes", str(path))
    assert f"Fixed {advertised} errors:" in done.stderr.decode() and f"fixed {advertised}." in done.stderr.decode()
