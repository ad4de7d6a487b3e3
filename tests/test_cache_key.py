"""The result cache must not answer from results of other code: its key includes the package's build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import torchcopy_lint

_KEY = "from torchcopy_lint.cache import cache_key; print(cache_key(b'x = 1', frozenset({'TCL101'})))"


def _key_with(package_parent: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    out = subprocess.run([sys.executable, "-c", _KEY], env=env, capture_output=True, text=True, check=True,
                         cwd=str(package_parent))
    return out.stdout.strip()


def test_editing_a_module_of_the_package_changes_the_cache_key(tmp_path: Path) -> None:
    source = Path(torchcopy_lint.__file__).parent
    shutil.copytree(source, tmp_path / "torchcopy_lint", ignore=shutil.ignore_patterns("__pycache__"))
    before = _key_with(tmp_path)
    assert before == _key_with(tmp_path), "the key must be stable for unchanged code"
    rule = tmp_path / "torchcopy_lint" / "engine.py"
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert _key_with(tmp_path) != before
