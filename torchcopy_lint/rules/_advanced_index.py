"""TCL120's evidence that a subscript is *advanced* indexing, which returns a copy (names only, no torch import).

An index is advanced when it is (or a tuple holding) an integer tensor or array of at least one dimension, a
bool tensor or array of any dimension (a Python bool too), or a list of ints or bools. A 0-d integer tensor or
array (``x.argmax()``, ``np.array(1)``) indexes like an int: a view (``TCL120-basic-index-is-a-view``). So an
integer tensor counts only where its producer always gives one dimension or more (``arange``, ``randperm``,
``nonzero``, ``argsort``, ``topk(..).indices``, ``where(cond)``, a literal list); anything else is unknown.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from ..engine import FileContext
from ..semantic import Kind
from ..semantic.vocabulary import BOOL_RESULTS
from ._dtypes import COMPARISONS
from ._exact import integer

INT_TENSOR = "an integer tensor"
INT_ARRAY = "an integer array"
MASK = "a bool mask"
INT_LIST = "a list of integers"
BOOL_LIST = "a list of bools"
TENSORS = "a tuple of index tensors"
ARRAYS = "a tuple of index arrays"

#: torch functions whose result, as an index, is always advanced (whatever their arguments, if they run).
_TORCH_INT = frozenset("arange randperm argsort nonzero multinomial".split())
_TORCH_MASK = BOOL_RESULTS
_NUMPY_INT = frozenset("flatnonzero argsort arange argwhere random.permutation".split())
_NUMPY_TUPLE = frozenset({"nonzero", "where"})  # one argument: a tuple of integer arrays
#: Tensor methods whose result is a mask (any dimension: a 0-d bool index copies too).
_MASK_METHODS = _TORCH_MASK | {"bool"}
_MASK_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor)
_DEPTH = 4  # names followed through their bindings


def advanced_index(context: FileContext, elements: Sequence[cst.SubscriptElement]) -> Optional[str]:
    """What makes ``x[elements]`` advanced indexing (a description for the message), or None when the index is
    basic or not known. One advanced element of a tuple makes the whole subscript advanced (``x[:, idx]``)."""
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Index) and index.star is None:
            found = _evidence(context, index.value, 0, tuple_ok=len(elements) == 1)
            if found is not None:
                return found
    return None


def _evidence(context: FileContext, expr: cst.BaseExpression, depth: int, tuple_ok: bool = False) -> Optional[str]:
    if isinstance(expr, cst.Tuple) and tuple_ok:
        return next((f for e in expr.elements if not isinstance(e, cst.StarredElement)
                     for f in [_evidence(context, e.value, depth)] if f is not None), None)
    if isinstance(expr, cst.List):
        return _literal_list(expr)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        found = _named(context, expr, depth)
        if found is not None or isinstance(expr, cst.Name):
            return found
        if expr.attr.value == "indices" and _sorted_call(expr.value):
            return INT_TENSOR  # x.topk(k).indices, torch.sort(x).indices
        return None
    if isinstance(expr, cst.Comparison):
        if len(expr.comparisons) == 1 and isinstance(expr.comparisons[0].operator, COMPARISONS) and any(
                _tensor_or_evidence(context, side, depth) for side in (expr.left, expr.comparisons[0].comparator)):
            return MASK
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return MASK if _evidence(context, expr.expression, depth) == MASK else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _MASK_OPERATORS):
        both = (_evidence(context, expr.left, depth), _evidence(context, expr.right, depth))
        return MASK if both == (MASK, MASK) else None
    if isinstance(expr, cst.Subscript):
        return _subscripted(context, expr, depth)
    if isinstance(expr, cst.Call):
        return _called(context, expr, depth)
    return None


def _literal_list(expr: cst.List) -> Optional[str]:
    """``[0, 2]`` or ``[True, False]``: converted to an integer or bool tensor (a list of ints only)."""
    values = [e.value for e in expr.elements if isinstance(e, cst.Element)]
    if not values or len(values) != len(expr.elements):
        return None
    if all(integer(v) is not None for v in values):
        return INT_LIST
    if all(isinstance(v, cst.Name) and v.value in ("True", "False") for v in values):
        return BOOL_LIST
    return None


def _named(context: FileContext, expr: cst.BaseExpression, depth: int) -> Optional[str]:
    """A name (or attribute chain) every binding of which is an assignment of evidence. (The structural plan relies
    on this: plan/index_shapes.scoped_index_tokens drops a name index its def never assigns.)"""
    if depth >= _DEPTH:
        return None
    found = set()
    for binding in context.reaching(expr):
        if binding.how != "assign" or binding.path or binding.value is None:
            return None
        evidence = _evidence(context, binding.value, depth + 1)
        if evidence is None:
            return None
        found.add(evidence)
    if not found:
        return None
    return found.pop() if len(found) == 1 else "an advanced index"


def _tensor_or_evidence(context: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    return context.kind_of(expr) is Kind.TENSOR or _evidence(context, expr, depth) is not None


def _subscripted(context: FileContext, expr: cst.Subscript, depth: int) -> Optional[str]:
    """``np.where(c)[0]``, ``torch.where(c)[0]``, ``x.topk(k)[1]``: one array of a tuple of indices; ``idx[:k]``:
    a slice of evidence (still at least one dimension)."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, (cst.Index, cst.Slice)):
        return None
    index = expr.slice[0].slice
    if isinstance(index, cst.Slice):
        inner = _evidence(context, expr.value, depth)
        return inner if inner in (INT_TENSOR, INT_ARRAY, MASK) else None
    position = integer(index.value) if index.star is None else None
    if position is None:
        return None
    whole = _evidence(context, expr.value, depth) if isinstance(expr.value, cst.Call) else None
    if whole in (TENSORS, ARRAYS):
        return INT_TENSOR if whole == TENSORS else INT_ARRAY
    return INT_TENSOR if position == 1 and _sorted_call(expr.value) else None


def _sorted_call(expr: cst.BaseExpression) -> bool:
    """``x.topk(k)`` / ``torch.topk(x, k)`` / ``x.sort()`` / ``torch.sort(x)``: (values, indices)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value in ("topk", "sort")


def _called(context: FileContext, call: cst.Call, depth: int) -> Optional[str]:
    qualified = context.qualified_name(call.func) or ""
    module, _, name = qualified.partition(".")
    if module == "torch" and name:
        if name in _TORCH_INT:
            return TENSORS if name == "nonzero" and _as_tuple(call) else INT_TENSOR
        if name in _TORCH_MASK:
            return MASK
        if name == "where" and len(call.args) == 1:
            return TENSORS
        if name in ("tensor", "as_tensor", "LongTensor", "BoolTensor") and call.args:
            listed = _literal_list(call.args[0].value) if isinstance(call.args[0].value, cst.List) else None
            return {INT_LIST: INT_TENSOR, BOOL_LIST: MASK}.get(listed or "")
        return None
    if module == "numpy" and name:
        if name in _NUMPY_INT:
            return INT_ARRAY
        if name in _NUMPY_TUPLE and len(call.args) == 1:
            return ARRAYS
        if name in ("array", "asarray") and call.args and isinstance(call.args[0].value, cst.List):
            return {INT_LIST: INT_ARRAY, BOOL_LIST: "a bool array"}.get(_literal_list(call.args[0].value) or "")
        return None
    if qualified or not isinstance(call.func, cst.Attribute):
        return None
    method, receiver = call.func.attr.value, call.func.value
    if method not in ("argsort", "nonzero") and method not in _MASK_METHODS:
        return None
    inner = _evidence(context, receiver, depth)
    if inner is None and context.kind_of(receiver) is not Kind.TENSOR:
        return None
    if inner in (INT_ARRAY, ARRAYS, "a bool array"):  # a numpy array's methods: nonzero() gives a tuple of arrays
        return {"nonzero": ARRAYS, "argsort": INT_ARRAY}.get(method)
    if method == "nonzero":
        return TENSORS if _as_tuple(call) else INT_TENSOR
    return INT_TENSOR if method == "argsort" else MASK


def _as_tuple(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == "as_tuple" and isinstance(arg.value, cst.Name)
               and arg.value.value == "True" for arg in call.args)
