#!/usr/bin/env python
"""How linting time grows with the number of findings in one file (issue 9: 8x findings, <= 10x time).

Generates files with N and 8N findings, at module level and inside one function, each block being

    w{i} = torch.zeros(3, requires_grad=True)
    y{i} = torch.tensor(x)          # TCL101
    z{i} = x.clone().detach()       # TCL103
    w{i}.data.add_(1)               # TCL104

and times ``engine.lint_source`` on each (in-process, best of --repeats, after one warm-up run):

    python benchmarks/scaling.py                 # N = 1000
    python benchmarks/scaling.py --findings 300 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchcopy_lint.engine import lint_source  # noqa: E402
from torchcopy_lint.rules import ALL_RULES  # noqa: E402

_BLOCK = ("w{i} = torch.zeros(3, requires_grad=True)\ny{i} = torch.tensor(x)\nz{i} = x.clone().detach()\n"
          "w{i}.data.add_(1)\n")
_PER_BLOCK = 3


def generate(findings: int, in_function: bool) -> str:
    blocks = "".join(_BLOCK.format(i=i) for i in range(max(1, findings // _PER_BLOCK)))
    if in_function:
        body = "".join("    " + line + "\n" for line in blocks.splitlines())
        return "import torch\n\n\ndef generated(x: torch.Tensor):\n" + body
    return "import torch\n\nx = torch.randn(3)\n" + blocks


def measure(source: str, repeats: int) -> tuple:
    count = len(lint_source(source, "generated.py", ALL_RULES, prune=False))  # warm-up (imports)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        lint_source(source, "generated.py", ALL_RULES, prune=False)
        best = min(best, time.perf_counter() - start)
    return count, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=1000, help="N (the small file); the big one has 8N")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    worst = 0.0
    for in_function in (False, True):
        where = "in one function" if in_function else "at module level"
        rows = [measure(generate(n, in_function), args.repeats) for n in (args.findings, 8 * args.findings)]
        ratio = rows[1][1] / rows[0][1]
        worst = max(worst, ratio)
        for count, seconds in rows:
            print(f"{where:16}  {count:6d} findings  {seconds:8.2f} s", flush=True)
        print(f"{where:16}  8x findings -> {ratio:.1f}x time", flush=True)
    print(f"worst ratio {worst:.1f}x (target <= 10x)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
