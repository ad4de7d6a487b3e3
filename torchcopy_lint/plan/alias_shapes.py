"""The shape tokens of TCL112-TCL115's aliases and of the writes that join them (shapes.py's module docstring says
what each token is): the names whose storage an alias shares or a write reaches, as semantic/storage.py follows
them (views, subscripts and sharing calls looked through: a superset)."""

from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

from ..codes import HISTORY_NAME, LEGACY_CONSTRUCTORS, SHARING_NAMES, SNAPSHOT_NAME, VIEW_ATTRIBUTES, VIEW_METHODS


def last_part(expr: ast.AST) -> Optional[str]:
    """The last name of a dotted chain (``b`` of ``self.a.b``); None for anything else."""
    key = _dotted(expr)
    return key.rpartition(".")[2] if key is not None else None


def _plain_reference(value: ast.AST) -> bool:
    """``w``, ``self.w``, ``w.data`` or ``w.detach()`` (TCL114's snapshot values)."""
    if value.__class__ is ast.Call and not value.args and not value.keywords \
            and value.func.__class__ is ast.Attribute and value.func.attr == "detach":  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    return last_part(value) is not None


def assign_shapes(node: ast.Assign, add) -> None:
    targets = node.targets
    for target in targets:
        if target.__class__ is ast.Subscript:
            add("write")  # x[i] = v
            add_written(target, add)
    if len(targets) != 1:
        return
    target, value = targets[0], node.value
    if target.__class__ is ast.Subscript:
        last = last_part(target.value)  # type: ignore[attr-defined]
        if last is not None and (SNAPSHOT_NAME.search(last) or HISTORY_NAME.search(last)):
            add_kept(value, add)  # log[k] = x
        return
    key = _dotted(target)
    if key is None:
        return
    if SNAPSHOT_NAME.search(key.rpartition(".")[2]) and _plain_reference(value):
        add_kept(value, add)  # best = w
    if value.__class__ is ast.BinOp and value.op.__class__ is ast.Mult \
            and (_one_element(value.left) or _one_element(value.right)):  # type: ignore[attr-defined]
        add("listmul:" + key)  # xs = [t] * n
    root, hows = _alias_root(value)  # y = x.detach(), y = x.data[0], a = t.numpy(), t = from_numpy(a)
    if "detach" in hows or "data" in hows:
        add("detach_alias:" + key)
    if "numpy" in hows or _SHARED in hows:
        add("bridge:" + key)
        source = _dotted(root)
        if source is not None:
            add("bridge:" + source)


def _may_share(func: ast.AST) -> bool:
    """``torch.from_numpy`` / ``as_tensor`` / ``np.asarray``, or a plain name that may be one imported under
    another name."""
    return func.__class__ is ast.Name or func.__class__ is ast.Attribute \
        and (func.attr in SHARING_NAMES or func.attr in LEGACY_CONSTRUCTORS)  # type: ignore[attr-defined]


def _dotted(expr: ast.AST) -> Optional[str]:
    """``a.b.c`` for a chain of names; None for anything else."""
    parts = []
    while expr.__class__ is ast.Attribute:
        parts.append(expr.attr)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if expr.__class__ is not ast.Name:
        return None
    parts.append(expr.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


_SHARED = "(a sharing call)"


def _alias_root(expr: ast.AST) -> Tuple[ast.AST, Set[str]]:
    """What ``expr`` shares storage with, as semantic/storage.py's ``alias_of`` follows it, with every
    subscript and possible sharing call looked through (a superset), and the views and attributes passed on
    the way (``_SHARED`` for a sharing call)."""
    hows: Set[str] = set()
    while True:
        cls = expr.__class__
        if cls is ast.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif cls is ast.Attribute and expr.attr in VIEW_ATTRIBUTES:  # type: ignore[attr-defined]
            hows.add(expr.attr)  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        elif cls is ast.Call and expr.func.__class__ is ast.Attribute \
                and expr.func.attr in VIEW_METHODS:  # type: ignore[attr-defined]
            hows.add(expr.func.attr)  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        elif cls is ast.Call and len(expr.args) == 1 and _may_share(expr.func):  # type: ignore[attr-defined]
            hows.add(_SHARED)
            expr = expr.args[0]  # type: ignore[attr-defined]
        else:
            return expr, hows


def _storage_key(expr: ast.AST) -> Optional[str]:
    """The name whose storage ``expr`` is, as semantic/storage.py finds it (``w`` for ``w.data[0]``,
    ``w.detach().view(-1)``, ``torch.from_numpy(w)``); None when it is not a chain of names."""
    return _dotted(_alias_root(expr)[0])


def add_written(expr: ast.AST, add) -> None:
    key = _storage_key(expr)
    if key is not None:
        add("written:" + key)


def add_kept(value: ast.AST, add) -> None:
    """TCL114: ``value`` is stored with intent; its storage must be written for a hazard."""
    key = _storage_key(value)
    if key is not None:
        add("kept:" + key)


def _one_element(side: ast.AST) -> bool:
    return side.__class__ is ast.List and len(side.elts) == 1 \
        and side.elts[0].__class__ not in (ast.Constant, ast.Starred)  # type: ignore[attr-defined]
