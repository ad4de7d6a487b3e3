"""Real notebooks through the linter: no crash, no false TCL001, layout kept, fixes valid.

For every ``.ipynb`` under the given directories: lint it (counting diagnostics by
code; a TCL001 on a notebook that runs is a gap in the IPython handling, so each
one is printed), check that its JSON layout is reproduced byte for byte (what
``--fix`` needs before it writes), and fix a copy with ``--unsafe-fixes``: the copy
must validate with nbformat and differ from the original only in code cell sources.

    python benchmarks/notebooks_real.py DIR [DIR...]     # needs nbformat
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time

import nbformat

from torchcopy_lint.settings.config import Settings
from torchcopy_lint.notebook import NotebookError, read_notebook
from torchcopy_lint.notebook.ipynb import _layout
from torchcopy_lint.run.runner import run


def main(roots) -> int:
    paths = sorted(os.path.join(d, f) for root in roots for d, _, fs in os.walk(root) for f in fs
                   if f.endswith(".ipynb") and ".ipynb_checkpoints" not in d)
    codes: collections.Counter = collections.Counter()
    unreadable, layout_ok, fixed_files, problems = 0, 0, 0, 0
    start = time.perf_counter()
    report = run(paths, Settings(), jobs=1)
    elapsed = time.perf_counter() - start
    for d in report.diagnostics:
        codes[d.code] += 1
        if d.code == "TCL001":
            print(f"  {d.location}:{d.line}:{d.column}: {d.message}")
    with tempfile.TemporaryDirectory() as tmp:
        for index, path in enumerate(paths):
            with open(path, "rb") as handle:
                content = handle.read()
            try:
                notebook = read_notebook(content)
            except NotebookError:
                unreadable += 1
                continue
            try:
                _layout(notebook.data, notebook.text)
                layout_ok += 1
            except NotebookError:
                print(f"  layout not reproduced: {path}")
            copy = os.path.join(tmp, f"{index}.ipynb")
            with open(copy, "wb") as handle:
                handle.write(content)
            fixed = run([copy], Settings(), mode="fix", unsafe=True, jobs=1)
            with open(copy, "rb") as handle:
                after = handle.read()
            if after == content:
                continue
            fixed_files += 1
            new = json.loads(after)
            nbformat.validate(nbformat.from_dict(new))
            old = json.loads(content)
            for a, b in zip(old["cells"], new["cells"]):
                a["source"] = b["source"]
            if old != new or fixed.files[0].error:
                problems += 1
                print(f"  fix changed more than sources: {path}")
    lines = sum(len(c["source"]) if isinstance(c["source"], list) else c["source"].count("\n") + 1
                for p in paths for c in _cells(p))
    print(f"{len(paths)} notebooks ({unreadable} not readable as notebooks), {lines} code lines; "
          f"lint {elapsed:.2f} s (1 job); diagnostics {dict(sorted(codes.items()))}")
    print(f"layout reproduced: {layout_ok}/{len(paths) - unreadable}; fixed: {fixed_files}, "
          f"fixes that changed more than sources or failed: {problems}")
    return 1 if problems else 0


def _cells(path):
    try:
        with open(path, "rb") as handle:
            return [c for c in read_notebook(handle.read()).data["cells"] if c.get("cell_type") == "code"]
    except (NotebookError, OSError):
        return []


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
