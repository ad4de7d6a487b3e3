"""Generate ``torch_table.json``, what torch's own annotations say it returns, from torch's files.

Run it with the torch to describe installed (``python -m torchcopy_lint.knowledge.generate``): it finds
the package directory without importing torch and reads, with the stdlib ``ast`` only,

- ``torch/_C/_VariableFunctions.pyi`` and ``torch/functional.py``: the ``torch.X`` functions;
- ``torch/_C/__init__.pyi`` (class ``TensorBase``): the tensor methods and attributes;
- ``torch/nn/functional.pyi`` (and the names it re-exports from ``torch`` and ``torch/_C/_nn.pyi``);
- ``torch/return_types.pyi``: the named tuples (``max``, ``topk``, ``sort``...) and their fields;
- ``torch/nn/modules/*.py``: each layer class's ``forward`` annotations (inherited ones included).

A return is described by a code: ``T`` tensor, ``L`` list or tuple of tensors of unknown length, ``N``
number, ``X`` something else known not to be a tensor, ``M`` mapping, ``?`` unknown (``Any``, a
``Union``/``Optional`` of different things, a class not known here), ``["()", d, ...]`` a tuple of
known length, ``["nt", name, [field, ...], [d, ...]]`` a named tuple. A name whose overloads all agree is
described by that code alone; otherwise by ``{"o": [[params, code], ...]}``, each overload's parameters
written ``name:kind`` (kind ``T`` tensor, ``N`` number, ``X`` known not to be either, ``B1``/``B0``
``Literal[True]``/``[False]``, ``O`` anything else), ``=`` after one with a default, ``/`` and ``*`` as in a ``def``, ``*name``/``**name`` for varargs.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

FORMAT = 1
TENSOR_NAMES = frozenset(["Tensor", "TensorBase", "Parameter"])
NUMBER_NAMES = frozenset("_int _float int float SymInt SymFloat Number _complex complex _number".split())
OTHER_NAMES = frozenset(
    """_bool bool str None _dtype dtype _device device Device DeviceLikeType _layout layout Size _size _qscheme
    qscheme Storage UntypedStorage TypedStorage ndarray EllipsisType Generator memory_format _dispatchkey
    DispatchKey Stream Event SymBool bytes _symsize Callable type PackedSequence""".split()
)
LIST_NAMES = frozenset("list List Sequence MutableSequence".split())
TUPLE_NAMES = frozenset(["tuple", "Tuple"])
MAPPING_NAMES = frozenset("dict Dict Mapping MutableMapping OrderedDict".split())
UNION_NAMES = frozenset(["Union", "Optional"])


def _name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


class Describer:
    """Codes for annotations; ``named`` holds the named tuples of ``return_types.pyi``."""

    def __init__(self, named: Dict[str, list], self_code: str = "?") -> None:
        self.named = named
        self.self_code = self_code

    def returns(self, node: Optional[ast.AST]) -> Any:
        if node is None:
            return "?"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return "?"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _agree([self.returns(n) for n in _union_members(node)])
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "return_types" and node.attr in self.named:
            return self.named[node.attr]
        name = _name(node)
        if name == "Self":
            return self.self_code
        if name in TENSOR_NAMES:
            return "T"
        if name in NUMBER_NAMES:
            return "N"
        if name in OTHER_NAMES:
            return "X"
        if name in MAPPING_NAMES:
            return "M"
        return "?"

    def _subscript(self, node: ast.Subscript) -> Any:
        outer = _name(node.value)
        inner = node.slice
        items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if outer in UNION_NAMES:
            return _agree([self.returns(n) for n in items] + (["X"] if outer == "Optional" else []))
        if outer in TUPLE_NAMES:
            if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
                return _homogeneous(self.returns(items[0]))
            return ["()"] + [self.returns(n) for n in items]
        if outer in LIST_NAMES:
            return _homogeneous(self.returns(items[0]))
        if outer in MAPPING_NAMES:
            return "M"
        if outer in ("Callable", "type", "Literal"):
            return "X" if outer != "Literal" else "?"
        return "?"

    def param(self, node: Optional[ast.AST]) -> str:
        if node is None:
            return "O"
        if isinstance(node, ast.Subscript) and _name(node.value) == "Literal":
            value = node.slice
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                return "B1" if value.value else "B0"
            return "O"
        members = _union_members(node) if isinstance(node, ast.BinOp) else \
            list(node.slice.elts) if isinstance(node, ast.Subscript) and _name(node.value) == "Union" \
            and isinstance(node.slice, ast.Tuple) else [node.slice] \
            if isinstance(node, ast.Subscript) and _name(node.value) == "Optional" else [node]
        codes = {json.dumps(self.returns(n)) for n in members if _name(n) != "None"}
        if codes == {'"T"'}:
            return "T"
        if codes == {'"N"'}:
            return "N"
        if codes == {'"X"'}:
            return "X"
        return "O"


def _union_members(node: ast.AST) -> List[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]


def _agree(codes: List[Any]) -> Any:
    first = codes[0] if codes else "?"
    return first if all(c == first for c in codes) else "?"


def _homogeneous(code: Any) -> str:
    if code == "T":
        return "L"
    return "X" if code in ("N", "X") else "?"


def signature(fn: ast.FunctionDef, describer: Describer, skip_self: bool) -> List[str]:
    a = fn.args
    out: List[str] = []
    positional = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        if i == 0 and skip_self:
            continue
        out.append(f"{arg.arg}:{describer.param(arg.annotation)}" + ("=" if default is not None else ""))
        if a.posonlyargs and i == len(a.posonlyargs) - 1:
            out.append("/")
    if a.vararg is not None:
        out.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        out.append("*")
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append(f"{arg.arg}:{describer.param(arg.annotation)}" + ("=" if default is not None else ""))
    if a.kwarg is not None:
        out.append("**" + a.kwarg.arg)
    return out


def describe_defs(defs: List[ast.FunctionDef], describer: Describer, skip_self: bool) -> Any:
    """One code when every overload agrees, else the overloads with their parameters."""
    overloads = [d for d in defs if any(_name(x) == "overload" for x in d.decorator_list)]
    defs = overloads or defs[-1:]
    codes = [describer.returns(d.returns) for d in defs]
    if all(c == codes[0] for c in codes):
        return codes[0]
    return {"o": [[signature(d, describer, skip_self), c] for d, c in zip(defs, codes)]}


def _parse(path: str) -> ast.Module:
    with open(path, "rb") as f:
        return ast.parse(f.read(), filename=path)


def _defs(body: List[ast.stmt], public_only: bool = True) -> Dict[str, List[ast.FunctionDef]]:
    found: Dict[str, List[ast.FunctionDef]] = {}
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                (not public_only or not stmt.name.startswith("_") or stmt.name.startswith("__")):
            found.setdefault(stmt.name, []).append(stmt)  # type: ignore[arg-type]
    return found


def named_tuples(tree: ast.Module) -> Dict[str, list]:
    base = Describer({})
    out: Dict[str, list] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            fields = [(s.name, base.returns(s.returns)) for s in stmt.body if isinstance(s, ast.FunctionDef)
                      and any(_name(d) == "property" for d in s.decorator_list)]
            if fields:
                out[stmt.name] = ["nt", "torch.return_types." + stmt.name, [f for f, _ in fields],
                                  [c for _, c in fields]]
    return out


def module_forwards(directory: str, describer: Describer) -> Dict[str, Any]:
    """Each public ``nn.Module`` class of ``torch/nn/modules`` -> what its ``forward`` returns."""
    classes: Dict[str, Tuple[List[str], List[ast.FunctionDef]]] = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            for stmt in _parse(os.path.join(directory, name)).body:
                if isinstance(stmt, ast.ClassDef) and stmt.name not in classes:
                    bases = [n for n in (_name(b) for b in stmt.bases) if n]
                    forwards = _defs(stmt.body, public_only=False).get("forward", [])
                    classes[stmt.name] = (bases, forwards)

    def forward_of(name: str, seen: frozenset) -> Optional[Any]:
        if name == "Module":
            return "?"
        entry = classes.get(name)
        if entry is None or name in seen:
            return None
        bases, forwards = entry
        if forwards:
            return describe_defs(forwards, describer, skip_self=True) if any(_is_module(b) for b in bases) else None
        found = [forward_of(b, seen | {name}) for b in bases]
        return next((f for f in found if f is not None), None)

    def _is_module(name: str, seen: frozenset = frozenset()) -> bool:
        return name == "Module" or name in classes and name not in seen and \
            any(_is_module(b, seen | {name}) for b in classes[name][0])

    out = {}
    for name in classes:
        if not name.startswith("_") and _is_module(name):
            found = forward_of(name, frozenset())
            out[name] = found if found is not None else "?"
    return out


def torch_directory() -> str:
    spec = importlib.util.find_spec("torch")  # locates the package; does not import it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed in this environment")
    return list(spec.submodule_search_locations)[0]


def torch_version(directory: str) -> str:
    for stmt in _parse(os.path.join(directory, "version.py")).body:
        if isinstance(stmt, ast.Assign) and any(_name(t) == "__version__" for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant):
            return str(stmt.value.value)
    return "unknown"


def generate(directory: str) -> Dict[str, Any]:
    join = os.path.join
    named = named_tuples(_parse(join(directory, "return_types.pyi")))
    plain = Describer(named)
    functions = {n: describe_defs(d, plain, False)
                 for n, d in _defs(_parse(join(directory, "_C", "_VariableFunctions.pyi")).body).items()}
    for n, d in _defs(_parse(join(directory, "functional.py")).body).items():
        if any(x.returns is not None for x in d):
            functions[n] = describe_defs(d, plain, False)
    tensor_base = next(s for s in _parse(join(directory, "_C", "__init__.pyi")).body
                       if isinstance(s, ast.ClassDef) and s.name == "TensorBase")
    methods = {n: describe_defs(d, Describer(named, "T"), True) for n, d in _defs(tensor_base.body).items()}
    attributes = {s.target.id: Describer(named, "T").returns(s.annotation) for s in tensor_base.body
                  if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not s.target.id.startswith("_")}
    nn = _defs(_parse(join(directory, "_C", "_nn.pyi")).body)
    tree = _parse(join(directory, "nn", "functional.pyi"))
    functional = {n: describe_defs(d, plain, False) for n, d in _defs(tree.body).items()}
    for stmt in tree.body:  # from torch import (conv1d as conv1d, ...), from torch._C._nn import (...)
        if isinstance(stmt, ast.ImportFrom) and stmt.module in ("torch", "torch._C._nn"):
            for alias in stmt.names:
                local = alias.asname or alias.name
                if stmt.module == "torch" and alias.name in functions:
                    functional[local] = functions[alias.name]
                elif stmt.module == "torch._C._nn" and alias.name in nn:
                    functional[local] = describe_defs(nn[alias.name], plain, False)
    modules = module_forwards(join(directory, "nn", "modules"), plain)
    return {"format": FORMAT, "torch_version": torch_version(directory), "functions": functions,
            "tensor_methods": methods, "tensor_attributes": attributes, "functional": functional,
            "module_forward": modules}


def dumps(table: Dict[str, Any]) -> str:
    """Deterministic text, one entry a line (readable diffs)."""
    lines = ["{"]
    scalars = [k for k in sorted(table) if not isinstance(table[k], dict)]
    sections = [k for k in sorted(table) if isinstance(table[k], dict)]
    for k in scalars:
        lines.append(f"{json.dumps(k)}: {json.dumps(table[k])},")
    for i, k in enumerate(sections):
        lines.append(f"{json.dumps(k)}: {{")
        entries = sorted(table[k].items())
        for j, (name, code) in enumerate(entries):
            sep = "," if j < len(entries) - 1 else ""
            lines.append(f"{json.dumps(name)}: {json.dumps(code, separators=(',', ':'))}{sep}")
        lines.append("}" + ("," if i < len(sections) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch-dir", help="torch's package directory (default: the installed torch's)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_table.json"))
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    text = dumps(generate(args.torch_dir or torch_directory()))
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            same = f.read() == text
        print("up to date" if same else f"{args.out} differs from what this torch generates")
        return 0 if same else 1
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
