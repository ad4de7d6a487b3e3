"""The dtype of a numpy array where the code spells it (TCL113: a legacy constructor shares an array's memory only
when the dtypes match). Names only: linting imports neither numpy nor torch."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..engine import FileContext
from ..semantic.storage import ARRAY_MAKERS
from ._tensor_data import NUMPY, data_kind

#: numpy's spellings of a dtype (a type's name, its alias, a type code) -> the dtype. Not `int`: its numpy dtype
#: depends on the platform (int32 on Windows before numpy 2).
_SPELLINGS = {
    "float32": "float32", "single": "float32", "f4": "float32", "float64": "float64", "double": "float64",
    "f8": "float64", "float": "float64", "float16": "float16", "half": "float16", "f2": "float16",
    "int64": "int64", "i8": "int64", "int32": "int32", "i4": "int32", "int16": "int16", "i2": "int16",
    "int8": "int8", "i1": "int8", "uint8": "uint8", "u1": "uint8", "bool_": "bool", "bool": "bool",
}
_DEPTH = 4  # names followed through their bindings


def array_dtype(context: FileContext, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """The dtype of the numpy array ``expr`` when the code states it: ``np.zeros(3, dtype=np.float32)``, any
    numpy constructor with ``dtype=``, ``a.astype(np.float32)`` of a known array (``_tensor_data.data_kind``: a
    parameter annotated ``np.ndarray`` too), a name every assignment of which
    is one of these; None otherwise."""
    if isinstance(expr, cst.Name) and depth < _DEPTH:
        found = set()
        for binding in context.reaching(expr):
            if binding.how != "assign" or binding.path or binding.value is None:
                return None
            found.add(array_dtype(context, binding.value, depth + 1))
        return found.pop() if len(found) == 1 else None
    if not isinstance(expr, cst.Call):
        return None
    qualified = context.qualified_name(expr.func) or ""
    if qualified.startswith("numpy.") and qualified[6:] in ARRAY_MAKERS:
        return next((dtype_named(context, a.value) for a in expr.args
                     if a.keyword is not None and a.keyword.value == "dtype"), None)
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "astype" and len(expr.args) >= 1 \
            and expr.args[0].keyword is None and not expr.args[0].star:
        receiver = func.value
        if array_dtype(context, receiver, depth) is not None or data_kind(context, receiver) == NUMPY:
            return dtype_named(context, expr.args[0].value)
    return None


def dtype_named(context: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """``np.float32`` / ``numpy.single`` / ``"float32"`` / ``"f4"`` / ``float`` / ``bool`` -> the dtype."""
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        return _SPELLINGS.get(text.lstrip("<=|")) if isinstance(text, str) else None
    if isinstance(expr, cst.Name) and expr.value in ("float", "bool"):
        return _SPELLINGS[expr.value] if context.qualified_name(expr) in (None, expr.value, "builtins." + expr.value) \
            else None
    qualified = context.qualified_name(expr) or ""
    if qualified.startswith("numpy.") and qualified[6:] not in ("float", "bool", "int"):
        return _SPELLINGS.get(qualified[6:])
    return None
