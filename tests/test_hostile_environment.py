"""A hostile environment never takes a run down or slows it past reason: its site-packages hold
syntax errors, binary and huge files, FIFOs, device files, symlink loops and import cycles; the
run ends in seconds with the project's own findings (and the one sane installed layer's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

LAYER = "import torch\n\nclass Layer(torch.nn.Module):\n    def forward(self, x) -> torch.Tensor: ...\n"
NAMES = ("broken", "huge", "binary", "fifo", "fifofile", "loop", "device", "stars", "aliases", "deep", "good")

PROJECT_FILE = "".join(
    ["import copy\nimport torch\n"]
    + [f"from {name} import Layer as L{i}\n" for i, name in enumerate(NAMES)]
    + ["\n\nclass Trainer:\n    def __init__(self):\n"]
    + [f"        self.m{i} = L{i}()\n" for i in range(len(NAMES))]
    + ["\n    def fit(self, loader, opt):\n        for x in loader:\n"
       f"            self.m{NAMES.index('good')}(x).sum().backward()\n            opt.step()\n"]
    + [f"            b{i} = copy.deepcopy(self.m{i})\n" for i in range(len(NAMES))]
    + ["\n\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"]
)


def _hostile_site(site: Path) -> None:
    def write(name: str, data: bytes) -> None:
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    write("broken/__init__.py", b"class Layer(:\n    def f(\n")
    with open(site / "huge.py", "wb") as handle:  # sparse: 3 GB that cost nothing to make
        handle.write(LAYER.encode())
        handle.truncate(3_000_000_000)
    write("binary/__init__.py", bytes(range(256)) * 64)
    (site / "fifo").mkdir()
    os.mkfifo(site / "fifo" / "__init__.py")
    os.mkfifo(site / "fifofile.py")
    os.symlink(site / "loop", site / "loop")  # a link to itself
    (site / "device").mkdir()
    os.symlink("/dev/zero", site / "device" / "__init__.py")
    write("stars/__init__.py", b"from .a import *\n")
    write("stars/a.py", b"from .b import *\n")
    write("stars/b.py", b"from .a import *\nfrom stars import *\n")
    write("aliases/__init__.py", b"from aliases import Layer as Layer\nLayer = Other\nOther = Layer\n")
    write("deep/__init__.py", b"x = " + b"(" * 200_000 + b")" * 200_000 + b"\n" + LAYER.encode())
    write("good/__init__.py", LAYER.encode())
    os.symlink(site, site / "good" / "again")  # a cycle through a package


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache-cold-then-warm"])
def test_a_hostile_environment_costs_seconds_and_keeps_the_project_findings(tmp_path: Path, cache: bool):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("version = 3.11.4\n")
    _hostile_site(site)
    (root / "train.py").write_text(PROJECT_FILE)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV")}
    args = ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
    for _ in range(2 if cache else 1):
        start = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "torchcopy_lint", "--isolated", "--output-format", "json", *args, "train.py"],
            cwd=root, capture_output=True, env={**env, "PYTHONIOENCODING": "utf-8"}, timeout=60)
        elapsed = time.monotonic() - start
        assert result.returncode == 1, result.stderr
        found = [(d["line"], d["code"]) for d in json.loads(result.stdout)]
        lines = PROJECT_FILE.splitlines()
        own = lines.index("y = x.clone().detach()") + 1
        good = lines.index(f"            b{NAMES.index('good')} = copy.deepcopy(self.m{NAMES.index('good')})") + 1
        assert found == [(good, "TCL105"), (own, "TCL103")], found
        assert elapsed < 15, elapsed  # about 1 s alone; generous for a loaded machine
