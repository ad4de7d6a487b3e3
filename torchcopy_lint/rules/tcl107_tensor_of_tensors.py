"""TCL107: ``torch.tensor([t1, t2, ...])`` of tensors instead of ``torch.stack``."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ..codes import KIND_EVIDENCE, TENSOR_ALIAS, TENSORS_CALL, TRIGGERS
from ..diagnostics import Applicability
from ..engine import Rule
from ..semantic import Kind, Value
from ..walk import descendants_with_paths
from ._build import keyword_values, method, strip_trailing_comma
from ._zero_dim import zero_dim

_CONSTRUCTORS = frozenset({"torch.tensor", "torch.as_tensor"})
_SCOPE_BOUNDARIES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_READING_BUILTINS = frozenset("print len sum min max sorted any all str repr bool isinstance".split())
_TENSOR_LIST = Value(Kind.TENSOR_LIST)


class TensorOfTensors(Rule):
    """``torch.tensor(L)`` (and ``torch.as_tensor(L)``) converts every element of a
    list of tensors to a Python scalar: multi-element tensors raise ``ValueError``,
    0-d tensors that require grad silently lose their graph (the result does not
    require grad; torch only warns), and 1-element 1-d tensors give shape ``(n,)``
    where ``torch.stack`` gives ``(n, 1)``. ``torch.stack(L)`` builds the tensor on
    the device, keeps the graph and says what is meant.

    Flagged: a list/tuple display whose every element is known to be a tensor,
    ``list(...)`` of tensors, or a local list that every binding reaching the call
    makes a list of tensors (``[]`` only ever filled with ``.append(<tensor>)``),
    otherwise only read (``len``, ``print``, torch's functions) or rebound by its own
    conversion. Anything else (``t.item()``, ``t.shape[0]``, numbers, unknown values,
    a list passed to an unknown function) is left alone.
    """

    code = "TCL107"
    name = "tensor-of-tensors"
    message = (
        "`torch.tensor()` of a list of tensors converts each one to a Python scalar: multi-element tensors "
        "raise and 0-d tensors lose their graph; use `torch.stack()`"
    )
    #: Where nothing shows the elements are 0-d: of 1-element tensors ``torch.stack`` gives shape ``(n, 1)``.
    shape_unknown = (
        "`torch.tensor()` of a list of tensors converts each one to a Python scalar: multi-element tensors "
        "raise and 0-d tensors lose their graph; use `torch.stack()` for 0-d elements, "
        "`torch.stack(...).flatten()` for 1-element ones (`stack` alone gives them shape `(n, 1)`)"
    )
    triggers = TRIGGERS["TCL107"]  # in codes.py, importable without LibCST
    # the call with a name (or a display starting with one) as its argument, and what kinds are read from
    segment_triggers = (TENSORS_CALL + "|" + KIND_EVIDENCE,)
    unprunable = TENSOR_ALIAS  # `tensor` under another name: calls can't be found by text

    VALID = [
        "import torch\nx = torch.tensor([1.0, 2.0])",
        "import torch\na = torch.zeros(())\nx = torch.tensor([a.item(), 2.0])",
        "import torch\na = torch.zeros(3)\nx = torch.tensor([a.shape[0], a.size(0), a.numel()])",
        "import torch\ndef f(a, b):\n    return torch.tensor([a, b])",
        "import torch\nlosses = []\nfor x in data:\n    losses.append(model(x).item())\ntorch.tensor(losses)",
        "import torch\ndef f(x):\n    xs = []\n    xs.append(torch.zeros(()))\n    g(xs)\n    return torch.tensor(xs)",
        "import torch\ndef f(n):\n    xs = [torch.zeros(())]\n    xs.append(n)\n    return torch.tensor(xs)",
    ]
    INVALID = [
        "import torch\na, b = torch.zeros(()), torch.ones(())\nx = torch.tensor([a, b])",
        "import torch as th\ndef f(a: th.Tensor, b: th.Tensor):\n    return th.as_tensor((a, b), dtype=th.float64)",
        "import torch\nlosses = []\nfor x in data:\n    loss = torch.nn.functional.mse_loss(x, x)\n"
        "    losses.append(loss)\ntorch.tensor(losses)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or self.context.qualified_name(node.func) not in _CONSTRUCTORS:
            return
        data = node.args[0]
        if data.star or (data.keyword is not None and data.keyword.value != "data"):
            return
        value = data.value
        if isinstance(value, (cst.List, cst.Tuple)):
            if not self._all_tensors(value.elements):
                return
            if all(zero_dim(self.context, el.value) for el in value.elements):
                self.report(node, replacement=self._replacement(node, data),
                            applicability=Applicability.UNSAFE)
            else:  # no fix: stacking 1-element tensors would change the shape
                self.report(node, self.shape_unknown)
        elif isinstance(value, cst.Name) and self._known_empty(value):
            return  # `if keep: return torch.stack(keep)` before: nothing is converted, and stack([]) raises
        elif isinstance(value, cst.Name) and self._list_of_tensors(value, node) or isinstance(value, cst.Call) \
                and _is_builtin_call(self.context, value, ("list", "tuple")) \
                and self.context.value_of(value).kind is Kind.TENSOR_LIST:
            # No fix: a list filled elsewhere may be empty, and torch.stack([]) raises; its elements' shapes are
            # not followed.
            self.report(node, self.shape_unknown)

    def _known_empty(self, name: cst.Name) -> bool:
        """A test found the list false (empty) on every path here and nothing filled it since."""
        read = self.context.read(name)
        return read is not None and read.falsy

    def _all_tensors(self, elements: Sequence[cst.BaseElement]) -> bool:
        return bool(elements) and all(
            not isinstance(el, cst.StarredElement) and self.context.kind_of(el.value) is Kind.TENSOR
            for el in elements
        )

    def _list_of_tensors(self, name: cst.Name, call: cst.Call) -> bool:
        """``name`` is a local list: every binding that reaches this call is a list of known tensors (a
        display, ``[]`` filled by appends of tensors, ``list(...)`` of tensors), and every other use of it
        in its scope is another such binding, ``name.append(<known tensor>)``, an argument of a call that
        does not change it (``len``, ``print``, torch's and numpy's functions), this call, or a read of
        what this call made (``preds = torch.tensor(preds)`` and what follows)."""
        stack = self.context.stack
        index = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], (cst.FunctionDef, cst.Module))),
                     None)
        if index is None:
            return False
        reaching = self.context.reaching(name)
        if not reaching or not all(self._binds_tensor_list(b) for b in reaching):
            return False
        semantic = self.context.semantic
        for node, path in self._names_in(stack[index], stack[: index + 1]).get(name.value, ()):
            if node is name:
                continue
            if any(isinstance(p, _SCOPE_BOUNDARIES) for p in path[index + 1:]):
                return False  # used by a nested function or class: not followed
            use = _use_of(node, path)
            statement = path[-1] if isinstance(path[-1], cst.AnnAssign) else path[-2]
            if use == "binding" and (getattr(statement, "value", None) is call or self._binds_tensor_display(statement)
                                     or any(b.node is node for b in reaching)):
                continue
            if use == "append" and semantic.kind_of(path[-2].args[0].value, path[:-1]) is Kind.TENSOR:
                continue
            if use in ("len", "test") or use == "argument" and _is_pure_call(self.context, path[-2]):
                continue
            found = semantic.reaching(node, path) if use != "binding" else []
            if not found or not all(b.how == "assign" and b.value is call for b in found):
                return False  # not a read of what this call made
        return True

    def _binds_tensor_list(self, binding) -> bool:
        """``name = <a list of known tensors>`` (a display, ``[]`` filled with tensors, ``list(...)``)."""
        return binding.how == "assign" and not binding.path and isinstance(binding.value, (cst.List, cst.Call)) \
            and self.context.semantic.evaluator.binding(binding) == _TENSOR_LIST

    def _names_in(self, scope: cst.CSTNode, scope_path: Sequence[cst.CSTNode]
                  ) -> Dict[str, List[Tuple[cst.Name, List[cst.CSTNode]]]]:
        """Every name below ``scope`` with its ancestors, by identifier: one walk per scope and file, so
        that many ``torch.tensor(name)`` calls in one scope cost linear time, not quadratic."""
        cache = self.__dict__.setdefault("_names_by_scope", {})
        found = cache.get(id(scope))
        if found is None:
            found = cache[id(scope)] = {}
            for node, path in descendants_with_paths(scope, list(scope_path)):
                if isinstance(node, cst.Name):
                    found.setdefault(node.value, []).append((node, path))
        return found

    def _binds_tensor_display(self, statement: cst.CSTNode) -> bool:
        """``name = []`` or ``name = [<known tensors>]`` (``statement`` is the Assign or AnnAssign)."""
        value = getattr(statement, "value", None)
        return isinstance(value, cst.List) and (not value.elements or self._all_tensors(value.elements))

    def _replacement(self, node: cst.Call, data: cst.Arg) -> Optional[cst.BaseExpression]:
        func = node.func
        if not isinstance(func, cst.Attribute) or self.context.qualified_name(func.value) != "torch" \
                or data.keyword is not None:
            return None
        kwargs = keyword_values(node, ("dtype", "device"))
        if kwargs is None:  # requires_grad=, pin_memory=, ...: no mechanical equivalent
            return None
        stacked = node.with_changes(func=func.with_changes(attr=cst.Name("stack")), args=[strip_trailing_comma(data)],
                                    lpar=[], rpar=[])
        if not kwargs:
            return stacked.with_changes(lpar=node.lpar, rpar=node.rpar)
        to_args = [*node.args[1:-1], strip_trailing_comma(node.args[-1])]
        return method(stacked, "to", to_args).with_changes(lpar=node.lpar, rpar=node.rpar)


def _use_of(name: cst.Name, path: List[cst.CSTNode]) -> str:
    """How ``name`` (with ancestors ``path``) is used: 'binding' (``name = [...]``, alone on the left),
    'append' (``name.append(x)``), 'len' (``len(name)``), 'test' (its truth value), 'argument' or 'other'."""
    parent = path[-1]
    grand = path[-2] if len(path) >= 2 else None
    if isinstance(parent, cst.AssignTarget) and parent.target is name and isinstance(grand, cst.Assign) \
            and len(grand.targets) == 1:
        return "binding"
    if isinstance(parent, cst.AnnAssign) and parent.target is name and parent.value is not None:
        return "binding"
    if isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value == "append" \
            and isinstance(grand, cst.Call) and grand.func is parent and len(grand.args) == 1 \
            and grand.args[0].keyword is None and not grand.args[0].star:
        return "append"
    if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and isinstance(grand.func, cst.Name) \
            and grand.func.value == "len" and len(grand.args) == 1:
        return "len"
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is name \
            or isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not) \
            or isinstance(parent, cst.BooleanOperation):
        return "test"  # its truth value: `if keep:`, `not keep`, `keep and ...`
    if isinstance(parent, cst.Arg) and parent.value is name and isinstance(grand, cst.Call) and not parent.star:
        return "argument"
    return "other"


def _is_builtin_call(context, call: cst.Call, names) -> bool:
    func = call.func
    return isinstance(func, cst.Name) and func.value in names and not context.imports.is_imported(func.value)


def _is_pure_call(context, call: cst.Call) -> bool:
    """A call that does not change the lists it is given: builtins that only read, torch's and numpy's
    functions (``torch.stack``, ``torch.save``, ``np.mean``)."""
    if _is_builtin_call(context, call, _READING_BUILTINS):
        return True
    q = context.qualified_name(call.func)
    return q is not None and q.split(".")[0] in ("torch", "numpy", "math", "statistics")
