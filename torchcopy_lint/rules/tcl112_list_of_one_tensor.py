"""TCL112: ``xs = [t] * n`` (one tensor n times) and then an element written in place."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import TRIGGERS
from ..imports import dotted_name
from ..semantic import Kind
from ..walk import descendants
from ._alias import AliasRule, binding_at
from ._build import method

#: torch constructors that make a new tensor from their arguments alone (no random draw, no sharing):
#: calling one per element gives n distinct tensors equal to the one the list repeated.
_CONSTRUCTORS = frozenset("torch." + name for name in """zeros ones empty full eye arange linspace logspace
    zeros_like ones_like empty_like full_like""".split())
_NEW_METHODS = frozenset({"new_zeros", "new_ones", "new_full", "new_empty"})
_PURE_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


class ListOfOneTensor(AliasRule):
    """``[t] * n`` is a list holding the *same* tensor ``n`` times, not ``n``
    tensors. That is harmless while elements are only rebound (``xs[i] = v``) or
    read, and wrong as soon as one is written in place: ``xs[i].add_(1)``,
    ``xs[i][j] = v`` or ``xs[i] += v`` changes every element at once.

    Flagged where the list is made (``xs = [t] * n`` or ``n * [t]`` with ``t`` known
    to be a tensor and ``n`` not the literal 0 or 1) when an element of ``xs`` is
    written in place and ``xs`` is read again afterwards on the same path; silent
    when the code also rebinds elements (``xs[i] = v``: the usual "fill the slots"
    pattern), for lists of numbers, numpy arrays and values of unknown type. The fix
    ``[t.clone() for _ in range(n)]`` (or the same constructor once per element,
    ``[torch.zeros(3) for _ in range(n)]``) is unsafe: the elements become distinct,
    which is the point, but a reviewer must agree.
    """

    code = "TCL112"
    name = "list-of-one-tensor"
    message = (
        "`[t] * n` holds the same tensor n times: writing one element in place changes every element; "
        "build n tensors (`[t.clone() for _ in range(n)]`)"
    )
    triggers = TRIGGERS["TCL112"]  # in codes.py, importable without LibCST

    VALID = [
        "import torch\nxs = [torch.zeros(3)] * 4\nxs[0] = xs[0] + 1\nprint(xs)",
        "import torch\nxs = [torch.zeros(3)] * 4\ny = torch.stack(xs)",
        "xs = [0] * 4\nxs[0] += 1\nprint(xs)",
        "import numpy as np\nxs = [np.zeros(3)] * 4\nxs[0] += 1\nprint(xs)",
        "import torch\nxs = [torch.zeros(3)] * 4\nfor i in range(4):\n    xs[i] = torch.ones(3)\nxs[0].add_(1)\n"
        "print(xs)",
        "def f(t):\n    xs = [t] * 4\n    xs[0].add_(1)\n    return xs",
        "import torch\nxs = [torch.zeros(3)] * 1\nxs[0].add_(1)\nprint(xs)",
    ]
    INVALID = [
        "import torch\nxs = [torch.zeros(3)] * 4\nxs[0].add_(1)\nprint(xs)",
        "import torch\ndef f(t: torch.Tensor, n):\n    xs = n * [t]\n    for i in range(n):\n        xs[i][0] = i\n"
        "    return xs",
        "import torch\nxs = [torch.ones(2)] * 3\nxs[1] += 1\ntotal = sum(xs)",
    ]

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Multiply):
            return
        for listed, count in ((node.left, node.right), (node.right, node.left)):
            if isinstance(listed, cst.List) and len(listed.elements) == 1 \
                    and isinstance(listed.elements[0], cst.Element):
                self._check(node, listed, count)
                return

    def _check(self, node: cst.BinaryOperation, listed: cst.List, count: cst.BaseExpression) -> None:
        if isinstance(count, cst.Integer) and count.evaluated_value in (0, 1):
            return
        assign = self.context.parent()
        if not isinstance(assign, cst.Assign) or assign.value is not node or len(assign.targets) != 1 \
                or not self._assigned_shape(assign, node, listed):
            return
        element = listed.elements[0].value
        target = assign.targets[0].target
        key = dotted_name(target)
        if key is None:
            return
        scope = self._flow_scope()
        binding = binding_at(scope, key, target) if scope is not None else None
        if binding is None:
            return
        storage = self.context.semantic.storage
        flow = binding.scope.flow
        side = storage.side_of_binding(binding)
        if any(w.how == "subscript" and w.items == 0 and storage.is_write(w, side)
               for cfg in range(len(flow.cfg_nodes)) for w in storage.writes_at(flow, cfg)):
            return  # elements are rebound somewhere: the slots are filled, not shared
        hazard = storage.hazard(flow, binding.cfg, [side], [side], items=1)
        if hazard is None or self.context.kind_of(element) is not Kind.TENSOR:
            return  # the kind last: it may read other modules
        detail = f"an element of `{key}` is written in place at line {{write}}"
        self.report_hazard(node, hazard, detail, replacement=self._fix(element, count))

    def _assigned_shape(self, assign: cst.Assign, node: cst.BinaryOperation, listed: cst.List) -> bool:
        """The shape the trigger (codes.LIST_TIMES_ASSIGNED) admits: `= [x] * n` with at most one level of
        brackets inside the list, or `= n * [x]` with no `=` and no line break between `=` and `*`."""
        code = self.context.module.code_for_node
        if listed is node.left:
            depth, deepest = 0, 0
            for char in code(listed):
                depth += char == "["
                depth -= char == "]"
                deepest = max(deepest, depth)
            return deepest <= 2
        head = "".join([code(assign.targets[0].whitespace_after_equal), *(code(p) for p in node.lpar),
                        code(node.left), code(node.operator.whitespace_before)])
        return not any(char in head for char in "=\r\n")

    def _flow_scope(self):
        """The analysed scope (function or module) of the node being visited; None in a class body."""
        semantic = self.context.semantic
        semantic.ensure(self.context.stack)
        for node in reversed(self.context.stack):
            if isinstance(node, (cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(node, cst.FunctionDef):
                return _Holder(semantic.function_scope(node))
        return _Holder(semantic.module_scope())

    def _fix(self, element: cst.BaseExpression, count: cst.BaseExpression) -> Optional[cst.ListComp]:
        if any(isinstance(n, cst.Name) and n.value == "_" for n in (element, *descendants(element))):
            return None
        if isinstance(element, (cst.Name, cst.Attribute)):
            item: cst.BaseExpression = method(element, "clone")
        elif self._constructor(element):
            item = element
        else:
            return None
        if not isinstance(count, (cst.NamedExpr, cst.GeneratorExp)):
            count = count.with_changes(lpar=[], rpar=[])
        loop = cst.CompFor(target=cst.Name("_"), iter=cst.Call(func=cst.Name("range"), args=[cst.Arg(count)]))
        return cst.ListComp(elt=item, for_in=loop)

    def _constructor(self, element: cst.BaseExpression) -> bool:
        """A call of a deterministic torch constructor whose arguments have no side effects."""
        if not isinstance(element, cst.Call) or not all(_pure(a.value) and not a.star for a in element.args):
            return False
        func = element.func
        if isinstance(func, cst.Attribute) and func.attr.value in _NEW_METHODS:
            return _pure(func.value)
        return self.context.qualified_name(func) in _CONSTRUCTORS


class _Holder:
    """What ``binding_at`` asks of a read: its scope."""

    def __init__(self, scope) -> None:
        self.scope = scope


def _pure(expr: cst.BaseExpression) -> bool:
    """Names, attributes, literals and operators on them: evaluating it again gives the same value."""
    if isinstance(expr, _PURE_LEAVES):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _pure(e.value) for e in expr.elements)
    if isinstance(expr, cst.UnaryOperation):
        return _pure(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _pure(expr.left) and _pure(expr.right)
    if isinstance(expr, cst.Subscript):
        return _pure(expr.value) and all(
            isinstance(s.slice, cst.Index) and _pure(s.slice.value) for s in expr.slice)
    return False
