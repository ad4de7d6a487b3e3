"""Whether what a function returns can require grad, read from its own code (stdlib ``ast``, for summaries).

``proj = emb.get_projection(); proj.clone().detach()`` records no node when ``get_projection`` computes
what it returns with grad mode off: a tensor made by a non-view op under ``torch.no_grad()`` /
``inference_mode()`` / ``set_grad_enabled(False)`` does not require grad, and keeps not requiring it
when it leaves the block or the function. ``no_grad_names(fn)`` gives the names this rests on, or
None when some returned value may require grad:

- every ``return`` gives ``None``/a constant, a ``.detach()``, or a value computed (an arithmetic operator,
  a tensor method that is not a view or conversion, a ``torch`` function) in a ``with`` block that turns
  grad mode off or in a function decorated with one; a conversion or view of such a value counts too;
- or a local name every assignment of which is such a value, and that nothing updates in place (an
  in-place method, an item store, ``+=``) where grad mode is on;
- a generator, a ``with`` that turns grad mode on again (``enable_grad``, ``set_grad_enabled``) or any
  other binding of the name (a parameter, a loop target, a tuple target, ``:=``) says nothing.

The answer is a list of ``[dotted name as written, role]`` (role "off": a grad-mode context or decorator;
"torch": the namespace of a function called) that the project index resolves in the module's imports
(``project_grad.py``): a ``no_grad`` that is not torch's proves nothing. Only names, never imports.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from .. import knowledge
from .facts import dotted, own_nodes
from .vocabulary import VIEW_METHODS

Names = List[List[str]]
_OFF = frozenset({"no_grad", "inference_mode"})
_ON = frozenset({"enable_grad", "set_grad_enabled"})
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
_MAX_DEPTH = 8


def may_turn_grad_off(node: ast.AST) -> bool:
    """A node without which no function is answered: a ``with`` block, a ``.detach``."""
    return isinstance(node, (ast.With, ast.AsyncWith)) or isinstance(node, ast.Attribute) and node.attr == "detach"


def no_grad_names(fn: ast.AST, scanned: bool = False) -> Optional[Names]:
    """The names (and their roles) on which "nothing ``fn`` returns requires grad" rests; None if it may.
    ``scanned``: the caller walked ``fn`` already, found no ``yield`` and a node ``may_turn_grad_off``."""
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    walker = _Returns(fn, scanned)
    try:
        ok = walker.run()
    except RecursionError:
        return None
    return sorted([list(n) for n in walker.names]) if ok else None


def _mode(expr: ast.AST) -> Tuple[Optional[bool], Optional[str]]:
    """(False: turns grad mode off, True: on, None: neither; the name that says so)."""
    call = expr if isinstance(expr, ast.Call) else None
    name = dotted(call.func if call is not None else expr)
    if name is None:
        return None, None
    last = name.rsplit(".", 1)[-1]
    if last in _OFF and not (call is not None and call.args and _false(call.args[0])):
        return False, name
    if last == "set_grad_enabled" and call is not None and call.args and _false(call.args[0]):
        return False, name
    if last in _ON or last == "inference_mode":
        return True, None
    return None, None


def _false(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is False


class _Returns:
    def __init__(self, fn, scanned: bool) -> None:
        self.fn, self.scanned = fn, scanned
        self.names: Set[Tuple[str, str]] = set()
        self.returns: List[Tuple[ast.Return, bool]] = []  # (statement, grad mode off there)
        self.assigned: Dict[str, List[Tuple[Optional[ast.AST], bool]]] = {}  # name -> (value or None, off)
        self.touched_on: Set[str] = set()  # names updated in place where grad mode is on, or bound by `:=`
        self.ok = True

    def run(self) -> bool:
        off = False
        for deco in self.fn.decorator_list:
            mode, name = _mode(deco)
            if mode is False:
                off = True
                self.names.add((name, "off"))
        args = self.fn.args
        for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                self.assigned.setdefault(a.arg, []).append((None, off))
        hopeful = off or self.scanned
        for node in own_nodes(self.fn) if not self.scanned else ():
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                return False  # a generator
            hopeful = hopeful or may_turn_grad_off(node)
        if not hopeful:
            return False  # nothing turns grad mode off and nothing is detached: the common case, answered fast
        self.block(self.fn.body, off)
        if not self.ok or not self.returns:
            return False
        return all(self.returned(r.value, on_off, 0) for r, on_off in self.returns)

    # --- statements -----------------------------------------------------------------------------------

    def block(self, body, off: bool) -> None:
        for stmt in body:
            self.stmt(stmt, off)

    def stmt(self, stmt: ast.stmt, off: bool) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.assigned.setdefault(stmt.name, []).append((None, off))
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = off
            for item in stmt.items:
                mode, name = _mode(item.context_expr)
                if mode is not None:
                    inner = not mode
                    if mode is False:
                        self.names.add((name, "off"))
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, None, off)
            self.block(stmt.body, inner)
            return
        if isinstance(stmt, ast.Return):
            self.returns.append((stmt, off))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                self._bind(target, stmt.value, off)
        elif isinstance(stmt, ast.AugAssign):
            self._bind(stmt.target, None, off, in_place=True)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._bind(stmt.target, None, off)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Delete)):
            self.ok = False  # names bound or unbound another way: not followed
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ in ("TryStar", "Match"):
            for handler in getattr(stmt, "handlers", ()):
                if handler.name:
                    self.assigned.setdefault(handler.name, []).append((None, off))
            if type(stmt).__name__ == "Match":
                self.ok = False
        self._expressions(stmt, off)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                self.block(inner, off)
        for handler in getattr(stmt, "handlers", ()) or ():
            self.block(handler.body, off)

    def _bind(self, target: ast.AST, value: Optional[ast.AST], off: bool, in_place: bool = False) -> None:
        if isinstance(target, ast.Name):
            if in_place:
                if not off:
                    self.touched_on.add(target.id)
                return
            self.assigned.setdefault(target.id, []).append((value, off))
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            base = target.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name) and not off:
                self.touched_on.add(base.id)  # `x[mask] = v` / `x[i] *= s` with grad mode on
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for el in (target.elts if not isinstance(target, ast.Starred) else [target.value]):
                self._bind(el, None, off)

    def _expressions(self, stmt: ast.stmt, off: bool) -> None:
        """In the statement's own expressions (not nested blocks): ``x.mul_(s)`` where grad mode is on, and
        ``(x := ...)`` anywhere, make ``x`` unknown."""
        for field, value in ast.iter_fields(stmt):
            if field in ("body", "orelse", "finalbody", "handlers"):
                continue
            for node in ast.walk(value) if isinstance(value, ast.AST) else ():
                if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    self.touched_on.add(node.target.id)
                elif not off and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr.endswith("_") and not node.func.attr.startswith("_") \
                        and isinstance(node.func.value, ast.Name):
                    self.touched_on.add(node.func.value.id)

    # --- values ---------------------------------------------------------------------------------------

    def returned(self, e: Optional[ast.AST], off: bool, depth: int) -> bool:
        """``e`` (where grad mode is ``off`` or not) is a value that does not require grad."""
        if depth > _MAX_DEPTH:
            return False
        if e is None or isinstance(e, ast.Constant):
            return True
        if isinstance(e, (ast.Tuple, ast.List)):
            return all(self.returned(el, off, depth + 1) for el in e.elts)
        if isinstance(e, ast.IfExp):
            return self.returned(e.body, off, depth + 1) and self.returned(e.orelse, off, depth + 1)
        if isinstance(e, ast.Name):
            found = self.assigned.get(e.id)
            if not found or e.id in self.touched_on:
                return False
            return all(value is not None and self.returned(value, at, depth + 1) for value, at in found)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "detach":
            return True
        return off and self._fresh(e, depth)

    def _fresh(self, e: ast.AST, depth: int) -> bool:
        """A new tensor computed here (under no_grad, it does not require grad): an arithmetic operator, a
        tensor method that is not a view or conversion (or one of a fresh value), a ``torch`` function."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(e, ast.BinOp):
            return isinstance(e.op, _OPS)
        if not isinstance(e, ast.Call) or any(k.arg == "requires_grad" for k in e.keywords):
            return False
        func = e.func
        if not isinstance(func, ast.Attribute) or func.attr in ("requires_grad_", "detach_"):
            return False
        if func.attr in VIEW_METHODS:
            return self._fresh(func.value, depth + 1)  # `.clone().to(device)`: the clone, or a copy of it
        if knowledge.lookup("tensor_methods", func.attr) is not None:
            return func.attr != "as_subclass"  # `x.clone()`, `x.norm()` (or `torch.norm(x)`: a new tensor too)
        head = dotted(func.value)
        if head is not None and (knowledge.lookup("functions", func.attr) is not None
                                 or knowledge.lookup("functional", func.attr) is not None):
            self.names.add((head, "torch"))  # `torch.cat(xs)`, `F.linear(x, w)`: if `head` is torch's
            return True
        return False
