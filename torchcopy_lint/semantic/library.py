"""What library calls return, from torch's own annotations (``knowledge/torch_table.json``).

What it knows: ``torch.X(...)``, ``torch.nn.functional.X(...)``, a tensor's methods and calling an
``nn`` layer (its ``forward``), as the generated table describes them; where the overloads disagree
(``x.max()`` a tensor, ``x.max(1)`` a named tuple ``(values, indices)``), the overloads the call's
arguments can match (how many, which keywords, a number or a tensor where the other is expected,
``True``/``False`` for a ``Literal``), joined. Calling an instance of a module class of this file
gives what the project index says its ``forward`` returns (the index reads the file itself, so a
pruned parse gets the same answer); without an index, what its annotation or its ``return``
statements say. A class that defines ``__call__`` is not followed.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from .. import knowledge
from ..imports import dotted_name
from .kinds import NOT_TENSOR, NUMBER, TENSOR, UNKNOWN, Kind, Value, join, known, tuple_of

_CODES = {"T": TENSOR, "N": NUMBER, "X": NOT_TENSOR, "?": UNKNOWN, "L": Value(Kind.TENSOR_LIST),
          "M": Value(Kind.MAPPING)}
_MAX_CLASS_DEPTH = 8
_BUSY = object()


def code_value(code: Any) -> Value:
    """The value a table code describes."""
    if isinstance(code, str):
        return _CODES.get(code, UNKNOWN)
    if isinstance(code, list) and code and code[0] == "()":
        return tuple_of(tuple(code_value(c) for c in code[1:]))
    if isinstance(code, list) and len(code) == 4 and code[0] == "nt":
        return tuple_of(tuple(code_value(c) for c in code[3]), code[1], tuple(code[2]))
    return UNKNOWN


def resolve(entry: Any, call: cst.Call, arg_value: Callable[[cst.BaseExpression], Value]) -> Value:
    """What ``call`` returns by the table ``entry``: the join of the overloads its arguments can match."""
    if not isinstance(entry, dict):
        return code_value(entry)
    overloads = entry.get("o", [])
    if any(a.star for a in call.args):
        return known(join([code_value(c) for _, c in overloads]))
    matched = [(bound, code) for bound, code in ((_bind(params, call), code) for params, code in overloads)
               if bound is not None]
    if len({repr(code) for _, code in matched}) > 1:
        matched = [(bound, code) for bound, code in matched if _kinds_fit(bound, arg_value)]
    return known(join([code_value(code) for _, code in matched]))


def _bind(params: Sequence[str], call: cst.Call) -> Optional[List[Tuple[str, cst.BaseExpression]]]:
    """(parameter kind, argument) for each argument, when the call can match these parameters."""
    positional: List[Tuple[str, str, bool, bool]] = []  # name, kind, has default, positional-only
    keyword: List[Tuple[str, str, bool]] = []
    varargs = varkw = False
    star = False
    for p in params:
        if p == "/":
            positional = [(n, k, d, True) for n, k, d, _ in positional]
        elif p == "*":
            star = True
        elif p.startswith("**"):
            varkw = True
        elif p.startswith("*"):
            varargs = star = True
        else:
            name, _, kind = p.partition(":")
            default = kind.endswith("=")
            kind = kind.rstrip("=")
            (keyword.append((name, kind, default)) if star else positional.append((name, kind, default, False)))
    args = [a for a in call.args if a.keyword is None]
    named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if len(args) > len(positional) and not varargs:
        return None
    bound = [(positional[i][1] if i < len(positional) else "O", a.value) for i, a in enumerate(args)]
    for name, kind, default, only in positional[len(args):]:
        if name in named and not only:
            bound.append((kind, named.pop(name)))
        elif not default:
            return None
    for name, kind, default in keyword:
        if name in named:
            bound.append((kind, named.pop(name)))
        elif not default:
            return None
    return bound if not named or varkw else None


def _kinds_fit(bound: List[Tuple[str, cst.BaseExpression]], arg_value) -> bool:
    """Whether no argument is visibly of the wrong sort for its parameter."""
    for kind, arg in bound:
        if kind in ("B1", "B0"):
            literal = arg.value if isinstance(arg, cst.Name) and arg.value in ("True", "False") else None
            if literal is not None and (literal == "True") != (kind == "B1"):
                return False
        elif kind in ("T", "N", "X"):
            found = arg_value(arg).kind
            if kind == "T" and found is Kind.NUMBER or kind in ("N", "X") and found.is_tensor:
                return False
    return True


def torch_call(q: str, call: cst.Call, arg_value) -> Optional[Value]:
    """``torch.X(...)`` or ``torch.nn.functional.X(...)`` by the table; None when the table does not
    list it."""
    parts = q.split(".")
    if len(parts) == 2:
        entry = knowledge.lookup("functions", parts[1])
    elif len(parts) == 4 and parts[1:3] == ["nn", "functional"]:
        entry = knowledge.lookup("functional", parts[3])
    else:
        return None
    return resolve(entry, call, arg_value) if entry is not None else None


def tensor_method(method: str, call: cst.Call, arg_value) -> Optional[Value]:
    """``t.method(...)`` on a tensor, by the table; None when it does not list the method."""
    entry = knowledge.lookup("tensor_methods", method)
    return resolve(entry, call, arg_value) if entry is not None else None


def is_tensor_method(method: str) -> bool:
    return knowledge.lookup("tensor_methods", method) is not None


def descend(value: Value, path: Tuple) -> Value:
    """What a tuple target at ``path`` gets from ``value``, through the items of tuples of known length."""
    for i, (where, length) in enumerate(path):
        if value.items is not None and len(value.items) == length and where >= 0:
            value = value.items[where]
        elif where == -1:
            return NOT_TENSOR  # a starred target is always a list
        elif value.kind.is_tensor or value.kind is Kind.TENSOR_LIST and i == len(path) - 1:
            value = TENSOR
        else:
            return UNKNOWN
    return value


def position(e: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal index (``0``, ``-1``)."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus) and isinstance(e.expression, cst.Integer):
        return -int(e.expression.evaluated_value)
    return int(e.evaluated_value) if isinstance(e, cst.Integer) else None


def module_like(func: cst.BaseExpression) -> bool:
    """A callee that may be a module instance and is cheap to evaluate again: ``lin``, ``self.encoder``,
    ``Net()`` (not ``a.b().c`` chains, whose receivers the method call has already evaluated)."""
    return dotted_name(func) is not None or isinstance(func, cst.Call) and dotted_name(func.func) is not None


class ModuleCalls:
    """Calling an instance of a module class: what its ``forward`` returns."""

    def __init__(self, model) -> None:
        self.model = model
        self._forwards: Dict[int, object] = {}

    def call(self, module: Value, call: cst.Call, depth: int) -> Value:
        cls = module.cls
        if cls is None:
            return UNKNOWN
        local = self.model.module_classes.get(cls)
        if local is not None and self._own_name(cls) is None:
            return UNKNOWN if self._local_defines(local, "__call__", 0) else self._local(local, call, depth, 0)
        return self._external(self._own_name(cls) or cls, call, depth)

    def _own_name(self, cls: str) -> Optional[str]:
        """A class of this file under this module's name, when the project index can answer for it: the
        index reads the file itself, never the pruned tree (prune.py may blank a class's methods), so the
        answer is the same for a pruned parse."""
        index = self.model.project
        module_name = getattr(index, "module_name", None)
        if cls not in self.model.module_classes or not module_name or getattr(index, "store", None) is None:
            return None
        return f"{module_name}.{cls}"

    def defines(self, module: Value, name: str) -> bool:
        """Whether the module's class (of this file or of the project) or one of its project bases defines
        the method ``name`` itself (``state_dict`` overridden: not ``nn.Module.state_dict``)."""
        cls = module.cls
        if cls is None:
            return False
        local = self.model.module_classes.get(cls)
        if local is not None and self._own_name(cls) is None:
            return self._local_defines(local, name, 0)
        cls = self._own_name(cls) or cls
        index = self.model.project
        return index is not None and not self.model.outside_project(cls) and index.method_of(cls, name) is not None

    def _local_defines(self, cls: cst.ClassDef, name: str, level: int) -> bool:
        if any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in getattr(cls.body, "body", ())):
            return True
        if level > _MAX_CLASS_DEPTH:
            return False
        for base in cls.bases:
            local = self.model.classes.local_class(base.value) if base.keyword is None else None
            if local is not None and self._local_defines(local, name, level + 1):
                return True
            q = self.model.imports.qualified_name(base.value) if local is None else None
            index = self.model.project
            if q and index is not None and not self.model.outside_project(q) and index.method_of(q, name):
                return True
        return False

    def _arg_value(self, depth: int):
        return lambda e: known(self.model.evaluator.value(e, depth + 1))

    def _external(self, cls: str, call: cst.Call, depth: int) -> Value:
        parts = cls.split(".")
        if parts[:2] == ["torch", "nn"]:
            entry = knowledge.lookup("module_forward", parts[-1])
            return resolve(entry, call, self._arg_value(depth)) if entry is not None else UNKNOWN
        if self.model.outside_project(cls):
            return UNKNOWN
        index = self.model.project
        cls = index.resolve(cls) or cls if index is not None else cls
        if index is None or index.module_class_kind(cls) != "module":
            return UNKNOWN
        returned = index.call_kind(cls)
        kind = {"tensor": TENSOR, "parameter": TENSOR, "tensor-list": Value(Kind.TENSOR_LIST)}.get(returned or "")
        return kind if kind is not None else UNKNOWN

    def _local(self, cls: cst.ClassDef, call: cst.Call, depth: int, level: int) -> Value:
        if level > _MAX_CLASS_DEPTH:
            return UNKNOWN
        forward = next((s for s in getattr(cls.body, "body", ()) if isinstance(s, cst.FunctionDef)
                        and s.name.value == "forward"), None)
        if forward is not None:
            return self._forward(forward, depth)
        found: List[Value] = []
        for base in cls.bases:
            if base.keyword is not None:
                continue
            local = self.model.classes.local_class(base.value)
            if local is not None:
                found.append(self._local(local, call, depth, level + 1))
                continue
            q = self.model.imports.qualified_name(base.value) or dotted_name(base.value)
            found.append(self._external(q, call, depth) if q else UNKNOWN)
        return found[0] if len(found) == 1 else UNKNOWN  # several bases: which forward wins is not followed

    def _forward(self, fn: cst.FunctionDef, depth: int) -> Value:
        """What ``forward`` returns (it does not depend on the call: parameters are what their
        annotations say), memoized; a forward that reaches itself gives UNKNOWN."""
        memo = self._forwards.get(id(fn))
        if memo is not None:
            return memo if isinstance(memo, Value) else UNKNOWN
        if fn.decorators:
            return UNKNOWN  # a decorated forward may return anything
        if fn.returns is not None:
            return self.model.classes.returns(fn)
        scope = self.model.function_scope(fn)
        if scope is None or not scope.returns or any(r is None for r in scope.returns):
            return UNKNOWN
        self._forwards[id(fn)] = _BUSY
        truncated = self.model.truncations
        try:
            result = known(join([self.model.evaluator.value(r, depth + 1) for r in scope.returns]))
        finally:
            del self._forwards[id(fn)]
        if self.model.truncations == truncated:
            self._forwards[id(fn)] = result
        return result
