"""The dtype of a tensor expression where the code proves it, and the dtype a conversion asks for.

A conversion to a tensor's own dtype returns the tensor itself (``x.long()`` of an int64 ``x``:
``TCL118-own-dtype``), so TCL118 needs to know when a clone already has the target dtype. Evidence only:
a comparison is bool; ``argmax``/``argsort``/``nonzero``/``randint``/``randperm`` are int64; a cast is its
dtype; a creation gives its ``dtype=`` or what its numbers make (``torch.tensor`` of Python ints: int64; of
floats: float32 by default where the file does not set the default dtype); ``torch.LongTensor(..)`` its dtype.
Indexing, views, ``detach``, device moves, ``*_like`` and aliases keep it (``traced``; rules/_devices.py
follows devices the same way). Names only: torch is never imported.
"""

from __future__ import annotations

from typing import Callable, FrozenSet, Optional, Tuple

import libcst as cst

from ..engine import FileContext
from ..semantic.vocabulary import BOOL_RESULTS, INT64_RESULTS
from ._convert import CAST_DTYPES
from ._exact import classify, created_dtypes, dtype_name
from ._tensor_data import number_kind

#: The dtype of each cast method (``x.long()``: int64).
CAST_RESULTS = {method: {"float": "float32", "half": "float16", "double": "float64", "long": "int64",
                         "int": "int32", "short": "int16", "bool": "bool", "bfloat16": "bfloat16",
                         "uint8": "uint8", "int8": "int8"}[name] for method, name in CAST_DTYPES.items()}
COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_CREATIONS = frozenset("zeros ones empty eye full arange linspace tensor rand randn".split())
#: Methods whose result has the dtype and device of their receiver (``view`` unless given a dtype).
KEEPS = frozenset("""clone detach detach_ contiguous view reshape flatten squeeze unsqueeze t permute transpose
    expand repeat narrow flip roll requires_grad_ pin_memory""".split())
#: ``torch.*_like(x)``: a new tensor with ``x``'s shape (and dtype, unless given one).
LIKE = frozenset("zeros_like ones_like empty_like full_like rand_like randn_like randint_like".split())
#: ``torch.LongTensor(...)`` and friends make their dtype; ``torch.Tensor(...)`` the default one (None here).
LEGACY_DTYPES = {"Tensor": None, "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                 "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}
_MAX_DEPTH = 12
#: What a file calls to change the default dtype of every creation after it.
SETS_DTYPE = ("set_default_dtype", "set_default_tensor_type")


def source_mentions(context: FileContext, calls: Tuple[str, ...]) -> bool:
    """Whether the file's text holds one of ``calls`` (``set_default_dtype``: the default dtype is not known);
    the whole file's, where the parsed text was pruned."""
    text = context.semantic.whole_text
    return text is None or any(call in text for call in calls)


def target_dtype(context: FileContext, node: cst.Call) -> Optional[str]:
    """The dtype a dtype-only conversion asks for (``.long()``, ``.to(torch.int64)``, ``.to(dtype=torch.bool)``);
    None when it is not known or the conversion moves a device too."""
    func = node.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value in CAST_RESULTS:
        return None if node.args else CAST_RESULTS[func.attr.value]
    if func.attr.value != "to" or len(node.args) != 1 or node.args[0].star:
        return None
    arg = node.args[0]
    if arg.keyword is None and classify(context, arg.value) != "dtype" \
            or arg.keyword is not None and arg.keyword.value != "dtype":
        return None
    return dtype_name(context, arg.value)


def tensor_dtype(context: FileContext, expr: cst.BaseExpression, default_set: bool) -> Optional[str]:
    """The dtype of ``expr`` (a tensor) where the code proves it (``traced``). ``default_set``: the file sets the
    default dtype."""
    return traced(context, expr, lambda e: _direct_dtype(context, e, default_set), _dtype_kept_from)


def traced(context: FileContext, expr: cst.BaseExpression, direct: Callable[[cst.BaseExpression], Optional[str]],
           kept_from: Callable[[FileContext, cst.BaseExpression], Optional[cst.BaseExpression]],
           depth: int = 0) -> Optional[str]:
    """What ``direct`` says of ``expr`` or, where it says nothing, of the tensor ``expr`` keeps it from
    (``kept_from``: ``x`` of ``x[1:]``, ``x.view(-1)``...); of a name, what every binding reaching it says
    (assignments only, all the same)."""
    if depth > _MAX_DEPTH:
        return None
    found = direct(expr)
    inner = kept_from(context, expr) if found is None else None
    if inner is not None:
        return traced(context, inner, direct, kept_from, depth + 1)
    if found is not None or not isinstance(expr, cst.Name):
        return found
    values = set()
    for binding in context.reaching(expr):
        if binding.how != "assign" or binding.path or binding.value is None:
            return None
        values.add(traced(context, binding.value, direct, kept_from, depth + 1))
    return values.pop() if len(values) == 1 else None


def kept_from(context: FileContext, expr: cst.BaseExpression, changes: FrozenSet[str]) -> Optional[cst.BaseExpression]:
    """The tensor whose dtype and device ``expr`` keeps: indexing, a view or copy of the same data (``KEEPS``),
    a ``*_like`` creation that names neither; None otherwise, or where a method in ``changes`` may change it."""
    if isinstance(expr, cst.Subscript):
        return expr.value
    if not isinstance(expr, cst.Call) or any(arg.star for arg in expr.args):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and context.qualified_name(func) is None:
        method = func.attr.value
        if method in KEEPS and not (method == "view" and any(classify(context, a.value) == "dtype" for a in expr.args)) \
                or method in changes:
            return func.value
        return None
    qualified = context.qualified_name(func) or ""
    if qualified[6:] in LIKE and expr.args and expr.args[0].keyword is None \
            and not any(arg.keyword is not None and arg.keyword.value in ("dtype", "device") for arg in expr.args):
        return expr.args[0].value
    return None


def _dtype_kept_from(context: FileContext, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What a device move keeps the dtype of too (``x.cpu()``, ``x.to(device)``)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to" \
            and not any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in expr.args) \
            and all(arg.keyword is not None or classify(context, arg.value) == "device" for arg in expr.args):
        return expr.func.value
    return kept_from(context, expr, frozenset({"cpu", "cuda"}))


def _direct_dtype(context: FileContext, expr: cst.BaseExpression, default_set: bool) -> Optional[str]:
    if isinstance(expr, cst.Comparison):
        return "bool" if all(isinstance(c.operator, COMPARISONS) for c in expr.comparisons) else None
    return _call_dtype(context, expr, default_set) if isinstance(expr, cst.Call) else None


def _call_dtype(context: FileContext, call: cst.Call, default_set: bool) -> Optional[str]:
    func = call.func
    qualified = context.qualified_name(func) or ""
    name = qualified[6:] if qualified.startswith("torch.") else None
    method = func.attr.value if isinstance(func, cst.Attribute) and name is None else None
    if method is not None and (method in CAST_RESULTS or method == "to"):
        return target_dtype(context, call)
    if method == "view" and len(call.args) == 1 and classify(context, call.args[0].value) == "dtype":
        return dtype_name(context, call.args[0].value)  # `x.view(torch.int32)` reinterprets the bytes
    if (name or method) in BOOL_RESULTS:
        return "bool"
    if (name or method) in INT64_RESULTS and (name is not None or method not in ("randint", "randperm")):
        return _own_dtype(context, call, "int64")
    legacy = (name or "").rpartition(".")[2]
    if legacy in LEGACY_DTYPES and name in (legacy, "cuda." + legacy):
        return LEGACY_DTYPES[legacy] or (None if default_set else "float32")
    if name in LIKE:
        return _own_dtype(context, call, None)  # naming no dtype, it has its input's (``kept_from``)
    if name not in _CREATIONS:
        return None
    if name in ("rand", "randn"):
        return _own_dtype(context, call, None if default_set else "float32")
    made = created_dtypes(call, name, default_set, lambda n: number_kind(context, n))
    return _own_dtype(context, call, next(iter(made)) if len(made) == 1 else None)


def _own_dtype(context: FileContext, call: cst.Call, otherwise: Optional[str]) -> Optional[str]:
    """The call's ``dtype=`` when it has one (None when it is not spelled out), else ``otherwise``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return dtype_name(context, arg.value)
    return otherwise
