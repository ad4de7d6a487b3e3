"""Label each TCL104 site of labels.tsv with its autograd context (issue 21), and split it between TCL104
(a graph may be live there) and TCL119 (graph-free). Standard library only; run from the repository root:

    python benchmarks/label_contexts.py --review      # the sites the rules below cannot decide, to read by hand
    python benchmarks/label_contexts.py --write       # rewrite labels.tsv with the contexts

The context is read from the site's source with ``ast``, independently of the linter: the receiver is a
``.grad`` buffer (free:grad); the write is an argument of ``nn.init.*`` (free:nn.init); the innermost
``with`` or decorator that sets the grad mode (free:no_grad, or live for ``enable_grad``); the enclosing
function: ``__init__`` and initialiser names (free:init), a function passed to ``.apply(`` in the file
(free:apply), weight loading/conversion names (free:load), ``step`` of an Optimizer subclass
(free:optimizer), ``forward`` (live:forward), hooks (live:hook). Everything else was read by hand: its
context was written down (``live:training``, ``live:helper``, ``live:test``, ``live:module`` or a
graph-free one with the evidence found by reading the callers): ``label_contexts_hand.tsv``.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import precision  # noqa: E402

TAG = re.compile(r"^\[(?:(?:live|free):[\w.]+|trap)\] ")
INIT = {"init", "initialize", "initialise", "initialization", "reinit"}
LOAD = {"load", "unload", "convert", "fuse", "unfuse", "reparameterize", "reparam", "deploy", "merge", "freeze",
        "unfreeze", "quantize", "dequantize", "resize", "resized", "setstate"}
NOT_INIT = {"hidden", "state", "states", "forward", "hook", "step", "backward", "train", "loss"}
NO_GRAD = ("no_grad", "inference_mode")



def _hand() -> Dict[Tuple[str, str, int], Tuple[str, str]]:
    """Sites no rule above decides, read by hand: (entry name, path, line) -> (context, why)."""
    out = {}
    for line in (HERE / "label_contexts_hand.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, path, number, context, why = line.split("\t")
            out[(name, path, int(number))] = (context, why)
    return out


HAND = _hand()


def _words(name: str) -> set:
    return {w.lower() for w in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name) if w}


def _grad_mode(expr: ast.expr) -> Optional[str]:
    call = expr if isinstance(expr, ast.Call) else None
    text = ast.unparse(call.func if call else expr)
    last = text.rsplit(".", 1)[-1]
    false = bool(call and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False)
    if last in NO_GRAD:
        return "live:helper" if last == "inference_mode" and false else "free:no_grad"
    if last == "enable_grad" or last == "set_grad_enabled" and call and not false:
        return "live:helper"
    if last == "set_grad_enabled" and false:
        return "free:no_grad"
    return None


def _chain(tree: ast.AST, line: int) -> List[ast.AST]:
    chain, node = [], tree
    while True:
        inner = [c for c in ast.iter_child_nodes(node)
                 if getattr(c, "lineno", 0) <= line <= getattr(c, "end_lineno", -1)]
        if not inner:
            return chain
        node = inner[0]
        chain.append(node)


def propose(tree: ast.AST, source: str, line: int) -> Tuple[str, str]:
    """(context, where) for the write on ``line``; context 'review' when no rule decides."""
    chain = _chain(tree, line)
    site = sorted((n for n in ast.walk(chain[0]) if isinstance(n, ast.Attribute) and n.attr == "data"
                   and n.lineno == line), key=lambda n: n.col_offset) if chain else []
    if site and isinstance(site[0].value, ast.Attribute) and site[0].value.attr in ("grad", "_grad"):
        return "free:grad", "a .grad buffer"
    for node in reversed(chain):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-2:-1] == ["init"] \
                and any(isinstance(a, ast.Attribute) and a.attr == "data" for a in node.args):
            return "free:nn.init", "an nn.init argument"
        if isinstance(node, ast.With):
            for item in node.items:
                mode = _grad_mode(item.context_expr)
                if mode:
                    return mode, f"with {ast.unparse(item.context_expr)}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                mode = _grad_mode(deco)
                if mode:
                    return mode, f"@{ast.unparse(deco)}"
            words = _words(node.name)
            if node.name == "__init__":
                return "free:init", "__init__"
            if node.name in ("forward", "__call__"):
                return "live:forward", node.name
            if "hook" in words:
                return "live:hook", node.name
            if words & NOT_INIT:
                return "review", node.name
            if words & INIT or "reset" in words and any(w.startswith("param") for w in words):
                return "free:init", node.name
            if words & LOAD:
                return "free:load", node.name
            if re.search(r"\.(?:named_)?apply\(\s*(?:functools\.)?(?:partial\(\s*)?(?:self\.)?" + node.name + r"\b",
                         source):
                return "free:apply", f"{node.name} passed to apply"
            owner = chain[chain.index(node) - 1] if chain.index(node) else None
            if node.name == "step" and isinstance(owner, ast.ClassDef) \
                    and any("Optimizer" in ast.unparse(b) for b in owner.bases):
                return "free:optimizer", "Optimizer.step"
            return "review", node.name
    return "review", "module level"


def contexts(dest: Path, labels: List[precision.Label]) -> Dict[Tuple[str, str, int], Tuple[str, str]]:
    out, trees = {}, {}
    for lab in labels:
        if lab.code != "TCL104":
            continue
        path = dest / lab.entry / lab.path
        if path not in trees:
            source = path.read_text(encoding="utf-8", errors="replace")
            trees[path] = (ast.parse(source), source)
        tree, source = trees[path]
        key = (lab.entry, lab.path, lab.line)
        hand = HAND.get((lab.entry.rsplit("-", 1)[0], lab.path, lab.line))
        out[key] = hand or propose(tree, source, lab.line)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--review", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    dest = corpus.default_dest()
    labels = precision.read_labels()
    found = contexts(dest, labels)
    labels_by_key = {(lab.entry, lab.path, lab.line): "TP" if lab.reason.startswith(("[live:", "[free:")) else lab.label
                     for lab in labels if lab.code == "TCL104"}
    if args.review:
        for (entry, path, line), (context, where) in sorted(found.items()):
            if context == "review" and labels_by_key[(entry, path, line)] == "TP":
                print(f"{entry}\t{path}\t{line}\t{where}\t{precision.source_line(dest, entry, path, line)[:90]}")
    if args.write:
        write(labels, found)
    return 0


def write(labels: List[precision.Label], found: Dict[Tuple[str, str, int], Tuple[str, str]]) -> None:
    """Each TCL104 row in place (every other line is kept as it is): a live TP stays TCL104 TP with a TCL119 TN
    beside it; a graph-free TP becomes TCL104 TN + TCL119 TP; TN/FP rows (traps) are kept and copied for TCL119.
    The reason starts with the context tag. Rerunning it rewrites the TCL104 rows and their TCL119 twins."""
    by_key = {(lab.entry, lab.path, lab.line, lab.code): lab for lab in labels}
    out = []
    for line in precision.LABELS.read_text(encoding="utf-8").splitlines():
        row = line.split("\t")
        if line.startswith("#") or len(row) < 6 or row[4] not in ("TCL104", "TCL119"):
            out.append(line)
            continue
        if row[4] == "TCL119":
            continue  # made again from its TCL104 row
        lab = by_key[(corpus.entry_name(row[0], row[1]), row[2], int(row[3]), "TCL104")]
        if lab.reason.startswith(("[live:", "[free:")):  # written by an earlier run: a true site either way
            lab = precision.Label(lab.package, lab.version, lab.path, lab.line, lab.code, "TP", lab.reason)
        context, _ = found[(lab.entry, lab.path, lab.line)]
        if context == "review" and lab.label == "TP":
            raise SystemExit(f"undecided: {lab.entry} {lab.path}:{lab.line}")
        tag = "trap" if lab.label != "TP" else context  # not a tensor: no autograd context to speak of
        reason = f"[{tag}] {TAG.sub('', lab.reason)}"
        live = context.startswith("live:")
        if lab.label == "TP":
            out.append(_row(lab, "TCL104", "TP" if live else "TN", reason))
            out.append(_row(lab, "TCL119", "TN" if live else "TP", reason))
        else:
            out.append(_row(lab, "TCL104", lab.label, reason))
            out.append(_row(lab, "TCL119", lab.label, reason))
    precision.LABELS.write_text("\n".join(out) + "\n", encoding="utf-8")


def _row(lab: precision.Label, code: str, label: str, reason: str) -> str:
    return "\t".join([lab.package, lab.version, lab.path, str(lab.line), code, label, reason])


if __name__ == "__main__":
    sys.exit(main())
