"""Requires-grad evidence: whether an op applied to a tensor here records an autograd node.

``clone()``, ``.cpu()`` or ``.to(..)`` record a node only where grad mode is on and the input requires
grad. Saying "it records one" needs evidence for (a parameter, ``requires_grad=True``, the output of a
module that may hold parameters); staying silent needs evidence against:

- grad mode is off at the node: a ``with torch.no_grad()`` / ``inference_mode()`` /
  ``set_grad_enabled(False)`` block or a function decorated with one (``autograd.py`` says where);
- the value cannot require grad: bool and integer results (comparisons, ``~``, ``&``, ``argmax``,
  ``nonzero``, ``.long()``, the indices of ``max``/``sort``/``topk``, ``torch.where(cond)``, ``randint``),
  factories without ``requires_grad=True`` (``torch.zeros``, ``*_like``, ``x.new_zeros``,
  ``torch.from_numpy``...), ``.data``, ``.grad``, ``.detach()``, a gradient passed to a backward hook;
- the output of a module known to hold no parameter (``nn.ReLU``, ``nn.Dropout``..., a project class whose
  attributes are plain values: project_grad.py) whose inputs cannot require grad (it gives what they give);
- a value made by a non-view op under no_grad (a view or a no-op conversion of a leaf that requires
  grad still requires grad there, so those keep their input's answer);
- ``x.requires_grad = False`` / ``x.requires_grad_(False)`` on every path from ``x``'s binding to the read.

An op's result requires grad when any input does (YES), not when none does (NO); paths that disagree
give UNKNOWN. API (``SemanticModel.requires_grad``): ``at(expr, stack) -> Grad`` for an expression
below the node at the top of ``stack``.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence

import libcst as cst

from ..walk import children
from .grad_facts import GradFacts, literal as _literal
from .kinds import Grad, Kind
from .project_grad import parameterless_layer
from .vocabulary import BOOL_RESULTS, INT64_RESULTS, VIEW_METHODS
from .tensordict import TENSORDICT


_MAX_DEPTH = 32
_BUSY = object()
_FACTORIES = frozenset(
    """zeros ones empty full rand randn randint randperm tensor arange range linspace logspace eye from_numpy
    zeros_like ones_like empty_like full_like rand_like randn_like randint_like empty_strided scalar_tensor
    frombuffer tril_indices triu_indices""".split())
_NEW = frozenset("new_zeros new_ones new_empty new_full new_tensor".split())
# Results that are bool or integer tensors (or tuples of them): they never require grad.
_INTEGRAL = BOOL_RESULTS | INT64_RESULTS | frozenset(
    """bitwise_and bitwise_or bitwise_xor bitwise_not bucketize searchsorted multinomial count_nonzero bincount
    long int bool short byte char""".split())
_INDEXED = frozenset("max min sort topk kthvalue mode median nanmedian cummax cummin".split())
_NEEDS_DIM = frozenset("max min median nanmedian".split())
_INTEGRAL_DTYPES = frozenset("long int64 int int32 short int16 int8 uint8 bool".split())
_SAME = VIEW_METHODS  # the receiver's answer; under no_grad they may return the receiver
_VIEWS = _SAME | frozenset("T mT H mH real imag".split())
_TORCH_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft"})
_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
        cst.MatrixMultiply)


def _any(grads: Iterable[Grad]) -> Grad:
    """An op's result: YES when some input requires grad, NO when none can."""
    found = set(grads)
    return Grad.YES if Grad.YES in found else Grad.UNKNOWN if Grad.UNKNOWN in found else Grad.NO


def _same(grads: Iterable[Grad]) -> Grad:
    """Paths that reach one read: what they all agree on."""
    found = set(grads)
    return found.pop() if len(found) == 1 else Grad.UNKNOWN


class RequiresGrad:
    """Answers ``at(expr, stack)``; bindings are answered once."""

    def __init__(self, model) -> None:
        self.model = model
        self._bindings: Dict[int, object] = {}
        self._parents: Optional[Dict[int, cst.CSTNode]] = None
        self.facts = GradFacts(model)

    def at(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> Grad:
        if self._grad_off(list(stack)):
            return Grad.NO
        self.model.ensure(stack)
        return self.of(expr, 0)

    def _grad_off(self, stack: List[cst.CSTNode]) -> bool:
        """Grad mode is off here by a ``with`` block or a decorator around it (not a guess from a name)."""
        context = self.model.autograd.context(stack)
        return context.kind == "no_grad" and not context.from_callers or self.model.autograd.grad_off(stack)

    # --- expressions ------------------------------------------------------------------------------

    def of(self, e: cst.BaseExpression, depth: int) -> Grad:
        if depth > _MAX_DEPTH:
            return Grad.UNKNOWN
        if isinstance(e, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Comparison)):
            return Grad.NO
        if isinstance(e, cst.UnaryOperation):
            if isinstance(e.operator, (cst.Not, cst.BitInvert)):
                return Grad.NO  # `~` exists only on bool and integer tensors
            return self.of(e.expression, depth + 1)
        if isinstance(e, cst.BinaryOperation):
            if not isinstance(e.operator, _OPS):
                return Grad.NO  # `&`, `|`, `^`, shifts: bool and integer tensors only
            return _any([self.of(e.left, depth + 1), self.of(e.right, depth + 1)])
        if isinstance(e, cst.IfExp):
            arms = [a for a in (e.body, e.orelse) if not (isinstance(a, cst.Name) and a.value == "None")]
            return _same(self.of(a, depth + 1) for a in arms)
        if isinstance(e, cst.NamedExpr):
            return self.of(e.value, depth + 1)
        if isinstance(e, cst.Subscript):
            return self._subscript(e, depth)
        if isinstance(e, cst.Call):
            found = self._call(e, depth)
            if found is not None:
                return found
        elif isinstance(e, (cst.Name, cst.Attribute)):
            found = self._read(e, depth)
            if found is not None:
                return found
        return self._by_kind(e)

    def _by_kind(self, e: cst.BaseExpression) -> Grad:
        value = self.model.evaluator.value(e)
        if value is None:
            return Grad.UNKNOWN
        if value.kind is Kind.PARAMETER:
            return Grad.YES
        if value.kind.is_known_other and value.kind not in (Kind.MODULE, Kind.TENSOR_LIST):
            return Grad.NO  # numbers, strings, records: nothing to record
        return Grad.UNKNOWN

    def _subscript(self, e: cst.Subscript, depth: int) -> Grad:
        base = e.value
        if isinstance(base, cst.Call) and self._gives_indices(base) and len(e.slice) == 1:
            index = e.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "1":
                return Grad.NO  # `x.max(1)[1]`: the indices
        if self.model.evaluator.value(base) == TENSORDICT:
            return Grad.UNKNOWN  # an entry of a TensorDict: the container says nothing about it
        return self.of(base, depth + 1)

    def _gives_indices(self, call: cst.Call) -> bool:
        """A call that returns ``(values, indices)``: ``sort``, ``topk``...; ``max``/``min``/``median`` only
        with a dim (``torch.max(a, b)`` is a tensor)."""
        name = self._callee(call)
        if name not in _INDEXED:
            return False
        if name not in _NEEDS_DIM:
            return True
        positional = [a.value for a in call.args if a.keyword is None]
        dim = positional[0 if isinstance(call.func, cst.Attribute) and self._torch_name(call) is None else 1:][:1]
        if any(a.keyword is not None and a.keyword.value == "dim" for a in call.args):
            return True
        value = self.model.evaluator.value(dim[0]) if dim else None
        return value is not None and value.kind is Kind.NUMBER

    def _callee(self, call: cst.Call) -> str:
        """The method name, or the name of a ``torch.X`` / ``torch.nn.functional.X`` function."""
        if isinstance(call.func, cst.Attribute):
            q = self.model.imports.qualified_name(call.func)
            if q is None or q.startswith("torch."):
                return call.func.attr.value
        return ""

    def _read(self, e: cst.BaseExpression, depth: int) -> Optional[Grad]:
        if isinstance(e, cst.Attribute):
            attr = e.attr.value
            if attr in ("data", "grad", "_grad", "indices") and self._by_kind(e.value) is not Grad.NO:
                return Grad.NO  # (of a tensor or an unknown; `.grad` requires grad only with create_graph=True)
            if attr in _VIEWS and attr not in _SAME or attr == "values":
                return self.of(e.value, depth + 1)
        read = self.model.reads.get(id(e))
        if read is None or read.defs is None or read.fact is not None:
            return None
        bindings = self.model.flatten(read.defs)
        if not bindings:
            return None
        answer = _same(Grad.NO if self.facts.switched_off(b, read) else self.binding(b, depth) for b in bindings)
        return None if answer is Grad.UNKNOWN else answer  # then what its kind says (a parameter)

    def _call(self, call: cst.Call, depth: int) -> Optional[Grad]:
        made = self._leaf(call)
        if made is not None:
            return made
        torch_name = self._torch_name(call)
        if torch_name is not None:
            return self._torch_function(torch_name, call, depth)
        if self._is_module_call(call):
            if self._parameterless(call):  # nothing of its own requires grad: what its inputs give
                return Grad.UNKNOWN if any(a.star for a in call.args) else \
                    _any(self._argument(a.value, depth) for a in call.args)
            return Grad.YES  # a layer's output: its parameters require grad
        if self._returns_without_grad(call):
            return Grad.NO  # a project function that computes what it returns under no_grad
        return self._method(call.func, call, depth) if isinstance(call.func, cst.Attribute) else None

    def _parameterless(self, call: cst.Call) -> bool:
        """The called module's class holds no parameter: a ``torch.nn`` activation, pooling, dropout... layer
        (vocabulary.py), or a project class in which the project index finds none (project_grad.py)."""
        value = self.model.evaluator.value(call.func)
        cls = value.cls if value is not None else None
        if not cls:
            return False
        if parameterless_layer(cls):
            return True
        qualified = self._project_class(cls)
        return qualified is not None and self.model.project.holds_no_parameters(qualified)

    def _project_class(self, cls: str) -> Optional[str]:
        """``cls`` (a class name as a Value holds it) qualified for the project index: this file's classes under
        the module's name; None without an index, or for a class outside the project."""
        own = getattr(self.model.project, "module_name", None)
        if self.model.project is None or not own:
            return None
        cls = f"{own}.{cls}" if cls in self.model.module_classes else cls
        return None if self.model.outside_project(cls) else cls

    def _returns_without_grad(self, call: cst.Call) -> bool:
        """The callee is a function or method of the project (this file's included) whose every returned
        value is computed with grad mode off (the project index reads it: grad_returns.py)."""
        index = self.model.project
        own = getattr(index, "module_name", None)
        if index is None or not own:
            return False
        func = call.func
        q = self.model.imports.qualified_name(func)
        if q is not None:
            return not self.model.outside_project(q) and index.returns_without_grad(q)
        if isinstance(func, cst.Name):
            read = self.model.reads.get(id(func))
            found = self.model.bindings_of_read(read) if read is not None else []
            return len(found) == 1 and found[0].how == "def" and found[0].scope.kind == "module" \
                and index.returns_without_grad(f"{own}.{func.value}")
        if not isinstance(func, cst.Attribute):
            return False
        cls = None
        if isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
            read = self.model.reads.get(id(func.value))
            owner = read.scope.flow.owner_class if read is not None else None
            cls = owner.name.value if owner is not None else None
        if cls is None:
            receiver = self.model.evaluator.value(func.value)
            cls = receiver.cls if receiver is not None and receiver.kind in (Kind.MODULE, Kind.RECORD) else None
        qualified = self._project_class(cls) if cls is not None else None
        method = index.method_of(qualified, func.attr.value) if qualified is not None else None
        return method is not None and index.returns_without_grad(method)

    def _leaf(self, call: cst.Call) -> Optional[Grad]:
        """``requires_grad=`` given to a factory, or an ``nn.Parameter``."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "requires_grad":
                flag = _literal(arg.value)
                return Grad.UNKNOWN if flag is None else Grad.YES if flag else Grad.NO
        q = self.model.imports.qualified_name(call.func)
        return Grad.YES if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") else None

    def _torch_name(self, call: cst.Call) -> Optional[str]:
        """``X`` of a call of ``torch.X``, ``torch.nn.functional.X``, ``torch.linalg.X`` ..."""
        head, _, last = (self.model.imports.qualified_name(call.func) or "").rpartition(".")
        return last if head in _TORCH_NAMESPACES else None

    def _torch_function(self, name: str, call: cst.Call, depth: int) -> Grad:
        positional = [a for a in call.args if a.keyword is None]
        if name in _FACTORIES or name in _INTEGRAL or name == "where" and len(call.args) == 1:
            return Grad.NO
        if name in ("as_tensor", "asarray"):  # returns a tensor argument itself when nothing changes
            return Grad.NO if positional and self._by_kind(positional[0].value) is Grad.NO else Grad.UNKNOWN
        tensors = []
        for arg in call.args:
            if arg.star:
                return Grad.UNKNOWN
            if arg.keyword is not None and arg.keyword.value in ("dtype", "device", "out", "dim", "keepdim"):
                continue
            items = arg.value.elements if isinstance(arg.value, (cst.List, cst.Tuple)) else None
            tensors.extend(self.of(el.value, depth + 1) for el in items) if items is not None \
                else tensors.append(self.of(arg.value, depth + 1))
        return _any(tensors) if positional else Grad.UNKNOWN

    def _method(self, func: cst.Attribute, call: cst.Call, depth: int) -> Optional[Grad]:
        name = func.attr.value
        if name in ("detach", "detach_") or name in _NEW or name in _INTEGRAL:
            return Grad.NO
        if name == "requires_grad_":
            flag = _literal(call.args[0].value) if call.args else True
            return Grad.UNKNOWN if flag is None else Grad.YES if flag else Grad.NO
        if name in ("to", "type") and any(self._integral_dtype(a.value) for a in call.args):
            return Grad.NO
        receiver = self.model.evaluator.value(func.value)
        if receiver is None or not receiver.kind.is_tensor:
            return None
        own = self.of(func.value, depth + 1)
        if name in _SAME or name == "clone":
            return own
        args = [a.value for a in call.args if not (a.keyword is not None and a.keyword.value in ("dim", "keepdim"))]
        return _any([own, *(self._argument(a, depth) for a in args)])

    def _argument(self, arg: cst.BaseExpression, depth: int) -> Grad:
        value = self.model.evaluator.value(arg)
        if value is not None and value.kind.is_known_other and value.kind is not Kind.TENSOR_LIST:
            return Grad.NO  # a dim, a size, a dtype
        return self.of(arg, depth + 1)

    def _integral_dtype(self, expr: cst.BaseExpression) -> bool:
        q = self.model.imports.qualified_name(expr) or ""
        return q.startswith("torch.") and q[6:] in _INTEGRAL_DTYPES

    # --- bindings ---------------------------------------------------------------------------------

    def binding(self, b, depth: int) -> Grad:
        memo = self._bindings.get(id(b))
        if memo is _BUSY:
            return Grad.UNKNOWN
        if memo is not None:
            return memo  # type: ignore[return-value]
        self._bindings[id(b)] = _BUSY
        try:
            result = self._binding(b, depth + 1)
        finally:
            del self._bindings[id(b)]
        self._bindings[id(b)] = result
        return result

    def _binding(self, b, depth: int) -> Grad:
        if b.how == "assign" and b.value is not None:
            value = b.value
            if b.path:
                where, length = b.path[0]
                if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == length and where >= 0 \
                        and len(b.path) == 1 and not any(isinstance(el, cst.StarredElement) for el in value.elements):
                    value = value.elements[where].value
                elif isinstance(value, cst.Call) and self._gives_indices(value) and where == 1 and length == 2:
                    return Grad.NO  # `values, indices = x.max(1)`
            if self._made_under_no_grad(b, value):
                return Grad.NO
            return self.of(value, depth + 1)
        if b.how == "aug":
            before = _same(self.binding(p, depth) for p in self.model.flatten(b.previous or ()))
            return _any([before, self.of(b.value, depth + 1)])
        if b.how == "buffer":
            return self.of(b.value, depth + 1)
        if b.how in ("param", "unknown") and isinstance(b.node, cst.Param) and self.facts.hook_gradient(b):
            return Grad.NO
        if b.how in ("import", "def", "class"):
            return Grad.NO
        value = self.model.evaluator.binding(b)
        return Grad.YES if value is not None and value.kind is Kind.PARAMETER else Grad.UNKNOWN

    def _made_under_no_grad(self, b, value: cst.BaseExpression) -> bool:
        """A new tensor computed with grad mode off (not a name, a view or a conversion, which can be
        the input itself, nor a leaf made to require grad)."""
        if isinstance(value, cst.BinaryOperation):
            fresh = isinstance(value.operator, _OPS)
        elif isinstance(value, cst.Call):
            fresh = self._fresh(value)
        else:
            fresh = False
        if not fresh:
            return False
        stmt = b.scope.flow.cfg_nodes[b.cfg] if 0 <= b.cfg < len(b.scope.flow.cfg_nodes) else None
        stack = self._stack(stmt) if stmt is not None else None
        return stack is not None and self._grad_off(stack)

    def _fresh(self, call: cst.Call) -> bool:
        """A torch function, a tensor method or a layer that computes a new tensor (not a view, not a
        conversion that may return its input, not a leaf made to require grad)."""
        if self._leaf(call) is not None:
            return False
        torch_name = self._torch_name(call)
        if torch_name is not None:
            return torch_name not in _VIEWS and torch_name not in ("as_tensor", "asarray")
        func = call.func
        if isinstance(func, cst.Attribute):
            receiver = self.model.evaluator.value(func.value)
            return func.attr.value not in _VIEWS and receiver is not None and receiver.kind.is_tensor
        return self._is_module_call(call)

    def _is_module_call(self, call: cst.Call) -> bool:
        value = self.model.evaluator.value(call.func)
        return value is not None and value.kind is Kind.MODULE

    def _stack(self, node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
        """The statement-level ancestors of a statement, the module first."""
        if self._parents is None:
            self._parents = {}
            pending: List[cst.CSTNode] = [self.model.module]
            while pending:
                parent = pending.pop()
                for child in children(parent):
                    if isinstance(child, (cst.BaseExpression, cst.Decorator, cst.Parameters)):
                        continue
                    self._parents[id(child)] = parent
                    if not isinstance(child, cst.BaseSmallStatement):
                        pending.append(child)
        if id(node) not in self._parents:
            return None
        stack = [node]
        while id(stack[-1]) in self._parents:
            stack.append(self._parents[id(stack[-1])])
        return stack[::-1]
