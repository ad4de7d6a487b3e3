"""TCL120's shape token, from CPython's tree (shapes.py holds the others): an in-place call on a subscript.

``stmt_index_write``: a statement that is an in-place call (a chain of them) on a subscript, maybe through
``.data`` (``h[idx].zero_()``, ``h[idx].data.add_(1).mul_(2)``, ``h[idx][0].zero_()``), one of whose indices is not
plainly basic. Slices, ints, ``None``, ``...`` and tuples of them give a view whatever the names hold, so
``xs[0].add_(1)`` (common) cannot hold a report; anything else may be advanced indexing (the rule decides).
"""

from __future__ import annotations

import ast

from ..codes import is_in_place

_BASIC_CONSTANTS = (int, type(None), type(Ellipsis))


def indexed_write(node: ast.AST, add) -> None:
    """Add ``stmt_index_write`` when the expression statement ``node`` is such a call."""
    called = False
    while node.__class__ is ast.Call and node.func.__class__ is ast.Attribute \
            and is_in_place(node.func.attr):  # type: ignore[attr-defined]
        node, called = node.func.value, True  # type: ignore[attr-defined]
    if not called:
        return
    while node.__class__ is ast.Subscript or _is_data(node):
        if node.__class__ is ast.Subscript and not _basic(node.slice):  # type: ignore[attr-defined]
            add("stmt_index_write")
            return
        node = node.value  # type: ignore[attr-defined]


def _is_data(node: ast.AST) -> bool:
    return node.__class__ is ast.Attribute and node.attr == "data"  # type: ignore[attr-defined]


def _basic(index: ast.AST) -> bool:
    """A slice, an int literal (``-1`` too; not ``True``, which is a mask), ``None``, ``...``, or a tuple of them."""
    if index.__class__ is ast.Tuple:
        return all(_basic(element) for element in index.elts)  # type: ignore[attr-defined]
    if index.__class__ is ast.UnaryOp and index.op.__class__ is ast.USub:  # type: ignore[attr-defined]
        index = index.operand  # type: ignore[attr-defined]
    return index.__class__ is ast.Slice \
        or index.__class__ is ast.Constant and type(index.value) in _BASIC_CONSTANTS  # type: ignore[attr-defined]
