#!/usr/bin/env python
"""How linting time grows with the number of findings in one file (issue 9: 8x findings, <= 10x time).

Generates files with N and 8N findings, at module level and inside one function, each block being

    w{i} = torch.zeros(3, requires_grad=True)
    y{i} = torch.tensor(x)          # TCL101
    z{i} = x.clone().detach()       # TCL103
    w{i}.data.add_(1)               # TCL104

and times the engine's phases on each (in-process, best of --repeats after one warm-up run):

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

import gc  # noqa: E402

import libcst as cst  # noqa: E402

from torchcopy_lint.engine import (  # noqa: E402
    ParsedFile, _decode_lines, gc_paused, lint_source, run_rules, to_diagnostics,
)
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
    """(findings, best seconds of ``lint_source``, (parse, rules, report) seconds of the best split run)."""
    count = len(lint_source(source, "generated.py", ALL_RULES, prune=False))  # warm-up: imports, caches
    best, split = float("inf"), (float("inf"), 0.0, 0.0)
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        lint_source(source, "generated.py", ALL_RULES, prune=False)
        best = min(best, time.perf_counter() - start)
        gc.collect()
        with gc_paused():  # the engine's phases, as lint_source runs them
            start = time.perf_counter()
            module = cst.parse_module(source)
            parsed_at = time.perf_counter()
            violations = run_rules(module, ALL_RULES)
            ruled_at = time.perf_counter()
            to_diagnostics("generated.py", ParsedFile(module, violations, _decode_lines(source, module)))
            end = time.perf_counter()
        if end - start < sum(split):
            split = (parsed_at - start, ruled_at - parsed_at, end - ruled_at)
        del module, violations
    return count, best, split


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=1000, help="N (the small file); the big one has 8N")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    worst = 0.0
    for in_function in (False, True):
        where = "in one function" if in_function else "at module level"
        rows = [measure(generate(n, in_function), args.repeats) for n in (args.findings, 8 * args.findings)]
        ratio = rows[1][1] / rows[0][1]
        worst = max(worst, ratio)
        for count, seconds, (parse, rules, report) in rows:
            print(f"{where:16}  {count:6d} findings  {seconds:7.2f} s  (parse {parse:.2f}, rules and "
                  f"semantic model {rules:.2f}, positions and fixes {report:.2f})", flush=True)
        rules_ratio = rows[1][2][1] / rows[0][2][1]
        print(f"{where:16}  8x findings -> {ratio:.1f}x time (rules and semantic model: {rules_ratio:.1f}x)",
              flush=True)
    print(f"worst ratio {worst:.1f}x (target <= 10x)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
