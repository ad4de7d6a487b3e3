"""Import roots (semantic/roots.py): a package nested below the project root imports as Python run
from its parent folder would, and the `src` setting lists more roots (ruff's name)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_project_index import write_tree
from test_site_packages import _fresh  # noqa: F401  (autouse: a fresh index, no environment)
from torchcopy_lint.settings import environment
from torchcopy_lint.settings.config import ConfigError, load_settings
from torchcopy_lint.semantic.project import ProjectIndex

MONOREPO = {
    ".git/HEAD": "",
    "research/trainer/__init__.py": "",
    "research/trainer/models.py": "import torch.nn as nn\n\nclass Net(nn.Module):\n    pass\n",
    "research/trainer/train.py": (
        "import copy\nimport trainer.models\n\n\nclass Trainer:\n    def __init__(self):\n"
        "        self.model = trainer.models.Net()\n\n"
        "    def fit(self, loader, opt):\n        for x in loader:\n"
        "            self.model(x).sum().backward()\n            opt.step()\n"
        "            best = copy.deepcopy(self.model)\n"
    ),
    "libs/common/shared/__init__.py": "import torch.nn as nn\n\nclass Head(nn.Linear):\n    pass\n",
    "apps/run.py": "from shared import Head\n",
}


def test_a_nested_package_imports_from_its_parent_folder(tmp_path):
    root = write_tree(tmp_path / "repo", MONOREPO)
    index = ProjectIndex.for_path(str(root / "research/trainer/train.py"))
    assert index.root == str(root)
    assert index.module_class_kind("trainer.models.Net") == "module"
    assert str(root / "research/trainer/models.py") in index.dependencies()
    elsewhere = ProjectIndex.for_path(str(root / "apps/run.py"))  # not from another folder's package
    assert elsewhere.module_class_kind("trainer.models.Net") is None


def test_src_setting_adds_roots(tmp_path):
    root = write_tree(tmp_path / "repo", MONOREPO)
    index = ProjectIndex.for_path(str(root / "apps/run.py"))
    assert index.module_class_kind("shared.Head") is None
    ProjectIndex.clear()
    environment.configure(None, (str(root / "libs/common"),))
    index = ProjectIndex.for_path(str(root / "apps/run.py"))
    assert index.module_class_kind("shared.Head") == "module"


def test_src_setting_is_checked_and_relative_to_the_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchcopy-lint]\nsrc = ["libs/common", "."]\n')
    settings = load_settings(str(tmp_path / "pyproject.toml"))
    assert settings.src == (str(tmp_path / "libs" / "common"), str(tmp_path))
    for bad in ('src = "libs"', "src = [1]", 'src = [""]'):
        (tmp_path / "pyproject.toml").write_text(f"[tool.torchcopy-lint]\n{bad}\n")
        with pytest.raises(ConfigError, match="src"):
            load_settings(str(tmp_path / "pyproject.toml"))


def _lint(cwd: Path, *args: str) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV")}
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "--output-format", "json", *args],
                            cwd=cwd, capture_output=True, env={**env, "PYTHONIOENCODING": "utf-8"})
    assert result.returncode in (0, 1), result.stderr
    return [(Path(d["path"]).name, d["line"], d["code"]) for d in json.loads(result.stdout)]


def test_end_to_end_nested_package_and_src(tmp_path):
    files = dict(MONOREPO)
    files["apps/run.py"] = MONOREPO["research/trainer/train.py"].replace(
        "import trainer.models", "import shared").replace("trainer.models.Net()", "shared.Head(3, 3)")
    root = write_tree(tmp_path / "repo", files)
    assert _lint(root, "--no-cache", "--isolated", "research") == [("train.py", 13, "TCL105")]
    assert _lint(root, "--no-cache", "--isolated", "apps") == []
    (root / "pyproject.toml").write_text('[tool.torchcopy-lint]\nsrc = ["libs/common"]\n')
    cache = ("--cache-dir", str(tmp_path / "cache"))
    assert _lint(root, *cache, "apps") == [("run.py", 13, "TCL105")]
    shown = subprocess.run([sys.executable, "-m", "torchcopy_lint", "--show-settings", "apps"], cwd=root,
                           capture_output=True).stdout.decode()
    assert f'src = ["{root / "libs" / "common"}"]' in shown
    (root / "pyproject.toml").write_text("[tool.torchcopy-lint]\nsrc = []\n")
    assert _lint(root, *cache, "apps") == []  # a cached result does not outlive its roots


def test_a_package_installed_in_site_packages_does_not_make_it_a_root(tmp_path):
    root = write_tree(tmp_path / "repo", {
        ".git/HEAD": "",
        "env/lib/python3.11/site-packages/torch/__init__.py": "class Tensor:\n    pass\n",
        "env/lib/python3.11/site-packages/torch/nn/__init__.py": "class Module:\n    pass\n",
        "env/lib/python3.11/site-packages/torch/nn/linear.py": "from torch.nn import Module\n",
        "env/lib/python3.11/site-packages/helper.py": "import torch\n",
    })
    site = root / "env/lib/python3.11/site-packages"
    for linted in ("torch/nn/linear.py", "helper.py"):  # linting installed sources: torch stays external
        index = ProjectIndex.for_path(str(site / linted))
        assert index.resolve("torch.nn.Module") is None, linted
        assert not [p for p in index.dependencies() if "site-packages" in p], linted
