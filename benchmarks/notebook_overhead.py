"""What linting a notebook costs over linting the same code as a ``.py`` file.

The code of a Python file (default: torch/nn/functional.py of the installed torch,
found without importing it) is cut into code cells every N top-level statements,
with a markdown cell and an IPython line (``%time``/``!ls``) between them, and
written as an ``.ipynb`` with nbformat's layout. Both are linted in-process with
every rule, best of ``--repeats``; the notebook's extra work is reading the JSON,
neutralizing IPython syntax and mapping positions back to cells.

    python benchmarks/notebook_overhead.py [--file PATH] [--every 5] [--repeats 7]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import sys
import time

from torchcopy_lint.engine import lint_source
from torchcopy_lint.notebook import lint_notebook, neutralize
from torchcopy_lint.rules import ALL_RULES


def default_file() -> str:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed: pass --file")
    return os.path.join(list(spec.submodule_search_locations)[0], "nn", "functional.py")


def as_notebook(text: str, every: int) -> bytes:
    lines = text.splitlines(keepends=True)
    starts = [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) for n in ast.parse(text).body]
    cuts = [1] + starts[every::every] + [len(lines) + 1]
    cells = []
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        source = ("%time 1\n" if k % 2 else "!ls\n") + "".join(lines[a - 1:b - 1])
        cells.append({"cell_type": "markdown", "id": f"m{k}", "metadata": {}, "source": [f"## part {k}"]})
        cells.append({"cell_type": "code", "execution_count": k, "id": f"c{k}", "metadata": {}, "outputs": [],
                      "source": source.splitlines(keepends=True)})
    nb = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3",
                                                      "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def best(fns, repeats: int):
    """Best time of each function, runs interleaved so that load changes hit all alike."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default=None)
    parser.add_argument("--every", type=int, default=5, help="top-level statements per cell")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    path = args.file or default_file()
    with open(path, "rb") as handle:
        source = handle.read()
    notebook = as_notebook(source.decode("utf-8"), args.every)
    cells = sum(1 for c in json.loads(notebook)["cells"] if c["cell_type"] == "code")
    load = os.getloadavg()[0]  # before the runs
    py, nb, scan = best([lambda: lint_source(source, "f.py", ALL_RULES),
                         lambda: lint_notebook(notebook, "f.ipynb", ALL_RULES),
                         lambda: neutralize(source.decode("utf-8"))], args.repeats)
    found_py = len(lint_source(source, "f.py", ALL_RULES))
    found_nb = len(lint_notebook(notebook, "f.ipynb", ALL_RULES))
    print(f"{path}: {len(source.splitlines())} lines, {cells} code cells; load average {load:.2f} "
          f"on {os.cpu_count()} cores; best of {args.repeats}")
    print(f"  .py    lint_source   {py * 1000:8.1f} ms  ({found_py} diagnostics)")
    print(f"  .ipynb lint_notebook {nb * 1000:8.1f} ms  ({found_nb} diagnostics)  overhead {(nb - py) * 1000:.1f} ms"
          f" ({nb / py:.2f}x)")
    print(f"  of which the IPython scan of the whole text {scan * 1000:.1f} ms")


if __name__ == "__main__":
    main()
