"""Helpers shared by the static (torch-free) tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_inputs() -> List[Path]:
    """Every fixture input file (not the expected fixed outputs)."""
    return sorted(
        p for p in FIXTURES.glob("TCL*/*.py")
        if not p.name.endswith((".fixed.py", ".unsafe.py"))
    )


def real_files(extra: List[Path] = (), optim: int = 25, modules: int = 15) -> List[Path]:
    """Real code to edit: the fixture inputs, ``extra``, and the first ``optim``/``modules`` files of the installed
    torch's ``optim`` and ``nn/modules`` (read as text, never imported; none when torch is absent)."""
    import importlib.util

    paths = fixture_inputs() + list(extra)
    torch = importlib.util.find_spec("torch")
    if torch is not None:
        base = Path(torch.submodule_search_locations[0])
        paths += sorted((base / "optim").glob("*.py"))[:optim] + sorted((base / "nn" / "modules").glob("*.py"))[:modules]
    return paths


def run_cli(*args: str, cwd=None, input_bytes: bytes = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "torchcopy_lint", *args],
        capture_output=True, cwd=cwd, input=input_bytes, env=env,
    )
