"""Whether a conversion of a tensor changes its dtype or device: what TCL118 may assert of ``x.clone().to(..)``.

A conversion to what the tensor already has returns the tensor itself (``TCL118-copy-needed``,
``TCL118-own-dtype``), so ``x.clone().to(device)`` copies twice only when ``device`` is another one. Each target
the conversion names (a dtype, a device, another tensor) is compared with what the code proves of the tensor
(rules/_dtypes.py, rules/_devices.py): known different, known the same, or not known; where it is not known,
the condition is said in words.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from ..engine import FileContext
from ._convert import is_literal_true
from ._devices import device_type, tensor_device, to_device
from ._dtypes import CAST_RESULTS, SETS_DTYPE, source_mentions, tensor_dtype
from ._exact import classify, dtype_name

#: A target's verdict: "changes" (evidence), "same" (evidence), or "unknown" with the condition in words.
Verdict = Tuple[str, str]


class ConversionEvidence:
    """What the code proves of the dtype and device of ``source``, the tensor a conversion converts."""

    def __init__(self, context: FileContext, source: cst.BaseExpression) -> None:
        self.context = context
        self.source = source

    def conditions(self, node: cst.Call, method: str) -> Optional[List[str]]:
        """None where the conversion provably changes something (it copies); [] where it provably changes
        nothing (it returns the tensor); otherwise the conditions under which it copies."""
        verdicts = list(self._verdicts(node, method))
        if any(verdict == "changes" for verdict, _ in verdicts):
            return None
        return [condition for verdict, condition in verdicts if verdict == "unknown"]

    def _verdicts(self, node: cst.Call, method: str):
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if "memory_format" in keywords:
            yield "unknown", f"{_code(self.context, keywords['memory_format'])} is not the tensor's memory format"
        if method in CAST_RESULTS:
            yield self._dtype(CAST_RESULTS[method], None)
        elif method == "cpu":
            yield self._device("cpu", "the tensor is not already on the CPU")
        elif method == "cuda":
            positional = [arg.value for arg in node.args if arg.keyword is None]
            index = keywords.get("device", positional[0] if positional else None)
            yield self._device("cuda", "the tensor is not already on the current CUDA device" if index is None
                               else f"the tensor is not already on CUDA device {_code(self.context, index)}")
        else:
            yield from self._to_verdicts(node, keywords)

    def _to_verdicts(self, node: cst.Call, keywords):
        positional = [arg.value for arg in node.args if arg.keyword is None]
        first = classify(self.context, positional[0]) if positional else None
        copy = keywords.get("copy")
        index = 3 if first == "device" else 2
        if copy is None and len(positional) > index:
            copy = positional[index]
        if copy is not None and is_literal_true(copy):
            yield "changes", ""  # `copy=True` copies the clone again whatever it converts to
        device = to_device(self.context, node)
        if device is not None:
            kind = device_type(self.context, device)
            yield self._device(kind, f"the tensor is not already on {_code(self.context, device)}" if kind
                               else f"{_code(self.context, device)} is not already the tensor's device")
        dtype = keywords.get("dtype")
        if dtype is None and positional and (first == "dtype" or first == "device" and len(positional) > 1):
            dtype = positional[0] if first == "dtype" else positional[1]
        if dtype is not None:
            yield self._dtype(dtype_name(self.context, dtype), dtype)
        if positional and first not in ("device", "dtype"):
            what = "differs from the tensor in dtype or device" if first == "tensor" \
                else "is not already the tensor's device or dtype"
            yield "unknown", f"{_code(self.context, positional[0])} {what}"

    def _dtype(self, wanted: Optional[str], spelled: Optional[cst.BaseExpression]) -> Verdict:
        have = tensor_dtype(self.context, self.source, source_mentions(self.context, SETS_DTYPE)) \
            if wanted is not None else None
        if wanted is not None and have is not None:
            return ("same" if wanted == have else "changes"), ""
        if wanted is not None:
            return "unknown", f"the tensor is not already {wanted}"
        return "unknown", f"{_code(self.context, spelled)} is not already the tensor's dtype"

    def _device(self, wanted: Optional[str], condition: str) -> Verdict:
        have = tensor_device(self.context, self.source) if wanted is not None else None
        if wanted is None or have is None or wanted == have != "cpu":
            return "unknown", condition  # two CUDA devices may be different ones
        return ("same" if wanted == have else "changes"), ""


def _code(context: FileContext, expr: Optional[cst.BaseExpression]) -> str:
    """``expr`` as written, in backticks, or "the argument" where that is long."""
    text = context.module.code_for_node(expr) if expr is not None else ""
    return f"`{text}`" if text and len(text) <= 40 and "\n" not in text else "the argument"
