"""Facts: what an expression evaluates to, described symbolically from one function's code.

A *fact* is a small JSON list, evaluated later across modules by the project index
(semantic/project_kinds.py): ``["k", kind]`` (known here), ``["name", "a.b"]`` (a
module-level name; ``"@pkg.x"`` when a function-local import already qualified it),
``["arg", position or keyword-only name, "attr.path", annotation]`` (a parameter),
``["self", attr]`` and ``["selfobj"]`` (the method's receiver), ``["attr", fact, attr]``,
``["call", callee, [args], {kwargs}]``, ``["mcall", receiver, method, [args]]``,
``["sub", fact]`` (a subscript), ``["op", facts...]`` (an operator), ``["list", [item facts]]``
(a list or tuple: a tensor list when every item is a tensor), ``["ann", annotation]``
and ``["any", [facts]]`` (one of several). Locals are folded in flow-insensitively: a local
stands for the union of everything assigned to it. Anything else is ``["k", "unknown"]``.
Annotations are data too: a dotted name, or ``[outer, [arguments]]`` for a subscript.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

Fact = List[Any]
UNKNOWN: Fact = ["k", "unknown"]
NONE: Fact = ["k", "none"]
_MAX_FACT_DEPTH = 8
MAX_ARGS = 6


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def bound_names(stmt: ast.stmt) -> List[str]:
    """Module-level names bound by a statement other than import/def/class/assignment."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return target_names(stmt.target)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [n for item in stmt.items if item.optional_vars is not None for n in target_names(item.optional_vars)]
    if isinstance(stmt, ast.AugAssign):
        return target_names(stmt.target)
    return []


def target_names(target: ast.AST) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for el in target.elts for n in target_names(el)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def annotation(node: Optional[ast.AST]) -> Any:
    """An annotation as data: a dotted name, ``[outer, [args]]`` for a subscript, or None."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.Subscript):
        inner = node.slice
        if isinstance(inner, ast.Index):  # Python 3.8 shape, kept for safety
            inner = inner.value  # type: ignore[attr-defined]
        elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return [dotted(node.value), [annotation(e) for e in elements[:MAX_ARGS]]]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return ["Union", [annotation(node.left), annotation(node.right)]]
    return dotted(node)


class Scope:
    """A function's names: parameters, locals (every value assigned to them), the receiver."""

    def __init__(self, receiver: Optional[str], params: List[str], positional: int,
                 annotations: Dict[str, Any]) -> None:
        self.receiver = receiver
        self.params = params
        self.positional = positional  # params[positional:] are keyword-only
        self.annotations = annotations
        self.imports: Dict[str, str] = {}
        self.locals: Dict[str, List[Optional[ast.AST]]] = {}
        self._active: set = set()

    def collect(self, stmt: ast.stmt) -> None:
        """Record the local bindings a statement makes (None: a value we do not model)."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.locals.setdefault(target.id, []).append(stmt.value)
                else:
                    for name in target_names(target):
                        self.locals.setdefault(name, []).append(None)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            self.locals.setdefault(stmt.target.id, []).append(stmt.value)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.locals.setdefault(stmt.name, []).append(None)
        else:
            for name in bound_names(stmt):
                self.locals.setdefault(name, []).append(None)

    def fact(self, node: Optional[ast.AST], depth: int = 0) -> Fact:
        if node is None or depth > _MAX_FACT_DEPTH:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            value = node.value
            if value is None:
                return NONE
            if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
                return ["k", "number"]
            return ["k", "not-tensor"]
        if isinstance(node, (ast.Dict, ast.DictComp)):
            return ["k", "mapping"]
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts and len(node.elts) <= MAX_ARGS:
            return ["list", [self.fact(el, depth + 1) for el in node.elts]]
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            return ["list", [self._comprehension_item(node, depth)]]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.GeneratorExp,
                             ast.Lambda, ast.JoinedStr)):
            return ["k", "not-tensor"]
        if isinstance(node, ast.BoolOp):
            return UNKNOWN
        if isinstance(node, ast.IfExp):
            return ["any", [self.fact(node.body, depth + 1), self.fact(node.orelse, depth + 1)]]
        if isinstance(node, ast.NamedExpr):
            return self.fact(node.value, depth + 1)
        if isinstance(node, ast.Await):
            return UNKNOWN
        if isinstance(node, ast.Name):
            return self._name(node.id, depth)
        if isinstance(node, ast.Attribute):
            chain = dotted(node)
            if chain is not None:
                head, _, rest = chain.partition(".")
                if head == self.receiver:
                    first, _, more = rest.partition(".")
                    fact: Fact = ["self", first]
                    for attr in more.split(".") if more else ():
                        fact = ["attr", fact, attr]
                    return fact
                if head in self.params and head not in self.locals:
                    return self._param(head, rest)
                if head not in self.locals:
                    return ["name", self._qualify(chain)]
            return ["attr", self.fact(node.value, depth + 1), node.attr]
        if isinstance(node, ast.Call):
            args = [self.fact(a, depth + 1) for a in node.args[:MAX_ARGS] if not isinstance(a, ast.Starred)]
            kwargs = {k.arg: self.fact(k.value, depth + 1) for k in node.keywords[:MAX_ARGS] if k.arg}
            func = node.func
            chain = dotted(func)
            head = chain.split(".")[0] if chain else None
            if isinstance(func, ast.Attribute) and (chain is None or head == self.receiver
                                                    or head in self.params or head in self.locals):
                return ["mcall", self.fact(func.value, depth + 1), func.attr, args]
            return ["call", self.fact(func, depth + 1), args, kwargs]
        if isinstance(node, ast.Subscript):
            return ["sub", self.fact(node.value, depth + 1)]
        if isinstance(node, ast.Compare):  # ``x > 0`` on a tensor is a tensor (a mask); ``in``/``is`` a bool
            if all(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops):
                return ["k", "not-tensor"]
            return ["op"] + [self.fact(x, depth + 1) for x in [node.left, *node.comparators][:MAX_ARGS]]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ["k", "not-tensor"]
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return ["op"] + [self.fact(x, depth + 1) for x in
                             ((node.left, node.right) if isinstance(node, ast.BinOp) else (node.operand,))]
        return UNKNOWN

    def _comprehension_item(self, node: ast.ListComp, depth: int) -> Fact:
        """The item of ``[item for x in ...]``, with ``x`` unknown (it shadows any outer ``x``)."""
        bound = target_names(node.generators[0].target)
        saved = {name: self.locals.get(name) for name in bound}
        for name in bound:
            self.locals[name] = [None]
        try:
            return self.fact(node.elt, depth + 1)
        finally:
            for name, values in saved.items():
                if values is None:
                    del self.locals[name]
                else:
                    self.locals[name] = values

    def _qualify(self, chain: str) -> str:
        head, _, rest = chain.partition(".")
        target = self.imports.get(head)
        if target is None:
            return chain
        return "@" + target + ("." + rest if rest else "")  # '@': already an import target

    def _param(self, name: str, path: str) -> Fact:
        """``["arg", position or keyword-only name, attribute path, annotation]``."""
        index = self.params.index(name)
        return ["arg", index if index < self.positional else name, path, self.annotations.get(name)]

    def _name(self, name: str, depth: int) -> Fact:
        if name == self.receiver:
            return ["selfobj"]
        if name in self.locals:
            if name in self._active:
                return UNKNOWN
            self._active.add(name)
            try:
                values = self.locals[name]
                facts = [self.fact(v, depth + 1) if v is not None else UNKNOWN for v in values]
                if name in self.params:
                    facts.append(self._param(name, ""))
            finally:
                self._active.discard(name)
            return facts[0] if len(facts) == 1 else ["any", facts]
        if name in self.params:
            return self._param(name, "")
        if name in ("True", "False"):
            return ["k", "not-tensor"]
        return ["name", self._qualify(name)]


def own_nodes(fn: ast.AST):
    """The nodes of ``fn``'s body that belong to it, not to a nested def, lambda or class."""
    pending = list(ast.iter_child_nodes(fn))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
