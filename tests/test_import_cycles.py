"""No import circle in the package: every import (module level, in a function, under
``TYPE_CHECKING``) is read with ``ast`` and the import graph must have no cycle; nor may the graph
of its parts (each subpackage, each module directly in the package: ``package_graph``), so that
imports between the pipeline's stages run one way (README.md's "Layout").

An edge ``a -> b`` is any import in ``a`` that names the package module ``b``: ``import p.b``,
``from p import b`` / ``from . import b`` (``b`` a submodule), ``from p.b import name`` /
``from .b import name``. A submodule's implicit import of its parent package is not an edge (every
package's ``__init__`` would otherwise form a cycle with any submodule it re-exports); an explicit
``from .. import __version__`` is one, to the package ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

from _support import ROOT

PACKAGE = ROOT / "torchcopy_lint"

Graph = Dict[str, Dict[str, List[int]]]  # module -> imported module -> lines


def _modules(package: Path) -> Dict[str, Tuple[Path, bool]]:
    """Dotted name -> (file, is a package ``__init__``) for every module under ``package``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    if keep <= 0:
        return ""
    return ".".join(parts[:keep] + ([node.module] if node.module else []))


def import_graph(package: Path) -> Graph:
    """The package's import graph, every import statement anywhere in each module counted."""
    modules = _modules(package)
    graph: Graph = {name: {} for name in modules}

    def add(source: str, target: str, line: int) -> None:
        while target and target not in modules:
            target = target.rpartition(".")[0]  # ``import p.m.name``-style: the deepest module named
        if target:
            graph[source].setdefault(target, []).append(line)

    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == package.name:
                        add(name, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = _base(name, is_package, node)
                if base.split(".")[0] != package.name:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(name, sub if sub in modules else base, node.lineno)
    return graph


def cycles(graph: Graph) -> List[List[str]]:
    """The strongly connected components with a cycle (more than one module, or a self-import)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


def package_graph(graph: Graph) -> Graph:
    """``graph`` with each part of the package as one node: a subpackage (all modules under it) or a
    module directly in the package. An edge between two parts keeps the imports that make it."""
    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    parts: Graph = {part(name): {} for name in graph}
    for source, targets in graph.items():
        for target in targets:
            if part(source) != part(target):
                parts[part(source)].setdefault(part(target), []).append(f"{source} -> {target}")
    return parts


def _describe(graph: Graph, component: List[str]) -> str:
    inside = set(component)
    edges = [f"{a} -> {b} (line {', '.join(map(str, sorted(set(lines))))})"
             for a in component for b, lines in sorted(graph[a].items()) if b in inside]
    return "\n  ".join(edges)


def test_package_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and sum(len(t) for t in graph.values()) > 100  # the whole package was read
    found = cycles(graph)
    assert not found, "import cycles:\n  " + "\n\n  ".join(_describe(graph, c) for c in found)


def test_imports_between_the_packages_parts_run_one_way():
    parts = package_graph(import_graph(PACKAGE))
    assert len(parts) > 15 and sum(len(t) for t in parts.values()) > 50  # subpackages and modules were read
    found = cycles(parts)
    detail = ["\n  ".join(f"{a} -> {b}: " + "; ".join(sorted(set(parts[a][b])))
                          for a in c for b in sorted(parts[a]) if b in c) for c in found]
    assert not found, "parts of the package that import each other:\n  " + "\n\n  ".join(detail)


def _write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_finds_a_cycle_through_a_function_level_import(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/a.py": "from .b import f\n",
        "pkg/sub/b.py": "def f():\n    from . import c\n",
        "pkg/sub/c.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.sub.a import g\n",
        "pkg/d.py": "from .sub import a\nfrom . import e\n",
        "pkg/e.py": "import pkg.sub.a\n",
    })
    graph = import_graph(package)
    assert graph["pkg.sub.b"] == {"pkg.sub.c": [2]}
    assert graph["pkg.d"] == {"pkg.sub.a": [1], "pkg.e": [2]}
    assert cycles(graph) == [["pkg.sub.a", "pkg.sub.b", "pkg.sub.c"]]


def test_parent_package_and_self_imports(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "from .a import x\n__version__ = '1'\n",
        "pkg/a.py": "x = 1\n",
        "pkg/b.py": "from . import __version__\n",
        "pkg/c.py": "from .c import y\ny = 1\n",
    })
    graph = import_graph(package)
    assert graph["pkg.b"] == {"pkg": [1]}
    assert graph["pkg.a"] == {}  # the implicit import of its parent package is no edge
    assert cycles(graph) == [["pkg.c"]]


def test_parts_that_import_each_other_without_a_module_cycle(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "from ..high import c\n",
        "pkg/low/b.py": "",
        "pkg/high/__init__.py": "",
        "pkg/high/c.py": "",
        "pkg/high/d.py": "from ..low import b\nfrom .. import top\n",
        "pkg/top.py": "",
    })
    graph = import_graph(package)
    assert cycles(graph) == []  # no module imports itself through others
    parts = package_graph(graph)
    assert parts["pkg.low"] == {"pkg.high": ["pkg.low.a -> pkg.high.c"]}
    assert parts["pkg.high"] == {"pkg.low": ["pkg.high.d -> pkg.low.b"], "pkg.top": ["pkg.high.d -> pkg.top"]}
    assert cycles(parts) == [["pkg.high", "pkg.low"]]
