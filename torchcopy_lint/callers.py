"""The functions whose text the autograd context reads for a ``.data`` write (TCL104/TCL119): pruning keeps them.

A method is graph-free when every call of it in its class (``self.m(...)``) is (semantic/autograd.py; a
nested function's calls lie in its enclosing function, which pruning keeps or blanks whole): those calls are
evidence, and so are the calls of the methods that hold them. ``context_callers`` finds, from CPython's tree,
the methods that write ``.data`` (codes.py's text of such a write) and, to a fixed point, the methods that call
one of them on ``self``; it answers a pattern that finds such a call in a segment's text (None: no method
writes ``.data``). Keeping only these, not every method with a ``self.m()`` call, keeps a big test module with
one ``.data`` write from being parsed whole.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Pattern, Tuple

from .codes import TRIGGERS, compile_trigger
from .structure import line_starts

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def context_callers(tree: ast.Module, source: bytes) -> Optional[Pattern[bytes]]:
    functions = _functions(tree, source)
    data_write = compile_trigger(TRIGGERS["TCL104"][1], True)
    names = {name for name, text in functions if data_write.search(text)}
    while names:
        pattern = re.compile(rb"self\s*\.\s*(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names))
                             + rb")\s*\(")
        more = {name for name, text in functions if name not in names and pattern.search(text)}
        if not more:
            return pattern
        names |= more
    return None


def _functions(tree: ast.Module, source: bytes) -> List[Tuple[str, bytes]]:
    """(name, text) of every method of the module's classes (nested classes included; statements only are
    walked)."""
    starts = line_starts(source)
    found: List[Tuple[str, bytes]] = []
    pending: List[Tuple[ast.AST, bool]] = [(node, False) for node in tree.body]
    while pending:
        node, in_class = pending.pop()
        if isinstance(node, _FUNCTIONS):
            if in_class:
                first, last = node.lineno, node.end_lineno or node.lineno
                end = starts[last] if last < len(starts) else len(source)
                found.append((node.name, source[starts[first - 1]:end]))
            continue  # a nested function's calls stay in its enclosing function
        in_class = isinstance(node, ast.ClassDef) or in_class and not isinstance(node, ast.ClassDef)
        for field in _BLOCKS:
            for child in getattr(node, field, ()) or ():
                if isinstance(child, ast.excepthandler):
                    pending.extend((grandchild, in_class) for grandchild in child.body)
                elif isinstance(child, ast.stmt):
                    pending.append((child, in_class))
    return found
