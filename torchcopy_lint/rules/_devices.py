"""The device of a tensor expression where the code proves it, and the device a conversion asks for.

A move to the device a tensor is on returns the tensor itself (``x.cpu()`` of a CPU ``x``: ``TCL118-copy-needed``),
so TCL118 needs to know where a clone already is. Evidence only: ``.cpu()`` is on the CPU, ``.cuda()`` on CUDA,
``.to("mps")`` on MPS; a creation (``torch.zeros``, ``torch.tensor``...) is where its ``device=`` says or, naming
none, on the CPU where the file does not change the default device (``torch.set_default_device``,
``with torch.device(..):``). Devices are compared by type ("cpu", "cuda"...): two CUDA devices may differ, so
only "cpu" is ever known to be the same. Names only: torch is never imported.
"""

from __future__ import annotations

import re
from typing import Optional
from weakref import WeakKeyDictionary

import libcst as cst

from ..engine import FileContext
from ._convert import CAST_DTYPES
from ._dtypes import LEGACY_DTYPES, kept_from, traced
from ._exact import classify, integer

#: What makes the default device of creations another than the CPU: a call that sets it (the legacy
#: ``set_default_tensor_type(torch.cuda.FloatTensor)`` too), or a ``with torch.device(..):`` block (not
#: ``with torch.cuda.device(i):``, which picks the current CUDA device and leaves creations on the CPU).
_SETS_DEVICE = re.compile(r"set_default_device|set_default_tensor_type|\bwith\b[^\n:]*(?:\btorch\.|[\s(,])device\s*\(")
#: Per file (its semantic model) the answer of ``default_device_changes``: one search of the text per file.
_CHANGES_DEVICE: "WeakKeyDictionary[object, bool]" = WeakKeyDictionary()
_CREATIONS = frozenset("""zeros ones empty eye full arange linspace logspace tensor rand randn randint randperm
    """.split()) | frozenset(LEGACY_DTYPES)


def tensor_device(context: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """The device type ``expr`` (a tensor) is on where the code proves it: "cpu", "cuda", ...; None otherwise."""
    default = None if default_device_changes(context) else "cpu"
    return traced(context, expr, lambda e: _direct_device(context, e, default), _device_kept_from)


def default_device_changes(context: FileContext) -> bool:
    """Whether the file may make creations on another device than the CPU (see ``_SETS_DEVICE``): then a
    creation's device is not known (TCL118), nor is a move of it a copy (TCL116)."""
    model = context.semantic
    answer = _CHANGES_DEVICE.get(model)
    if answer is None:
        text = model.whole_text  # the whole file: a pruned text may have lost the call
        answer = _CHANGES_DEVICE[model] = text is None or _SETS_DEVICE.search(text) is not None
    return answer


def device_type(context: FileContext, expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """The device type a device expression names: ``"cuda:0"`` and ``torch.device("cuda", 0)`` are "cuda"."""
    if isinstance(expr, cst.Call) and context.qualified_name(expr.func) == "torch.device" and expr.args:
        expr = expr.args[0].value
    if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
        kind = expr.evaluated_value.partition(":")[0].strip()
        return kind if kind.isidentifier() else None
    return None


def to_device(context: FileContext, node: cst.Call) -> Optional[cst.BaseExpression]:
    """The device argument of ``x.to(device, ..)`` / ``x.to(device=..)``, if it has one."""
    positional = [arg.value for arg in node.args if arg.keyword is None]
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value
    return positional[0] if positional and classify(context, positional[0]) == "device" else None


def wanted_device(context: FileContext, node: cst.Call) -> Optional[str]:
    """The device type ``.cpu()``, ``.cuda(..)`` or ``.to(device, ..)`` asks for, where it is spelled out."""
    func = node.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value in ("cpu", "cuda"):
        return func.attr.value
    return device_type(context, to_device(context, node)) if func.attr.value == "to" else None


def _direct_device(context: FileContext, expr: cst.BaseExpression, default: Optional[str]) -> Optional[str]:
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    qualified = context.qualified_name(func) or ""
    if isinstance(func, cst.Attribute) and not qualified:
        return wanted_device(context, expr)
    name = qualified[6:] if qualified.startswith("torch.") else ""
    if name == "from_numpy":
        return "cpu"
    if name.startswith("cuda.") and name[5:] in LEGACY_DTYPES:
        return "cuda"
    if name not in _CREATIONS:
        return None
    for arg in expr.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return device_type(context, arg.value) or (None if integer(arg.value) is None else "cuda")
    return default


def _device_kept_from(context: FileContext, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What a dtype conversion keeps the device of too (``x.float()``, ``x.to(torch.int64)``)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to" \
            and expr.args and to_device(context, expr) is None \
            and all(arg.keyword is not None or classify(context, arg.value) == "dtype" for arg in expr.args[:1]):
        return expr.func.value
    return kept_from(context, expr, frozenset(CAST_DTYPES))
