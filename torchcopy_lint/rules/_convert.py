"""What TCL116-TCL118 share: the conversion methods of a tensor and the torch dtypes they name.

Names only: linting never imports torch.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import CONVERSION_METHODS
from ..engine import FileContext

#: ``x.float()`` ... and the attribute of ``torch`` that names the dtype each converts to.
CAST_DTYPES = {
    "float": "float", "half": "half", "double": "double", "long": "long", "int": "int", "bool": "bool",
    "bfloat16": "bfloat16", "byte": "uint8", "char": "int8", "short": "short",
}
#: Conversions that may copy: to another dtype (``CAST_DTYPES``), device (``cpu``/``cuda``) or both (``to``).
CONVERSIONS = frozenset(CONVERSION_METHODS)


def conversion_name(node: cst.Call) -> Optional[str]:
    """``float`` for ``<receiver>.float(...)``, when the method is a conversion."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in CONVERSIONS:
        return func.attr.value
    return None


def receiver(node: cst.Call) -> cst.BaseExpression:
    assert isinstance(node.func, cst.Attribute)
    return node.func.value


def torch_module(context: FileContext, near: Optional[cst.BaseExpression] = None) -> Optional[str]:
    """How this file spells the ``torch`` module: the base of ``near`` (``th`` in ``th.zeros``) when it
    is torch, else ``torch`` when imported under that name; None when neither (no dtype can be spelled)."""
    if isinstance(near, cst.Attribute) and isinstance(near.value, (cst.Name, cst.Attribute)) \
            and context.qualified_name(near.value) == "torch":
        return context.module.code_for_node(near.value)
    if context.qualified_name(cst.Name("torch")) == "torch":
        return "torch"
    return None


def dtype_expression(module: str, attribute: str) -> cst.BaseExpression:
    return cst.parse_expression(f"{module}.{attribute}")


def is_literal_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_literal_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("False", "None")
