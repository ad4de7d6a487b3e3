"""Evidence that a tensor expression is 0-d (TCL107): ``torch.stack`` of 0-d tensors has the shape ``(n,)`` that
``torch.tensor`` gives, but of 1-element 1-d tensors it gives ``(n, 1)``, so the advice and the fix depend on it.
Checked on torch by the claim ``TCL107-zero-dim-evidence``."""

from __future__ import annotations

import libcst as cst

from ..engine import FileContext
from ..semantic import Kind
from ._dtypes import LIKE

#: Tensor methods whose result is 0-d when called without arguments (``loss.sum()``, ``x.max()``).
WHOLE_REDUCTIONS = frozenset("sum mean prod max min norm std var median all any nansum nanmean count_nonzero".split())
#: torch functions whose result is 0-d: of one tensor argument (a whole reduction) or of two (``dot``).
_ONE_ARGUMENT = WHOLE_REDUCTIONS | {"trace"}
_TWO_ARGUMENTS = frozenset({"dot", "vdot"})
#: torch.nn.functional losses: 0-d with their default reduction ("mean"), or "sum".
LOSSES = frozenset("""mse_loss l1_loss smooth_l1_loss huber_loss soft_margin_loss multilabel_soft_margin_loss
    cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div""".split())
#: Methods whose result has their receiver's shape (a conversion, a copy, an elementwise op).
SHAPE_KEEPING = frozenset("""to cpu cuda float double half bfloat16 long int short bool byte char detach clone contiguous
    abs neg sqrt rsqrt exp log sigmoid tanh relu square requires_grad_""".split())
_CREATIONS = frozenset("zeros ones empty full rand randn".split())
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)
_MAX_DEPTH = 6


def zero_dim(context: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """The model has evidence that ``expr`` is a 0-d tensor (or a number, in arithmetic with one)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return zero_dim(context, expr.expression, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
        return zero_dim(context, expr.left, depth + 1) and zero_dim(context, expr.right, depth + 1)
    if isinstance(expr, cst.Name):
        if context.kind_of(expr) is Kind.NUMBER:
            return True
        bindings = context.reaching(expr)
        return bool(bindings) and all(b.how == "assign" and not b.path and isinstance(b.value, cst.BaseExpression)
                                      and zero_dim(context, b.value, depth + 1) for b in bindings)
    if isinstance(expr, cst.Call):
        return _zero_dim_call(context, expr, depth)
    return False


def _zero_dim_call(context: FileContext, call: cst.Call, depth: int) -> bool:
    if any(arg.star for arg in call.args):
        return False
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    qualified = context.qualified_name(call.func) or ""
    head, _, name = qualified.rpartition(".")
    if head == "torch.nn.functional" and name in LOSSES:
        reduction = next((arg.value for arg in call.args if arg.keyword is not None
                          and arg.keyword.value == "reduction"), None)
        return reduction is None or isinstance(reduction, cst.SimpleString) \
            and reduction.evaluated_value in ("mean", "sum", "batchmean")
    if head == "torch":
        if name in ("tensor", "scalar_tensor") and positional \
                and isinstance(positional[0].value, (cst.Integer, cst.Float)):
            return True
        if name in _CREATIONS and positional and isinstance(positional[0].value, (cst.Tuple, cst.List)) \
                and not positional[0].value.elements:
            return True  # torch.zeros(()), torch.full((), v)
        if name in LIKE and len(positional) == 1:
            return zero_dim(context, positional[0].value, depth + 1)
        if keywords - {"dtype"}:
            return False
        return name in _ONE_ARGUMENT and len(positional) == 1 or name in _TWO_ARGUMENTS and len(positional) == 2
    func = call.func
    if not isinstance(func, cst.Attribute) or context.kind_of(func.value) is not Kind.TENSOR:
        return False
    if func.attr.value in SHAPE_KEEPING:
        return zero_dim(context, func.value, depth + 1)
    if func.attr.value in _TWO_ARGUMENTS:  # `v0.dot(v1)`: 1-d tensors only, a 0-d result
        return len(positional) == 1 and not keywords
    return func.attr.value in WHOLE_REDUCTIONS and not positional and not keywords - {"dtype"}
