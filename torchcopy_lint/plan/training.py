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

from .arguments import OPAQUE, last_name, placed_calls

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
    trained: Dict[int, bool] = {}
    for call, function, _, _, looping in placed_calls(statement, None if lines is None else PLACED_CALLS, lines):
        name = last_name(call.func)
        if looping and name is not None and _accepts(function, trained):
            add("training_call:" + name)
            if call.func.__class__ is ast.Name:
                add("name_training_call:" + name)


def _accepts(function: Optional[ast.AST], trained: Dict[int, bool]) -> bool:
    if function is OPAQUE:
        return False  # a class body or a lambda's: TCL105 stops there
    if function is None:
        return True  # module level: whether the module's own code trains is other statements' business
    if function.name == "__init__":  # type: ignore[attr-defined]
        return False
    found = trained.get(id(function))
    if found is None:
        found = trained[id(function)] = trains(function)
    return found
