"""TCL120: ``h[idx].zero_()`` with an advanced index (an integer array, a mask, a list): writes a copy."""

from __future__ import annotations

import ast
from typing import Optional, Tuple

import libcst as cst

from ..codes import KIND_EVIDENCE, NOT_WRITES, TRIGGERS, INDEXED_IN_PLACE, is_in_place
from ..diagnostics import Applicability
from ..engine import Rule
from ..semantic import Kind
from ._advanced_index import advanced_index

#: In-place methods that change no values (their effect on a copy is as lost, but it is not a write).
NOT_VALUE_WRITES = NOT_WRITES | {"detach_", "resize_", "resize_as_", "set_"}
#: Where in-place functions of torch live (``torch.zero_``, ``torch.nn.init.normal_``, ``F.relu_``): each writes
#: values into its first argument.
IN_PLACE_MODULES = frozenset({"torch", "torch.nn.init", "torch.nn.functional"})
#: torch's in-place functions that change no values (strides and sizes).
NOT_VALUE_FUNCTIONS = frozenset({"as_strided_", "resize_as_sparse_"})
#: The fixes: the method, and the assignment that writes through the index instead.
_AUGMENTED = {"add_": cst.AddAssign, "mul_": cst.MultiplyAssign}
_FLOAT16_MAX = 65504.0  # a larger literal: `fill_` and an indexed assignment may differ on float16 (overflow)


class IndexedCopyWrite(Rule):
    """Indexing a tensor with an integer tensor or array, a bool mask or a list (advanced indexing)
    returns a *copy*: ``h[done_ids].zero_()`` zeroes the copy, which is thrown away, and ``h`` keeps
    its values. A slice, an int or ``None`` give a view, whose write lands (silent), and so do
    ``h[idx] = 0``, ``h[idx] += 1`` and ``h.index_fill_(0, idx, 0)``.

    Reported: an in-place method that writes values, called as a statement on a subscript of a tensor
    whose index is known to be advanced (evidence: ``np.where(c)[0]``, ``nonzero()``, a comparison
    with a tensor, ``torch.tensor([0, 2])``, ``randperm``, ``argsort``, a list of ints...), also through
    ``.data`` or ``.detach()`` and with a tuple index one element of which is advanced; and an in-place
    function of ``torch``, ``torch.nn.init`` or ``torch.nn.functional`` called as a statement on one
    (``torch.nn.init.normal_(w[idx])``). Unknown indices, a used result
    and non-tensor receivers stay silent. The fix (``h[idx] = 0`` for ``zero_()``, ``= v`` for
    ``fill_(v)`` with a number, ``+= v``/``*= v`` for ``add_(v)``/``mul_(v)``) is unsafe: the write now
    lands, which is the point.
    """

    code = "TCL120"
    name = "indexed-copy-write"
    message = ("{indexed} indexes with {evidence}, which returns a copy: `{method}()` writes the copy and {base} "
               "is unchanged; {advice}")
    triggers = TRIGGERS["TCL120"]  # in codes.py, importable without LibCST
    segment_triggers = (INDEXED_IN_PLACE + "|" + KIND_EVIDENCE,)

    VALID = [
        "import torch\nh = torch.zeros(4)\nh[0:2].zero_()",
        "import torch\nh = torch.zeros(4)\nidx = torch.tensor([0, 2])\nh[idx] = 0",
        "import torch\nh = torch.zeros(4)\nidx = torch.tensor([0, 2])\ny = h[idx].add_(1)",
        "import torch\ndef f(h: torch.Tensor, idx):\n    h[idx].zero_()",
        "import numpy as np\na = np.zeros(4)\na[[0, 2]].fill(0)",
        "import torch\nw = torch.nn.Parameter(torch.ones(4, 3))\ntorch.nn.init.normal_(w[1:3], std=0.02)",
    ]
    INVALID = [
        "import torch\nimport numpy as np\nh = torch.zeros(4, 3)\ndone_ids = np.where(done)[0]\nh[done_ids].zero_()",
        "import torch\nh = torch.zeros(4)\nh[[0, 2]].fill_(5)",
        "import torch\nh = torch.zeros(4)\nh[h > 0].add_(1)",
        "import torch\nh = torch.zeros(4, 3)\nh.data[:, [0, 2]].mul_(0)",
        "import torch\nh = torch.zeros(4, 3)\nh[[0, 2]].detach().zero_()",
        "import torch\nw = torch.nn.Parameter(torch.ones(4, 3))\ntorch.nn.init.normal_(w[[1, 3]], std=0.02)",
    ]

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        function = self._in_place_function(call)
        if function is not None:
            self._report_function(call, function)
            return
        if not isinstance(call.func, cst.Attribute):
            return
        first, chained = call, False
        while isinstance(first.func.value, cst.Call) and isinstance(first.func.value.func, cst.Attribute) \
                and _writes(first.func.value.func.attr.value):  # h[idx].add_(1).mul_(2): all on the copy
            first, chained = first.func.value, True
        method = first.func.attr.value
        if not all(_writes(m) for m in (method, call.func.attr.value)):
            return
        receiver = first.func.value
        found = self._indexed_copy(receiver)
        if found is None:
            return
        subscript, base, evidence = found
        fix = None if chained or subscript is not receiver else self._fix(node, first, subscript, base)
        self.report(call, self._message(subscript, base, evidence, method, fix), replacement=fix, target=node,
                    applicability=Applicability.UNSAFE)

    def _in_place_function(self, call: cst.Call) -> Optional[str]:
        """``torch.zero_`` / ``torch.nn.init.normal_`` / ``F.relu_`` (qualified): an in-place function of torch
        that writes values into its first argument; None for anything else."""
        qualified = self.context.qualified_name(call.func) or ""
        module, _, name = qualified.rpartition(".")
        if module in IN_PLACE_MODULES and _writes(name) and name not in NOT_VALUE_FUNCTIONS:
            return qualified
        return None

    def _report_function(self, call: cst.Call, function: str) -> None:
        """``torch.nn.init.normal_(w[idx])``: the first argument a subscript of a dotted name (what the trigger
        reads), maybe with ``.data``/``.detach()`` after it. No fix: the writes have no assignment form here."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return
        argument = call.args[0].value
        found = self._indexed_copy(argument)
        if found is None or not _dotted(_innermost_subscript(argument).value):
            return
        subscript, base, evidence = found
        name = self.context.module.code_for_node(call.func)
        self.report(call, self._message(subscript, base, evidence, name if len(name) <= 40 else function, None))

    def _message(self, subscript: cst.Subscript, base: cst.BaseExpression, evidence: str, method: str,
                 fix: Optional[cst.BaseSmallStatement]) -> str:
        code = self.context.module.code_for_node
        owner = _still_the_copy(base)  # `h.data[idx]`: h is unchanged
        indexed = _quoted(code(subscript.with_changes(lpar=[], rpar=[])), 40, "this subscript")
        if fix is not None:
            advice = f"assign through the index instead ({_quoted(code(fix), 80, 'an assignment')})"
        else:
            advice = "write through the index instead (an assignment `x[idx] = v`, `index_put_`, `index_fill_`)"
        return self.message.format(indexed=indexed, evidence=evidence, method=method,
                                   base=_quoted(code(owner.with_changes(lpar=[], rpar=[])), 30, "the tensor"),
                                   advice=advice)

    def _indexed_copy(self, receiver: cst.BaseExpression) \
            -> Optional[Tuple[cst.Subscript, cst.BaseExpression, str]]:
        """The advanced subscript of a tensor under ``receiver`` (``h[idx]``, ``h[idx].data``,
        ``h[idx].detach()``, ``h.data[idx]``, ``h[idx][0]``), its tensor and what makes it advanced; None when
        there is none (the shape the trigger admits: the receiver is a subscript, maybe with ``.data`` or
        ``.detach()`` after it)."""
        current = _still_the_copy(receiver)
        if not isinstance(current, cst.Subscript):
            return None
        while isinstance(current, cst.Subscript):
            evidence = advanced_index(self.context, current.slice)
            if evidence is not None:
                if self.context.kind_of(current.value) is not Kind.TENSOR:
                    return None
                return current, current.value, evidence
            current = _still_the_copy(current.value)
        return None

    def _fix(self, node: cst.Expr, call: cst.Call, subscript: cst.Subscript,
             base: cst.BaseExpression) -> Optional[cst.BaseSmallStatement]:
        """``h[idx] = 0`` / ``= v`` / ``+= v`` / ``*= v``; None for a parameter (a leaf that requires grad
        refuses an in-place write outside ``no_grad``, where the copy's write ran) and other methods."""
        if self.context.value_of(base).kind is Kind.PARAMETER:
            return None
        method = call.func.attr.value  # type: ignore[attr-defined]
        args = call.args
        if any(arg.keyword is not None or arg.star for arg in args):
            return None
        target = subscript.with_changes(lpar=[], rpar=[])
        if method == "zero_" and not args:
            value: cst.BaseExpression = cst.Integer("0")
        elif method == "fill_" and len(args) == 1 and _small_number(args[0].value):
            value = args[0].value
        elif method in _AUGMENTED and len(args) == 1:
            operator = _AUGMENTED[method]()
            return cst.AugAssign(target=target, operator=operator, value=args[0].value, semicolon=node.semicolon)
        else:
            return None
        return cst.Assign(targets=[cst.AssignTarget(target=target)], value=value, semicolon=node.semicolon)


def _writes(method: str) -> bool:
    return is_in_place(method) and method not in NOT_VALUE_WRITES


def _is_data(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "data"


def _still_the_copy(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Below any ``.data`` and ``.detach()``: both share the storage of what they are taken of, so on an
    indexed copy they are still the copy (``TCL120-advanced-index-copy``)."""
    while True:
        if _is_data(expr):
            expr = expr.value  # type: ignore[attr-defined]
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "detach" and not expr.args:
            expr = expr.func.value
        else:
            return expr


def _innermost_subscript(expr: cst.BaseExpression) -> cst.Subscript:
    """``h`` 's subscript in ``h.data[i][j].detach()``: the first one written (``expr`` holds one)."""
    found = None
    expr = _still_the_copy(expr)
    while isinstance(expr, cst.Subscript):
        found, expr = expr, _still_the_copy(expr.value)
    assert found is not None
    return found


def _dotted(expr: cst.BaseExpression) -> bool:
    """A name or an attribute chain of names (``self.hidden``, ``h.data``)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


def _small_number(expr: cst.BaseExpression) -> bool:
    """A number literal (int, float, bool; maybe negative) that no dtype overflows differently: assigning it
    casts as ``fill_`` does (``TCL120-fix-assignment-casts-like-fill``)."""
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False")
    inner = expr.expression if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
        else expr
    if not isinstance(inner, (cst.Integer, cst.Float)) or inner.lpar or expr.lpar:
        return False
    try:
        return abs(float(ast.literal_eval(inner.value))) <= _FLOAT16_MAX
    except (ValueError, SyntaxError):
        return False


def _quoted(text: str, limit: int, instead: str) -> str:
    return f"`{text}`" if len(text) <= limit and "\n" not in text else instead
