"""What ``torch.tensor(data)`` is given: Python data or a numpy array, and the kind of a number in it.

It matters for a device move: from Python data (lists, numbers) ``torch.tensor(data, device=d)`` builds a host
tensor and moves it with ``.to`` itself (torch/csrc/utils/tensor_new.h, NOTE [torch.tensor, lift_fresh, and
device movement]), so ``torch.tensor(data).to(d)`` costs the same; a numpy array is copied to ``d`` at once with
``device=``, and first into a host tensor without it (``TCL116-numpy-host-copy``). Names only: neither torch
nor numpy is imported.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ..engine import FileContext
from ..imports import dotted_name

PYTHON, NUMPY = "python", "numpy"

#: Builtins that return Python data (a number, a list or a tuple).
_PYTHON_CALLS = frozenset("int float bool len list tuple range".split())
#: numpy functions that return an array (not a numpy scalar: a scalar takes the Python path).
_NUMPY_ARRAYS = frozenset("""array asarray ascontiguousarray zeros ones empty full zeros_like ones_like empty_like
    full_like arange linspace logspace eye identity stack vstack hstack concatenate load loadtxt fromfile frombuffer
    expand_dims reshape transpose tile diag outer random.rand random.randn""".split())
#: ndarray methods that return an array.
_ARRAY_METHODS = frozenset("reshape astype transpose copy squeeze flatten ravel swapaxes clip".split())
_NUMPY_ANNOTATIONS = frozenset({"numpy.ndarray", "numpy.typing.NDArray"})
_PYTHON_ANNOTATIONS = frozenset("int float bool list tuple List Tuple typing.List typing.Tuple".split())


def data_kind(context: FileContext, expr: cst.BaseExpression, follow: int = 2) -> Optional[str]:
    """PYTHON for a list or tuple display, a comprehension, a number, a builtin's result (``len``, ``.tolist()``,
    ``.item()``); NUMPY for a numpy function's array, ``.numpy()``, and an array's slice (``a[None, :]``),
    arithmetic with it (``a / 255``) or array method (``a.reshape(...)``); for a name (``follow`` levels), what
    each of its bindings is (an assignment of one of those, a parameter annotated ``list``/``float``/``np.ndarray``,
    a loop over a display or a ``range``); None when not known."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float)) or literal_kind(expr):
        return PYTHON
    if isinstance(expr, cst.Subscript) and any(isinstance(e.slice, cst.Index) and _new_axis(context, e.slice.value)
                                               or isinstance(e.slice, cst.Slice) for e in expr.slice):
        return NUMPY if data_kind(context, expr.value, follow) == NUMPY else None  # a slice of an array: an array
    if isinstance(expr, cst.BinaryOperation):
        sides = {data_kind(context, expr.left, follow), data_kind(context, expr.right, follow)}
        return NUMPY if NUMPY in sides and sides <= {NUMPY, PYTHON} else None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _ARRAY_METHODS and data_kind(context, expr.func.value, follow) == NUMPY:
        return NUMPY
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in _PYTHON_CALLS and context.qualified_name(func) in (
                None, func.value, "builtins." + func.value):
            return PYTHON
        if isinstance(func, cst.Attribute) and not expr.args and func.attr.value in ("tolist", "item", "numpy"):
            return NUMPY if func.attr.value == "numpy" else PYTHON
        qualified = context.qualified_name(func) or ""
        return NUMPY if qualified.startswith("numpy.") and qualified[6:] in _NUMPY_ARRAYS and (
            expr.args or not qualified.startswith("numpy.random.")) else None
    if follow <= 0 or not isinstance(expr, cst.Name):
        return None
    kinds = set()
    for binding in context.reaching(expr):
        if binding.how == "assign" and not binding.path and binding.value is not None:
            kinds.add(data_kind(context, binding.value, follow - 1))
        elif binding.how == "param" and isinstance(binding.node, cst.Param):
            kinds.add(_annotated(context, binding.node.annotation))
        elif binding.how == "iter" and not binding.path and binding.value is not None:
            kinds.add(PYTHON if _iterated_kinds(binding.value) else None)
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def number_kind(context: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """"float" or "int" for a name every binding of which is a parameter annotated so (``x: float``,
    ``Optional[float]``, ``float | None``), an assignment of such a literal or of a display of them
    (``xs = [0.5, 1.5]``), or a loop over such a display (``for z in [0.0, 1.0]``) or a ``range``."""
    if not isinstance(expr, cst.Name):
        return None
    kinds = set()
    for binding in context.reaching(expr):
        if binding.how == "param" and isinstance(binding.node, cst.Param):
            annotated = _unwrapped(binding.node.annotation)
            kinds.add(annotated.value if isinstance(annotated, cst.Name) and annotated.value in ("float", "int")
                      else None)
        elif binding.how in ("assign", "iter") and not binding.path and binding.value is not None:
            found = set(_iterated_kinds(binding.value)) if binding.how == "iter" else {
                literal_kind(leaf) for leaf in leaves(binding.value)}
            kinds |= found if found and found <= {"int", "float"} else {None}
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _iterated_kinds(iterable: cst.BaseExpression) -> list:
    """The kinds of the numbers a loop over ``iterable`` binds: a display of literals, a ``range(..)``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
        return ["int"]
    if isinstance(iterable, (cst.List, cst.Tuple)) and iterable.elements and not any(
            isinstance(element, cst.StarredElement) for element in iterable.elements):
        return [literal_kind(element.value) for element in iterable.elements]
    return []


def _annotated(context: FileContext, annotation: Optional[cst.Annotation]) -> Optional[str]:
    node = _unwrapped(annotation)
    if node is None:
        return None
    named = node.value if isinstance(node, cst.Subscript) else node
    qualified = context.qualified_name(named) or dotted_name(named)
    if qualified in _NUMPY_ANNOTATIONS:
        return NUMPY
    return PYTHON if qualified in _PYTHON_ANNOTATIONS else None


def _unwrapped(annotation: Optional[cst.Annotation]) -> Optional[cst.BaseExpression]:
    """The annotation, out of ``Optional[X]`` or ``X | None``."""
    if annotation is None:
        return None
    node = annotation.annotation
    if isinstance(node, cst.Subscript) and dotted_name(node.value) in ("Optional", "typing.Optional") \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return node.slice[0].slice.value
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr) \
            and isinstance(node.right, cst.Name) and node.right.value == "None":
        return node.left
    return node


def leaves(data: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The items of a (nested) list or tuple display, or the expression itself."""
    if isinstance(data, (cst.List, cst.Tuple)):
        for element in data.elements:
            if isinstance(element, cst.StarredElement):
                yield element  # not known
            else:
                yield from leaves(element.value)
    else:
        yield data


def literal_kind(expr: cst.BaseExpression) -> Optional[str]:
    """"int", "float" or "bool" for a number literal (maybe negated), None otherwise."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and not expr.lpar:
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return "int"
    if isinstance(expr, cst.Float):
        return "float"
    return None


def _new_axis(context: FileContext, expr: cst.BaseExpression) -> bool:
    """``None`` or ``np.newaxis`` in an index: the result keeps an array's dimensions."""
    return isinstance(expr, cst.Name) and expr.value == "None" or context.qualified_name(expr) == "numpy.newaxis"
