#!/usr/bin/env python
"""Files with one big literal: linting against CPython's own parse (issue 19).

Generates three files, each of torch code with findings plus one big literal:

- ``vocab``: a 100,000-entry dict literal (a vocabulary, one entry a line; 2.5 MB);
- ``data``: a 200,000-element list of floats on one line (1.8 MB);
- ``names``: ``T = [`` + 50,000 lines of ``    i,`` + ``]`` (the lead's pre-stop check).

and runs, alternating, ``--repeats`` times each: a process that only reads the file and calls
``ast.parse`` on it, and ``torchcopy-lint check --no-cache`` on it (the CLI, worker process
included). Reports the median CPU time (user + sys of the process and its children, from
wait4: wall time is meaningless on a shared machine) and the peak RSS (wait4's ru_maxrss: the
largest process of the tree), their ratios, and the findings; checks the bounds the issue sets
(2x the time, 1.5x the memory of ``ast.parse``; the pre-stop file < 3x + 0.4 s). Exit status 1
when a bound is missed or the findings are not the expected ones.

    python benchmarks/big_literals.py
    python benchmarks/big_literals.py --repeats 5 --keep /tmp/big
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parent.parent
TORCH_CODE = (REPO / "examples" / "train_loop.py").read_text()  # TCL105 at line 30
HEAD = "import torch\nx = torch.randn(3)\ny = torch.tensor(x)\n"  # TCL101 at line 3


def files() -> Dict[str, Tuple[str, List[str]]]:
    """name -> (source, the findings expected: "line:code")."""
    rng = random.Random(19)
    vocab = "".join(f'    "w{i}_{rng.randint(0, 999)}": {i},\n' for i in range(100_000))
    data = ", ".join(f"{rng.random():.6f}" for _ in range(200_000))
    names = "    i,\n" * 50_000
    return {
        "vocab": (f"{TORCH_CODE}\n\nVOCAB = {{\n{vocab}}}\n", ["30:TCL105"]),
        "data": (f"{TORCH_CODE}\n\nDATA = [{data}]\n", ["30:TCL105"]),
        "names": (f"{HEAD}T = [\n{names}]\n", ["3:TCL101"]),
    }


def measure(command: List[str]) -> Tuple[float, float, str]:
    """(CPU seconds, peak RSS in MiB, stdout) of ``command`` and its children."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users have .pyc files
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
    out = process.stdout.read().decode()  # type: ignore[union-attr]
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def findings(out: str) -> List[str]:
    found = []
    for line in out.splitlines():  # path:line:col: CODE message
        parts = line.split(":")
        if len(parts) > 3 and parts[3].strip().startswith("TCL"):
            found.append(f"{parts[1]}:{parts[3].split()[0]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the files here (default: a temporary directory)")
    args = parser.parse_args()
    directory = args.keep or Path(tempfile.mkdtemp(prefix="big-literals-"))
    directory.mkdir(parents=True, exist_ok=True)
    ok = True
    print(f"{'file':6} {'size':>8} {'ast CPU':>8} {'lint CPU':>8} {'ratio':>6} {'ast RSS':>8} {'lint RSS':>8} "
          f"{'ratio':>6}  findings")
    for name, (source, expected) in files().items():
        path = directory / f"{name}.py"
        path.write_text(source)
        parse = [sys.executable, "-c", f"import ast; ast.parse(open({str(path)!r}, 'rb').read())"]
        lint = [sys.executable, "-m", "torchcopy_lint", "check", "--isolated", "--no-cache", "--file-timeout", "0",
                str(path)]
        runs: Dict[str, List[Tuple[float, float, str]]] = {"ast": [], "lint": []}
        for _ in range(args.repeats):  # alternating, so that a change of load hits both
            runs["ast"].append(measure(parse))
            runs["lint"].append(measure(lint))
        cpu = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
        rss = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
        found = findings(runs["lint"][-1][2])
        time_ratio, memory_ratio = cpu["lint"] / cpu["ast"], rss["lint"] / rss["ast"]
        if name == "names":
            bound = cpu["lint"] < 3 * cpu["ast"] + 0.4
            verdict = f"< 3x + 0.4 s ({3 * cpu['ast'] + 0.4:.2f} s): {'ok' if bound else 'MISSED'}"
        else:
            bound = time_ratio <= 2 and memory_ratio <= 1.5
            verdict = f"<= 2x time, 1.5x memory: {'ok' if bound else 'MISSED'}"
        ok = ok and bound and found == expected
        print(f"{name:6} {len(source) / 1e6:6.2f}MB {cpu['ast']:7.2f}s {cpu['lint']:7.2f}s {time_ratio:5.2f}x "
              f"{rss['ast']:6.0f}MB {rss['lint']:6.0f}MB {memory_ratio:5.2f}x  {','.join(found) or '-'}"
              f"{'' if found == expected else ' (expected ' + ','.join(expected) + ')'}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
