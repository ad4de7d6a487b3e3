"""Start-up time of the CLI (best of N), the figure the README quotes.

Runs each case as a fresh process, N times, and prints the best and the median wall time
(best-of-N is the least disturbed by other load on the machine; the load average is printed
alongside). Cases:

- ``python -c pass``: the interpreter's own floor
- ``--version``: importing the CLI
- a file without trigger text: what most files of a project are (no LibCST import)
- a file with a hazard: the LibCST import and one parse
- ``--show-settings``: reading pyproject.toml and resolving the selection

Usage: ``python benchmarks/startup.py [--repeats 20]`` with the project's virtualenv python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

CLEAN = b"import torch\n\n\ndef f(x):\n    return x.sum() * 2\n"
HAZARD = b"import torch\nx = torch.randn(3)\ny = x.clone().detach()\n"


def _time(argv, cwd: str, repeats: int) -> list:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "clean.py"), "wb") as handle:
            handle.write(CLEAN)
        with open(os.path.join(tmp, "hazard.py"), "wb") as handle:
            handle.write(HAZARD)
        cli = [sys.executable, "-m", "torchcopy_lint"]
        cases = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("torchcopy-lint --version", cli + ["--version"]),
            ("torchcopy-lint --no-cache clean.py", cli + ["--no-cache", "clean.py"]),
            ("torchcopy-lint --no-cache hazard.py", cli + ["--no-cache", "hazard.py"]),
            ("torchcopy-lint --show-settings .", cli + ["--show-settings", "."]),
        ]
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, best and median of {args.repeats}")
        print(f"{'case':<40} {'best':>8} {'median':>8}")
        for name, argv in cases:
            times = _time(argv, tmp, args.repeats)
            print(f"{name:<40} {min(times):>7.3f}s {statistics.median(times):>7.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
