"""Time and peak memory of the flagged and the preferred form of TCL116-TCL118 (the docs pages' figures).

    python benchmarks/copy_figures.py [--rule TCL116] [--repeat 15]

Each form runs in a fresh subprocess: its inputs are built, the process's peak RSS is reset
(``/proc/self/clear_refs`` = 5, Linux) and the form runs once; peak memory is the rise of VmHWM over
the RSS before it. Time is the best of ``--repeat`` blocks of 2 calls (wall, perf_counter) with the
process CPU time of the same blocks. The load average is printed with the figures: on a shared machine
wall times are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: rule -> [(what, setup, flagged form, preferred form)]
CASES = {
    "TCL116": [
        ("zeros 4096x4096 to half", "", "torch.zeros(4096, 4096).half()", "torch.zeros(4096, 4096, dtype=torch.half)"),
        ("ones 4096x4096 to float64", "", "torch.ones(4096, 4096).to(torch.float64)",
         "torch.ones(4096, 4096, dtype=torch.float64)"),
        ("arange(2**24) to float32", "", "torch.arange(2 ** 24).float()", "torch.arange(2 ** 24, dtype=torch.float)"),
        ("tensor(1e6 Python floats) to half", "data = [i / 7 for i in range(10 ** 6)]",
         "torch.tensor(data).half()", "torch.tensor(data, dtype=torch.half)"),
    ],
    "TCL117": [
        ("4096x4096 requiring grad, to float64", "x = torch.randn(4096, 4096, requires_grad=True) * 2",
         "x.to(torch.float64).detach()", "x.detach().to(torch.float64)"),
        ("1,000 elements requiring grad, to float64", "x = torch.randn(1000, requires_grad=True) * 2",
         "x.to(torch.float64).detach()", "x.detach().to(torch.float64)"),
    ],
    "TCL118": [
        ("4096x4096 float32 to float64", "x = torch.randn(4096, 4096)", "x.clone().double()",
         "x.to(torch.double, copy=True)"),
        ("4096x4096 float32 to half", "x = torch.randn(4096, 4096)", "x.clone().half()",
         "x.to(torch.half, copy=True)"),
        ("1,000 elements to float64", "x = torch.randn(1000)", "x.clone().double()", "x.to(torch.double, copy=True)"),
    ],
}

CHILD = r"""
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[3]))
def kb(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field))
exec(sys.argv[1])
form = compile(sys.argv[2], "<form>", "eval")
eval(form); eval(form)  # warm up (allocator, first-call costs)
best_wall = best_cpu = float("inf")
for _ in range(int(sys.argv[4])):
    w, c = time.perf_counter(), time.process_time()
    eval(form); eval(form)
    best_wall = min(best_wall, (time.perf_counter() - w) / 2)
    best_cpu = min(best_cpu, (time.process_time() - c) / 2)
import gc; gc.collect()
before = kb("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
result = eval(form)
peak = kb("VmHWM:") - before
print(json.dumps({"wall_ms": best_wall * 1e3, "cpu_ms": best_cpu * 1e3, "peak_mb": peak / 1024}))
"""


def measure(setup: str, form: str, threads: int, repeat: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, "import torch\n" + setup, form, str(threads), str(repeat)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", choices=sorted(CASES), action="append")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}; torch threads: {args.threads}")
    print("| rule | case | form | wall ms (best) | CPU ms | peak MB |")
    print("|---|---|---|---|---|---|")
    for rule in args.rule or sorted(CASES):
        for what, setup, flagged, preferred in CASES[rule]:
            for form in (flagged, preferred):
                m = measure(setup, form, args.threads, args.repeat)
                print(f"| {rule} | {what} | `{form}` | {m['wall_ms']:.4g} | {m['cpu_ms']:.4g} | {m['peak_mb']:.1f} |",
                      flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
