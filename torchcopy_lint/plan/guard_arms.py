"""Calls in an arm where a guard says their data argument is no tensor: ``x if isinstance(x, torch.Tensor) else
torch.tensor(x)``, the pattern torch's own sources use to make a tensor of a number.

The semantic model narrows a name on the arms of a conditional expression and of an ``if`` (semantic/guards.py,
expressions.py, flow.py): ``isinstance(x, torch.Tensor)`` or ``torch.is_tensor(x)`` false, or ``isinstance(x, int)``
(a builtin class, isinstance not imported) true, makes the read of ``x`` there NOT_TENSOR, whatever ``x`` was bound
to (a fact wins over bindings: evaluate.py ``read_value``). So TCL101 (``torch.tensor(x)`` of a tensor) cannot fire
on such a call, when it is the arm itself (a conditional expression's) or the value of the arm's first statement
(an ``if``'s: nothing rebinds ``x`` before it), and ``x`` its first positional argument (read before any other).

Where the guard names the tensor class by a module (``H.Tensor``, ``H.is_tensor``), the call must be ``H.tensor``/
``H.as_tensor`` on the same name ``H``: whatever ``H`` is, if the call is ``torch.tensor`` the guard is torch's.
A guard by builtin class rests on the file importing neither that name nor ``isinstance`` (arguments.UNLESS).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Tuple

#: Classes the model reads as never a tensor's where the file does not import their name (semantic/vocabulary.py).
BUILTIN_CLASSES = frozenset("list tuple int float complex bool str bytes dict set frozenset range".split())
_ARM_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)

#: A call's id -> (the name its guard proves no tensor, the names the file must not import for it: ``i`` + name).
Proven = Dict[int, Tuple[str, FrozenSet[str]]]


def guard_arms(node: ast.AST, proven: Proven) -> None:
    """Record in ``proven`` the calls of ``node`` (a conditional expression or an ``if``) that an arm's guard
    proves get no tensor as their first argument."""
    arms = ((node.body, True), (node.orelse, False))  # type: ignore[attr-defined]
    for arm, positive in arms:
        if node.__class__ is ast.If:
            first = arm[0] if arm else None
            arm = first.value if first.__class__ in _ARM_STATEMENTS else None  # type: ignore[union-attr]
        if arm.__class__ is not ast.Call or not arm.args \
                or arm.args[0].__class__ is not ast.Name:  # type: ignore[union-attr]
            continue
        found = _not_tensor(node.test, positive)  # type: ignore[attr-defined]
        if found is None:
            continue
        name, head, assumed = found
        func = arm.func  # type: ignore[union-attr]
        if name != arm.args[0].id or head is not None and not (  # type: ignore[union-attr]
                func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and func.value.id == head):
            continue
        proven[id(arm)] = (name, assumed)


def _not_tensor(test: ast.AST, positive: bool) -> Optional[Tuple[str, Optional[str], FrozenSet[str]]]:
    """``(x, H, assumed)`` where ``test`` being ``positive`` makes ``x`` NOT_TENSOR: ``H``, the module name the
    guard reads the tensor class from (None: a builtin class); ``assumed``: the names the file must not import."""
    while test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not:  # type: ignore[attr-defined]
        test, positive = test.operand, not positive  # type: ignore[attr-defined]
    if test.__class__ is not ast.Call or test.keywords or not test.args \
            or test.args[0].__class__ is not ast.Name:  # type: ignore[attr-defined]
        return None
    func, args = test.func, test.args  # type: ignore[attr-defined]
    name = args[0].id
    if func.__class__ is ast.Attribute and func.attr == "is_tensor" and len(args) == 1:
        module = func.value
        return (name, module.id, frozenset()) if module.__class__ is ast.Name and not positive else None
    if func.__class__ is not ast.Name or func.id != "isinstance" or len(args) != 2:
        return None
    cls = args[1]
    if cls.__class__ is ast.Attribute and cls.attr == "Tensor" and cls.value.__class__ is ast.Name:
        return (name, cls.value.id, frozenset({"iisinstance"})) if not positive else None
    if cls.__class__ is ast.Name and cls.id in BUILTIN_CLASSES:
        return (name, None, frozenset({"iisinstance", "i" + cls.id})) if positive else None
    return None
