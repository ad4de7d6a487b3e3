"""TCL116's evidence that moving a conversion into the creation call keeps every value.

``torch.zeros(n).half()`` equals ``torch.zeros(n, dtype=torch.half)`` because 0 is exact in both
dtypes; ``torch.linspace(0, 1, 11).half()`` does not equal ``linspace(..., dtype=torch.half)``
(computed in half), and ``torch.full((2,), 300).to(torch.uint8)`` wraps where
``full(..., dtype=torch.uint8)`` raises. So a dtype is moved only when the created values are
integers that both the old and the new dtype hold exactly, or in the few cases verified
by the claims (``TCL116-same-values``). Names only: torch is never imported.
"""

from __future__ import annotations

from typing import Callable, FrozenSet, Optional, Tuple, Union

import libcst as cst

from ..engine import FileContext
from ..semantic import Kind
from ._tensor_data import leaves, literal_kind

#: Creations whose values do not depend on the device they are computed on.
DEVICE_EXACT = frozenset("zeros ones full empty eye tensor zeros_like ones_like full_like empty_like".split())

#: Largest integer up to which every integer is exact, per floating dtype.
_FLOAT_BOUNDS = {"float32": 2 ** 24, "float64": 2 ** 53, "float16": 2048, "bfloat16": 256,
                 "complex64": 2 ** 24, "complex128": 2 ** 53}
_INT_RANGES = {"int64": (-2 ** 63, 2 ** 63 - 1), "int32": (-2 ** 31, 2 ** 31 - 1), "int16": (-2 ** 15, 2 ** 15 - 1),
               "int8": (-128, 127), "uint8": (0, 255), "bool": (0, 1)}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "cfloat": "complex64",
            "cdouble": "complex128", "long": "int64", "int": "int32", "short": "int16"}
#: Names that hold a device (or a device index) wherever they are passed to ``.to()``.
_DEVICE_NAMES = frozenset("dev device_id device_idx gpu gpu_id rank local_rank".split())
#: ``arange(n)`` with an unknown ``n``, and ``tensor(data)`` with unknown data.
COUNT, DATA = "count", "data"
Values = Union[None, str, Tuple[int, int]]


def dtype_name(context: FileContext, expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """``float16`` for ``torch.half``; None for anything that is not a torch dtype spelled out."""
    qualified = context.qualified_name(expr) if expr is not None else None
    if not qualified or not qualified.startswith("torch."):
        return None
    name = _ALIASES.get(qualified[6:], qualified[6:])
    return name if name in _FLOAT_BOUNDS or name in _INT_RANGES else None


def integer(expr: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal (``3``, ``-3``)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and not expr.lpar:
        inner = integer(expr.expression)
        return None if inner is None else -inner
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    return None


def _number(expr: cst.BaseExpression) -> Optional[int]:
    """An integer, an integer-valued float literal (``1.0``) or ``True``/``False``, as an int."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return int(expr.value == "True")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and not expr.lpar:
        inner = _number(expr.expression)
        return None if inner is None else -inner
    if isinstance(expr, cst.Float):
        value = float(expr.evaluated_value)
        return int(value) if value.is_integer() and abs(value) <= 2 ** 24 else None
    return integer(expr)


def argument(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument at positional ``index`` or, when there are fewer, the one named ``keyword``."""
    positional = [arg for arg in call.args if arg.keyword is None]
    if index < len(positional):
        return positional[index].value
    return next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == keyword), None)


def fill_range(creation: cst.Call, name: str) -> Values:
    """The smallest and largest value the creation call makes when they are known integers; COUNT/DATA."""
    if name in ("zeros", "zeros_like", "empty", "empty_like"):
        return (0, 0)  # empty: no value is defined either way
    if name in ("ones", "ones_like"):
        return (1, 1)
    if name == "eye":
        return (0, 1)
    if name in ("full", "full_like"):
        fill = argument(creation, 1, "fill_value")
        value = _number(fill) if fill is not None else None
        if value is None or (name == "full_like" and value not in (0, 1)):  # full_like: in the source's dtype
            return None
        return (value, value)
    if name == "arange":
        positional = [arg.value for arg in creation.args if arg.keyword is None]
        bounds = [integer(value) for value in positional]
        if positional and len(positional) <= 3 and all(b is not None for b in bounds) and bounds[-1] != 0:
            values = range(*bounds)  # type: ignore[arg-type]
            return (min(values), max(values)) if values else (0, 0)
        keywords = [arg for arg in creation.args if arg.keyword is not None
                    and arg.keyword.value not in ("dtype", "device")]
        return COUNT if len(positional) == 1 and not keywords else None
    return DATA if name == "tensor" else None


def _fits(values: Tuple[int, int], dtype: Optional[str]) -> bool:
    low, high = values
    if dtype is None:  # a dtype the code does not spell: only 0 and 1 are exact in every dtype
        return 0 <= low and high <= 1
    if dtype in _FLOAT_BOUNDS:
        return max(abs(low), abs(high)) <= _FLOAT_BOUNDS[dtype]
    return _INT_RANGES[dtype][0] <= low and high <= _INT_RANGES[dtype][1]


def same_values(context: FileContext, creator: str, values: Values, source: Optional[cst.BaseExpression],
                target: cst.BaseExpression) -> bool:
    """Whether creating in ``target`` directly gives the values that creating (in ``source``, the creation's
    own ``dtype=`` if any) and converting to ``target`` gives."""
    wanted = dtype_name(context, target)
    if values is None or creator == "arange" and (wanted is None or wanted == "bool" or "complex" in wanted):
        return False  # arange raises for bool and complex dtypes, where a conversion of its result does not
    if values == COUNT:  # arange(n).float() == arange(n, dtype=torch.float) (checked at n = 2**25)
        return source is None and wanted == "float32"
    if values == DATA:  # Python floats and ints round the same way both ways (TCL116-same-values); not
        return source is None and wanted in ("float32", "float16", "bool")  # bfloat16: its NaN bits differ
    assert not isinstance(values, str)
    if source is not None and not _fits(values, dtype_name(context, source)):
        return False
    return max(abs(values[0]), abs(values[1])) <= 2 ** 24 and _fits(values, wanted)


def classify(context: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """What a positional ``.to(x)`` argument is: "dtype", "device", "tensor", or None (unknown)."""
    if dtype_name(context, expr) is not None or context.qualified_name(getattr(expr, "func", expr)) \
            == "torch.get_default_dtype":
        return "dtype"
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Integer)):
        return "device"
    if isinstance(expr, cst.Call) and context.qualified_name(expr.func) == "torch.device":
        return "device"
    called = isinstance(expr, cst.Call)  # `self.device()`, `x.get_device()`
    named = expr.func if isinstance(expr, cst.Call) else expr
    last = (named.attr.value if isinstance(named, cst.Attribute) else named.value if isinstance(named, cst.Name)
            else "").lower()
    if last.endswith("dtype") and not called:
        return "dtype"
    if last.endswith("device") or not called and last in _DEVICE_NAMES:
        return "device"
    return "tensor" if context.kind_of(expr) is Kind.TENSOR else None


def cuda_device(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``device=`` for ``.cuda(expr)``: ``"cuda:N"`` for an index literal, a string literal as it is."""
    index = integer(expr)
    if index is not None and index >= 0:
        return cst.SimpleString(f'"cuda:{index}"')
    return expr if isinstance(expr, cst.SimpleString) else None


#: What the default dtype may be where a file sets it (``torch.set_default_dtype``): any floating dtype.
_ANY_FLOAT = frozenset({"float32", "float64", "float16", "bfloat16"})


def created_dtypes(creation: cst.Call, name: str, default_set: bool,
                   number_kind: Optional[Callable[[cst.BaseExpression], Optional[str]]] = None) -> FrozenSet[str]:
    """The dtypes a creation call that names no dtype may give: the default dtype (float32; any floating dtype
    where the file sets it: ``default_set``) for ``zeros``/``ones``/``empty``/``eye``/``linspace`` and, as their
    input most often is, the ``*_like``; for ``arange``, ``full`` and ``tensor`` the dtype their numbers infer
    (int64 for integers, the default for floats, bool for ``True``/``False``), or any of them when not known.
    ``number_kind`` says "int"/"float" of a number that is not a literal (a parameter annotated ``float``)."""
    default = _ANY_FLOAT if default_set else frozenset({"float32"})
    if name in ("zeros", "ones", "empty", "eye", "linspace", "zeros_like", "ones_like", "empty_like", "full_like"):
        return default
    numbers: list = []
    if name == "arange":
        numbers = [arg.value for arg in creation.args if arg.keyword is None or arg.keyword.value in (
            "start", "end", "step")]
    elif name == "full":
        fill = argument(creation, 1, "fill_value")
        numbers = [fill] if fill is not None else []
    elif name == "tensor":
        data = argument(creation, 0, "data")
        numbers = list(leaves(data)) if data is not None else []
    kinds = {literal_kind(n) or (number_kind(n) if number_kind is not None else None) for n in numbers}
    if not numbers or None in kinds:
        return frozenset({"int64", "float64"}) | default  # not known (a float64 numpy array for tensor())
    if kinds == {"bool"}:
        return frozenset({"bool"})
    return default if "float" in kinds else frozenset({"int64"})


def changes_nothing(wanted: str, made: FrozenSet[str]) -> bool:
    """Whether converting to ``wanted`` what a creation made in one of ``made`` is never a copy that need not
    happen: it returns the tensor itself (a tensor converted to its own dtype is not copied), or it truncates
    floating values to integers, as a computation does on purpose."""
    return wanted in made and all(dtype == wanted or dtype in _FLOAT_BOUNDS and wanted in _INT_RANGES
                                  and wanted != "bool" for dtype in made)
