"""TCL120's shape token, from CPython's tree (shapes.py holds the others): an in-place call on a subscript.

``stmt_index_write``: a statement that is an in-place call (a chain of them) on a subscript, maybe through
``.data`` or ``.detach()`` (``h[idx].zero_()``, ``h[idx].data.add_(1).mul_(2)``, ``h[idx].detach().zero_()``,
``h[idx][0].zero_()``), or an in-place function called on one (``torch.zero_(h[idx])``,
``nn.init.normal_(w[idx])``: only where the file imports the name at its head, or has a star import), one of
whose indices is not plainly basic. Slices, ints, ``None``, ``...`` and tuples of them give a view whatever the names hold, so
``xs[0].add_(1)`` (common) cannot hold a report; anything else may be advanced indexing (the rule decides).
"""

from __future__ import annotations

import ast
from typing import Optional

from .arguments import UNLESS
from ..codes import is_in_place

_BASIC_CONSTANTS = (int, type(None), type(Ellipsis))


def indexed_write(node: ast.AST, add) -> None:
    """Add ``stmt_index_write`` when the expression statement ``node`` is such a call. The function form counts
    only where the function may be torch's: the rule asks for its qualified name, which only an import gives
    (imports.ImportMap: the name at the head of the call, or a star import), so the token is held under
    arguments.UNLESS on the file importing that name or ``*`` (``flat.add_(idx[d])`` on a local tensor reads
    ``idx[d]``, it writes ``flat``)."""
    if node.__class__ is not ast.Call:
        return
    func = node.func  # type: ignore[attr-defined]
    if func.__class__ is ast.Name:
        if is_in_place(func.id) and node.args and _advanced(node.args[0]):  # type: ignore[attr-defined]
            add(_IMPORTED_AS_TORCH % func.id)  # zeros_(w[idx]), imported from torch.nn.init
        return
    if func.__class__ is not ast.Attribute or not is_in_place(func.attr):
        return
    head = _head(func.value)
    if head is not None and node.args and _advanced(node.args[0]):  # type: ignore[attr-defined]
        add(_IMPORTED_AS_TORCH % head)  # torch.zero_(h[idx]), nn.init.normal_(w[idx])
    while node.__class__ is ast.Call and node.func.__class__ is ast.Attribute \
            and is_in_place(node.func.attr):  # type: ignore[attr-defined]
        node = node.func.value  # type: ignore[attr-defined]
    if _advanced(node):
        add("stmt_index_write")  # h[idx].zero_()


#: The function form's token: held unless the file imports the name at the call's head or ``*`` (structure.resolved).
_IMPORTED_AS_TORCH = UNLESS + "i%s,i*|stmt_index_write"


def _head(expr: ast.AST) -> Optional[str]:
    """``a`` of a dotted chain ``a.b.c``; None for anything else (a call's result has no qualified name)."""
    while expr.__class__ is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if expr.__class__ is ast.Name else None  # type: ignore[attr-defined]


def _advanced(node: ast.AST) -> bool:
    """A subscript (maybe under ``.data``/``.detach()``) one of whose indices is not plainly basic."""
    node = _still_the_copy(node)
    if node.__class__ is not ast.Subscript:
        return False
    while node.__class__ is ast.Subscript:
        if not _basic(node.slice):  # type: ignore[attr-defined]
            return True
        node = _still_the_copy(node.value)  # type: ignore[attr-defined]
    return False


def _still_the_copy(node: ast.AST) -> ast.AST:
    """Below any ``.data`` and ``.detach()``: a subscript's copy seen through them is still the copy."""
    while True:
        if node.__class__ is ast.Attribute and node.attr == "data":  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif node.__class__ is ast.Call and node.func.__class__ is ast.Attribute \
                and node.func.attr == "detach" and not node.args:  # type: ignore[attr-defined]
            node = node.func.value  # type: ignore[attr-defined]
        else:
            return node


def _basic(index: ast.AST) -> bool:
    """A slice, an int literal (``-1`` too; not ``True``, which is a mask), ``None``, ``...``, or a tuple of them."""
    if index.__class__ is ast.Tuple:
        return all(_basic(element) for element in index.elts)  # type: ignore[attr-defined]
    if index.__class__ is ast.UnaryOp and index.op.__class__ is ast.USub:  # type: ignore[attr-defined]
        index = index.operand  # type: ignore[attr-defined]
    return index.__class__ is ast.Slice \
        or index.__class__ is ast.Constant and type(index.value) in _BASIC_CONSTANTS  # type: ignore[attr-defined]
