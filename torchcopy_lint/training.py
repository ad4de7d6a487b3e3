"""Where a call sits relative to training, read from CPython's ``ast``: TCL105's shape (shapes.py).

TCL105 (rules/tcl105_deepcopy_live_module.py) reports ``copy.deepcopy`` only in a loop (``for``/``while``) of a
function, other than ``__init__``, that calls ``.backward(...)`` or ``.step(...)`` somewhere in it; in a class
body or a lambda never; at module level in a loop of a module whose own code trains. ``training_call_tokens``
gives ``training_call:deepcopy`` for such a call (``name_training_call:NAME`` for a plain name, which
structure.resolved maps through import aliases), a superset: at module level every call in a loop counts.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from .arguments import FUNCTIONS, LOOPS, last_name, outside_lines

#: The calls whose place is read (the last name); imported under another name, not followed (structure.plan).
PLACED_CALLS = frozenset({"deepcopy"})
_TRAINING_METHODS = frozenset({"backward", "step"})


def trains(function: ast.AST) -> bool:
    """Whether ``function`` (anything in it, nested code too) calls ``x.backward(...)`` or ``x.step(...)``."""
    return any(node.__class__ is ast.Call and node.func.__class__ is ast.Attribute  # type: ignore[attr-defined]
               and node.func.attr in _TRAINING_METHODS for node in ast.walk(function))  # type: ignore[attr-defined]


def training_call_tokens(statement: ast.stmt, add, lines: Optional[List[int]] = None) -> None:
    """``training_call:NAME`` for each call of PLACED_CALLS in ``statement`` (a top-level one) that TCL105's
    place test may accept; ``lines``: the sorted first lines of those calls, the only parts walked. None: every
    call of any name that is in a loop at all (a file that imports one of them under another name)."""
    loose = lines is None
    trained: Dict[int, bool] = {}
    # a node; the innermost function (None: module level), whether a loop holds it inside that function
    stack: list = [(statement, None, False)]
    while stack:
        node, function, looping = stack.pop()
        if not loose and outside_lines(node, lines):  # type: ignore[arg-type]
            continue  # no such call in it
        cls = node.__class__
        if cls is ast.Call and looping:
            func = node.func  # type: ignore[attr-defined]
            name = last_name(func)
            if name is not None and (loose or name in PLACED_CALLS) and _accepts(function, trained):
                add("training_call:" + name)
                if func.__class__ is ast.Name:
                    add("name_training_call:" + name)
        if cls in FUNCTIONS:
            outside = [*node.decorator_list, node.args] + ([node.returns] if node.returns else [])  # type: ignore[attr-defined]
            stack.extend((child, function, looping) for child in outside)
            stack.extend((child, node, False) for child in node.body)  # type: ignore[attr-defined]
        elif cls is ast.ClassDef:  # TCL105 stops at a class: its body is in no loop it follows; a method is a function
            body = {id(child) for child in node.body}  # type: ignore[attr-defined]
            stack.extend((child, function, looping) for child in ast.iter_child_nodes(node) if id(child) not in body)
            stack.extend((child, _NEVER, False) for child in node.body)  # type: ignore[attr-defined]
        elif cls is ast.Lambda:  # ... and at a lambda
            stack.append((node.args, function, looping))  # type: ignore[attr-defined]
            stack.append((node.body, _NEVER, False))  # type: ignore[attr-defined]
        else:
            inner = looping or cls in LOOPS
            stack.extend((child, function, inner) for child in ast.iter_child_nodes(node))


_NEVER = ast.Pass()  # the "function" of a class body or a lambda's body: no call there is in a training loop


def _accepts(function: Optional[ast.AST], trained: Dict[int, bool]) -> bool:
    if function is _NEVER:
        return False
    if function is None:
        return True  # module level: whether the module's own code trains is other statements' business
    if function.name == "__init__":  # type: ignore[attr-defined]
        return False
    found = trained.get(id(function))
    if found is None:
        found = trained[id(function)] = trains(function)
    return found
