"""The dtype of a tensor expression where the code proves it, and the dtype a conversion asks for.

A conversion to a tensor's own dtype returns the tensor itself (``x.long()`` of an int64 ``x``:
``TCL118-own-dtype``), so TCL118 needs to know when a clone already has the target dtype. Evidence only:
a comparison is bool; ``argmax``/``argsort``/``nonzero``/``randint``/``randperm`` are int64; a cast is its
dtype; a creation gives its ``dtype=`` or what its numbers make (float32 by default where the file does not
set the default dtype). Names only: torch is never imported.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from ..engine import FileContext
from ._convert import CAST_DTYPES
from ._exact import classify, created_dtypes, dtype_name
from ._tensor_data import number_kind

#: The dtype of each cast method (``x.long()``: int64).
CAST_RESULTS = {method: {"float": "float32", "half": "float16", "double": "float64", "long": "int64",
                         "int": "int32", "short": "int16", "bool": "bool", "bfloat16": "bfloat16",
                         "uint8": "uint8", "int8": "int8"}[name] for method, name in CAST_DTYPES.items()}
_INT64 = frozenset("argmax argmin argsort nonzero argwhere randint randperm".split())
_BOOL = frozenset("""eq ne lt le gt ge isnan isinf isfinite isneginf isposinf isclose logical_and logical_or
    logical_not logical_xor""".split())
COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_CREATIONS = frozenset("zeros ones empty eye full arange linspace tensor rand randn".split())
#: What a file calls to change the default dtype of every creation after it.
SETS_DTYPE = ("set_default_dtype", "set_default_tensor_type")


def source_mentions(context: FileContext, calls: Tuple[str, ...]) -> bool:
    """Whether the file's text holds one of ``calls`` (``set_default_dtype``: the default dtype is not known)."""
    source = context.semantic.source
    text = source.decode("latin-1") if isinstance(source, bytes) else source
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


def tensor_dtype(context: FileContext, expr: cst.BaseExpression, default_set: bool, follow: bool = True) \
        -> Optional[str]:
    """The dtype of ``expr`` (a tensor) where the code proves it; a name (``follow``) when every binding
    that reaches it is an assignment of such an expression. ``default_set``: the file sets the default dtype."""
    if isinstance(expr, cst.Comparison):
        return "bool" if all(isinstance(c.operator, COMPARISONS) for c in expr.comparisons) else None
    if isinstance(expr, cst.Call):
        return _call_dtype(context, expr, default_set)
    if not follow or not isinstance(expr, cst.Name):
        return None
    found = set()
    for binding in context.reaching(expr):
        if binding.how != "assign" or binding.path or binding.value is None:
            return None
        found.add(tensor_dtype(context, binding.value, default_set, follow=False))
    return found.pop() if len(found) == 1 else None


def _call_dtype(context: FileContext, call: cst.Call, default_set: bool) -> Optional[str]:
    func = call.func
    qualified = context.qualified_name(func) or ""
    name = qualified[6:] if qualified.startswith("torch.") else None
    method = func.attr.value if isinstance(func, cst.Attribute) and name is None else None
    if method is not None and (method in CAST_RESULTS or method == "to"):
        return target_dtype(context, call)
    if (name or method) in _BOOL:
        return "bool"
    if (name or method) in _INT64 and (name is not None or method not in ("randint", "randperm")):
        return _own_dtype(context, call, "int64")
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
