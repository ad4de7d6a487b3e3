"""Time the project index: summaries and cross-module questions, and how they scale.

    python benchmarks/project_index.py                  # generated projects of 100 and 800 modules
    python benchmarks/project_index.py --modules 50 400 --repeats 5
    python benchmarks/project_index.py --tree DIR       # a real project: ask about every class in it

A generated project has N modules; module i defines a class deriving from the class of module
i-1 (the first from ``nn.Module``), a function returning its argument's ``.module`` or itself, and a
class whose ``__init__`` stores a deepcopy of a model. Each question is asked from a fresh index in a
fresh process state (``ProjectIndex.clear()``); the script reports the time to answer every question
cold (summaries built with ``ast``), with the summaries' disk cache warm, and again in memory
(memoised), and the ratio between the sizes: linear cost means time grows like N.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from torchcopy_lint.semantic.project import ProjectIndex, configure_summary_cache  # noqa: E402


def generate(root: str, modules: int) -> List[str]:
    """Write a project of ``modules`` modules under ``root``; return the classes to ask about."""
    os.makedirs(os.path.join(root, "pkg"), exist_ok=True)
    open(os.path.join(root, "pyproject.toml"), "w").close()
    with open(os.path.join(root, "pkg", "__init__.py"), "w") as handle:
        handle.write("from .m0 import Net0\n")
    classes = []
    for i in range(modules):
        base = "nn.Module" if i == 0 else f"Net{i - 1}"
        imports = "import torch.nn as nn\nfrom copy import deepcopy\n" + (
            f"from .m{i - 1} import Net{i - 1}, unwrap{i - 1}\n" if i else "")
        body = (
            f"class Net{i}({base}):\n    def __init__(self, width):\n        super().__init__()\n"
            f"        self.fc = nn.Linear(width, width)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
            f"def unwrap{i}(model):\n    return model.module if hasattr(model, 'module') else model\n\n\n"
            f"class Ema{i}:\n    def __init__(self, model):\n        self.ema = deepcopy(unwrap{i}(model)).eval()\n"
        )
        with open(os.path.join(root, "pkg", f"m{i}.py"), "w") as handle:
            handle.write(imports + "\n\n" + body)
        classes.append(f"pkg.m{i}")
    return classes


def ask_all(anchor: str, modules: List[str]) -> Tuple[float, int]:
    index = ProjectIndex.for_path(anchor)
    start = time.perf_counter()
    answered = 0
    for name in modules:
        number = name.rsplit("m", 1)[-1]
        answers = (index.module_class_kind(f"{name}.Net{number}"), index.function_return(f"{name}.unwrap{number}"),
                   index.attribute_kind(f"{name}.Ema{number}", "ema"))
        answered += answers == ("module", "arg:0", "module")
    return time.perf_counter() - start, answered


def run_generated(sizes: List[int], repeats: int) -> None:
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            modules = generate(os.path.join(tmp, "proj"), size)
            anchor = os.path.join(tmp, "proj", "train.py")
            cache = os.path.join(tmp, "cache")
            cold, warm_disk, memo = [], [], []
            for _ in range(repeats):
                ProjectIndex.clear()
                configure_summary_cache(None)
                seconds, answered = ask_all(anchor, modules)
                cold.append(seconds)
                memo.append(ask_all(anchor, modules)[0])
            configure_summary_cache(cache)
            ProjectIndex.clear()
            ask_all(anchor, modules)  # fills the disk cache
            for _ in range(repeats):
                ProjectIndex.clear()
                warm_disk.append(ask_all(anchor, modules)[0])
            configure_summary_cache(None)
            rows.append((size, min(cold), min(warm_disk), min(memo), answered))
    print(f"{'modules':>8} {'cold s':>8} {'ms/module':>10} {'disk-warm s':>12} {'ms/module':>10} "
          f"{'memoised s':>11} {'all right':>10}")
    for size, cold_s, warm_s, memo_s, answered in rows:
        print(f"{size:>8} {cold_s:>8.3f} {cold_s / size * 1e3:>10.2f} {warm_s:>12.3f} {warm_s / size * 1e3:>10.2f} "
              f"{memo_s:>11.4f} {answered:>6}/{size}")
    if len(rows) >= 2:
        (n0, c0, w0, _, _), (n1, c1, w1, _, _) = rows[0], rows[-1]
        print(f"{n1 / n0:.0f}x the modules: cold {c1 / c0:.1f}x the time, disk-warm {w1 / w0:.1f}x")


def run_tree(tree: str) -> None:
    import ast

    modules = []
    for folder, _, files in os.walk(tree):
        for name in files:
            if name.endswith(".py"):
                modules.append(os.path.join(folder, name))
    index = ProjectIndex.for_path(os.path.join(tree, "__probe__.py"))
    start = time.perf_counter()
    asked = found = 0
    for path in modules:
        module = os.path.relpath(path, index.root)[:-3].replace(os.sep, ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        try:
            tree_ = ast.parse(open(path, "rb").read())
        except (SyntaxError, ValueError):
            continue
        for node in tree_.body:
            if isinstance(node, ast.ClassDef):
                asked += 1
                found += index.module_class_kind(f"{module}.{node.name}") is not None
    seconds = time.perf_counter() - start
    print(f"{len(modules)} files, {asked} classes asked, {found} answered, {seconds:.2f} s "
          f"(includes this script's own ast.parse of every file)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, nargs="+", default=[100, 800])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", default=None)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.tree:
        run_tree(args.tree)
    else:
        run_generated(args.modules, args.repeats)


if __name__ == "__main__":
    main()
