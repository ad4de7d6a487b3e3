"""The functions whose text the autograd context reads for a ``.data`` write (TCL104/TCL119), or for the grad
mode of a private function called only where it is off (TCL103/TCL117): pruning keeps them.

A method is graph-free when every call of it in its class (``self.m(...)``) is, a top-level function when every
call of it in the module (``f(...)``) is (semantic/autograd.py; a nested function's calls lie in its enclosing
function, which pruning keeps or blanks whole): those calls are evidence, and so are the calls of the functions
that hold them. ``context_callers`` finds, from CPython's tree, the methods and top-level functions that write
``.data`` (codes.py's text of such a write) and, to a fixed point, those that call one of them (``self.m(``,
``f(``), and the methods those that write call, to a fixed point (``self.compute_forward(batch)`` before the write:
training_order.py reads the forwards it runs); it answers a pattern that finds such a call, or the definition of such
a callee, in a segment's text (None: no method writes ``.data``). Keeping only these, not every method with a ``self.m()`` call, keeps a big test module with
one ``.data`` write from being parsed whole. For the grad mode (``references``) the functions that hold a
``.detach()`` after a call are seeds too, and every function that mentions a seed's name (``x.m``, ``m``) is
kept: autograd.py counts a method's every ``x.m`` in the file, since one that is not ``self.m(...)`` is a
caller it cannot follow.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Pattern, Sequence, Tuple

from ..codes import TRIGGERS, compile_trigger
from ..plan.structure import line_starts

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers")
_SELF_CALL = re.compile(rb"\bself\s*\.\s*(\w+)\s*\(")


def context_callers(tree: ast.Module, source: bytes, seeds: Sequence[str] = (TRIGGERS["TCL104"][1],),
                    references: bool = False) -> Optional[Pattern[bytes]]:
    functions = _functions(tree, source)
    found = [compile_trigger(seed, True) for seed in seeds]
    names = {(name, in_class) for name, text, in_class in functions if any(f.search(text) for f in found)}
    callees = _callees(functions, [text for name, text, in_class in functions if (name, in_class) in names])
    definitions = [rb"\bdef\s+(?:" + b"|".join(re.escape(n) for n in callees) + rb")\s*\("] if callees else []
    receiver, call = (rb"\.\s*", rb"\b") if references else (rb"self\s*\.\s*", rb"\s*\(")
    while names:
        methods = sorted(n.encode() for n, in_class in names if in_class)
        plain = sorted(n.encode() for n, in_class in names if not in_class)
        parts = []
        if methods:
            parts.append(receiver + rb"(?:" + b"|".join(re.escape(n) for n in methods) + rb")" + call)
        if plain:  # a top-level function, called by its name
            parts.append(rb"(?<![\w.])(?:" + b"|".join(re.escape(n) for n in plain) + rb")" + call)
        pattern = re.compile(b"|".join(parts + definitions))
        more = {(name, in_class) for name, text, in_class in functions
                if (name, in_class) not in names and pattern.search(text)}
        if not more:
            return pattern
        names |= more
    return None


def _callees(functions: List[Tuple[str, bytes, bool]], texts: List[bytes]) -> List[bytes]:
    """The names of the methods that ``texts`` call as ``self.m(``, and those they call, to a fixed point."""
    methods: dict = {}
    for name, text, in_class in functions:
        if in_class:
            methods.setdefault(name.encode(), []).append(text)
    called: set = set()
    pending = list(texts)
    while pending:
        for name in _SELF_CALL.findall(pending.pop()):
            if name in methods and name not in called:
                called.add(name)
                pending.extend(methods[name])
    return sorted(called)


def _functions(tree: ast.Module, source: bytes) -> List[Tuple[str, bytes, bool]]:
    """(name, text, whether it is a method) of every method of the module's classes (nested classes included)
    and every top-level function (also in a guard block); statements only are walked."""
    starts = line_starts(source)
    found: List[Tuple[str, bytes, bool]] = []
    pending: List[Tuple[ast.AST, bool]] = [(node, False) for node in tree.body]
    while pending:
        node, in_class = pending.pop()
        if isinstance(node, _FUNCTIONS):
            first, last = node.lineno, node.end_lineno or node.lineno
            end = starts[last] if last < len(starts) else len(source)
            found.append((node.name, source[starts[first - 1]:end], in_class))
            continue  # a nested function's calls stay in its enclosing function
        in_class = isinstance(node, ast.ClassDef) or in_class and not isinstance(node, ast.ClassDef)
        for field in _BLOCKS:
            for child in getattr(node, field, ()) or ():
                if isinstance(child, ast.excepthandler):
                    pending.extend((grandchild, in_class) for grandchild in child.body)
                elif isinstance(child, ast.stmt):
                    pending.append((child, in_class))
    return found
