"""Candidate sites for every rule, found WITHOUT the linter (stdlib ``ast`` only), for labelling and recall.

    python benchmarks/candidates.py [--dest DIR] [--split dev|held-out|all] [--entries E ...] [--codes TCL109 ...]

Each pattern is deliberately wider than its rule: it finds the syntactic shape only (``torch.tensor(<not a
literal>)``, any write through ``.data``, any ``deepcopy(``, any ``= X.state_dict()``, any ``ACC += NAME`` in a
loop that calls ``.backward``, any conversion method as a statement, any ``[x] * n``...). A person then reads each site and labels it TP (the rule must report it) or
TN (a near-miss that must stay silent). Output rows: entry, path, line, code, source line.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402

Site = Tuple[int, str]  # (line, code)
LIKE = {"empty_like", "zeros_like", "ones_like"}
CONVERSIONS = set("to cuda cpu float half double bfloat16 long int bool contiguous detach clone".split())
CASTS = set("to cuda cpu float half double long int bool bfloat16 byte char short".split())
CREATIONS = set("zeros ones full empty eye arange linspace tensor zeros_like ones_like full_like empty_like rand randn "
                "randint randperm rand_like randn_like randint_like normal from_numpy as_tensor".split())


def _name(node: ast.AST) -> str:
    """Dotted text of a name/attribute chain (``torch.nn.init.normal_``), else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name(node.value)
        return f"{inner}.{node.attr}" if inner else f"?.{node.attr}"
    return ""


def _literal(node: ast.AST) -> bool:
    """A literal number/string/bool/None, possibly negated."""
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    return isinstance(node, ast.Constant)


def _data_receiver(node: ast.AST) -> bool:
    """``X.data`` or ``X.data[...]``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "data"


def _calls_backward(nodes: Sequence[ast.AST]) -> bool:
    for stmt in nodes:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "backward":
                return True
    return False


def _call_sites(node: ast.Call) -> Iterator[Site]:
    func = _name(node.func)
    last = func.rsplit(".", 1)[-1]
    args = node.args
    if func in ("torch.tensor", "tensor", "torch.as_tensor") and args:
        first = args[0]
        if isinstance(first, (ast.List, ast.Tuple)):
            if any(not _literal(e) for e in first.elts):
                yield node.lineno, "TCL107"
        elif func != "torch.as_tensor" and not _literal(first) and not isinstance(first, (ast.ListComp, ast.Dict)):
            yield node.lineno, "TCL101"
    if last == "new_tensor" and args and not _literal(args[0]) and not isinstance(args[0], (ast.List, ast.Tuple)):
        yield node.lineno, "TCL102"
    if last == "detach" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        inner = _name(node.func.value.func)
        if inner.endswith(".clone") or inner == "clone":
            yield node.lineno, "TCL103"
    if isinstance(node.func, ast.Attribute) and last.endswith("_") and not last.endswith("__"):
        if _data_receiver(node.func.value):
            yield node.lineno, "TCL104"
        elif args and _data_receiver(args[0]) and ("init" in func or func.startswith("torch.")):
            yield node.lineno, "TCL104"
    if last == "deepcopy":
        yield node.lineno, "TCL105"
    if last == "copy_" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        if _name(node.func.value.func).rsplit(".", 1)[-1] in LIKE:
            yield node.lineno, "TCL106"
    if func in ("copy.copy", "copy") and len(args) == 1 and not node.keywords:
        yield node.lineno, "TCL108"
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        inner = _name(node.func.value.func).rsplit(".", 1)[-1]
        if last in CASTS and inner in CREATIONS:  # random constructors and from_numpy too: the traps
            yield node.lineno, "TCL116"
        if last == "detach" and inner in CASTS:
            yield node.lineno, "TCL117"
        if last in CASTS and inner == "clone":
            yield node.lineno, "TCL118"


def _is_state_dict_value(node: ast.AST) -> bool:
    """``R.state_dict()``, ``R.state_dict().copy()``, ``dict(R.state_dict())``."""
    if isinstance(node, ast.Call):
        func = _name(node.func)
        if func.endswith(".state_dict") or func == "state_dict":
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy":
            return _is_state_dict_value(node.func.value)
        if func in ("dict", "OrderedDict", "collections.OrderedDict") and node.args:
            return _is_state_dict_value(node.args[0])
    return False


def _loop_sites(loop: ast.AST) -> Iterator[Site]:
    """TCL110 shapes in a loop body that calls ``.backward``: ``A += N``, ``A = A + N``, ``A.append(N)``."""
    body = list(getattr(loop, "body", []))
    if not _calls_backward(body):
        return
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.Add) and isinstance(sub.value, ast.Name):
                yield sub.lineno, "TCL110"
            elif (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.value, ast.BinOp)
                  and isinstance(sub.value.op, ast.Add) and isinstance(sub.value.right, ast.Name)
                  and _name(sub.targets[0]) and _name(sub.targets[0]) == _name(sub.value.left)):
                yield sub.lineno, "TCL110"
            elif (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "append"
                  and len(sub.args) == 1 and isinstance(sub.args[0], ast.Name)):
                yield sub.lineno, "TCL110"


def sites(source: str) -> List[Site]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out.update(_call_sites(node))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_data_receiver(t) for t in targets):
                out.add((node.lineno, "TCL104"))
            if node.value is not None and _is_state_dict_value(node.value):
                out.add((node.lineno, "TCL109"))
        elif isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            out.update(_loop_sites(node))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in CONVERSIONS:
            out.add((node.lineno, "TCL111"))  # a conversion as a statement, of anything
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and any(
                isinstance(side, ast.List) and len(side.elts) == 1 and not _literal(side.elts[0])
                for side in (node.left, node.right)):
            out.add((node.lineno, "TCL112"))  # `[x] * n` / `n * [x]` of anything but a literal
    return sorted(out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None)
    ap.add_argument("--entries", nargs="*", default=None, help="corpus entries (directory names); default all")
    ap.add_argument("--codes", nargs="*", default=None)
    corpus.add_split_argument(ap)
    args = ap.parse_args(argv)
    dest = (args.dest or corpus.default_dest()).expanduser()
    present = corpus.present(dest, args.split)
    for entry in sorted(args.entries or present):
        root = present.get(entry)
        if root is None:
            print(f"{entry}: not in the corpus", file=sys.stderr)
            continue
        for file in sorted(root.rglob("*.py")):
            text = file.read_text(errors="replace")
            lines = text.splitlines()
            for line, code in sites(text):
                if args.codes and code not in args.codes:
                    continue
                src = lines[line - 1].strip() if line <= len(lines) else ""
                print("\t".join([entry, file.relative_to(root).as_posix(), str(line), code, src[:120]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
