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
from typing import Callable, Dict, Optional

from .arguments import UNLESS
from .ast_children import children
from .function_values import FUNCTIONS, ArgumentScope
from ..codes import is_in_place

_BASIC_CONSTANTS = (int, type(None), type(Ellipsis))


def indexed_write(node: ast.AST, add, unassigned: Optional[Callable[[str], bool]] = None) -> None:
    """Add ``stmt_index_write`` when the expression statement ``node`` is such a call. The function form counts
    only where the function may be torch's: the rule asks for its qualified name, which only an import gives
    (imports.ImportMap: the name at the head of the call, or a star import), so the token is held under
    arguments.UNLESS on the file importing that name or ``*`` (``flat.add_(idx[d])`` on a local tensor reads
    ``idx[d]``, it writes ``flat``). ``unassigned``: whether a name index is one the function never assigns
    (``scoped_index_tokens``); without it, a method form advanced by names alone also gives ``BY_NAMES``."""
    if node.__class__ is not ast.Call:
        return
    func = node.func  # type: ignore[attr-defined]
    if func.__class__ is ast.Name:
        if is_in_place(func.id) and node.args and _advanced(node.args[0], unassigned):  # type: ignore[attr-defined]
            add(_IMPORTED_AS_TORCH % func.id)  # zeros_(w[idx]), imported from torch.nn.init
        return
    if func.__class__ is not ast.Attribute or not is_in_place(func.attr):
        return
    head = _head(func.value)
    if head is not None and node.args and _advanced(node.args[0], unassigned):  # type: ignore[attr-defined]
        add(_IMPORTED_AS_TORCH % head)  # torch.zero_(h[idx]), nn.init.normal_(w[idx])
    while node.__class__ is ast.Call and node.func.__class__ is ast.Attribute \
            and is_in_place(node.func.attr):  # type: ignore[attr-defined]
        node = node.func.value  # type: ignore[attr-defined]
    if _advanced(node, unassigned):
        add("stmt_index_write")  # h[idx].zero_()
        if unassigned is None and not _advanced(node, _ANY_NAME):
            add(BY_NAMES)  # h[i].zero_(): a def may prove `i` no evidence (scoped_index_tokens)


#: The function form's token: held unless the file imports the name at the call's head or ``*`` (structure.resolved).
_IMPORTED_AS_TORCH = UNLESS + "i%s,i*|stmt_index_write"


def _head(expr: ast.AST) -> Optional[str]:
    """``a`` of a dotted chain ``a.b.c``; None for anything else (a call's result has no qualified name)."""
    while expr.__class__ is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if expr.__class__ is ast.Name else None  # type: ignore[attr-defined]


def _advanced(node: ast.AST, unassigned: Optional[Callable[[str], bool]] = None) -> bool:
    """A subscript (maybe under ``.data``/``.detach()``) one of whose indices is not plainly basic (a name that
    ``unassigned`` accepts counts as basic: the rule can find no evidence that it is advanced)."""
    node = _still_the_copy(node)
    if node.__class__ is not ast.Subscript:
        return False
    while node.__class__ is ast.Subscript:
        if not _basic(node.slice, unassigned):  # type: ignore[attr-defined]
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


def _basic(index: ast.AST, unassigned: Optional[Callable[[str], bool]] = None) -> bool:
    """A slice, an int literal (``-1`` too; not ``True``, which is a mask), ``None``, ``...``, or a tuple of them;
    a name ``unassigned`` accepts."""
    if index.__class__ is ast.Tuple:
        return all(_basic(element, unassigned) for element in index.elts)  # type: ignore[attr-defined]
    if index.__class__ is ast.Name and unassigned is not None:
        return unassigned(index.id)  # type: ignore[attr-defined]
    if index.__class__ is ast.UnaryOp and index.op.__class__ is ast.USub:  # type: ignore[attr-defined]
        index = index.operand  # type: ignore[attr-defined]
    return index.__class__ is ast.Slice \
        or index.__class__ is ast.Constant and type(index.value) in _BASIC_CONSTANTS  # type: ignore[attr-defined]


#: The marker of a method form whose only indices that are not plainly basic are names (``h[i].zero_()``): in a
#: def, ``scoped_index_tokens`` decides (shapes.py).
BY_NAMES = "index_by_names"
_ANY_NAME: Callable[[str], bool] = lambda name: True  # noqa: E731


def scoped_index_tokens(statement: ast.stmt, add) -> None:
    """``indexed_write`` of every expression statement in ``statement`` (a top-level def or class), a name index read
    in a def's body counted as basic where that def never assigns the name: TCL120's evidence for a name index is
    that every binding reaching it assigns evidence (rules/_advanced_index.py ``_named``), so a name the function
    binds only as a loop's target (``for i in range(n)``), a parameter, an unpacking's part, ``with ... as``,
    ``except ... as`` or an import holds none. Not where it is declared ``global``/``nonlocal``, bound by a nested
    scope's walrus or not bound in the function at all (the module's bindings reach it), nor in a class body."""
    scopes: Dict[int, ArgumentScope] = {}
    stack: list = [(statement, None)]
    while stack:
        node, function = stack.pop()
        cls = node.__class__
        if cls is ast.Expr:
            indexed_write(node.value, add, None if function is None else _unassigned_in(function, scopes))  # type: ignore[attr-defined]
        if cls in FUNCTIONS:
            stack.extend((child, function) for child in [*node.decorator_list, node.args])  # type: ignore[attr-defined]
            stack.extend((child, node) for child in node.body)  # type: ignore[attr-defined]
        elif cls is ast.ClassDef:
            stack.extend((child, None) for child in children(node))  # the class body is no function's
        else:
            stack.extend((child, function) for child in children(node))


def _unassigned_in(function: ast.AST, scopes: Dict[int, ArgumentScope]) -> Callable[[str], bool]:
    scope = scopes.get(id(function))
    if scope is None:
        scope = scopes[id(function)] = ArgumentScope(function, False)  # type: ignore[arg-type]
    return scope.never_assigned
