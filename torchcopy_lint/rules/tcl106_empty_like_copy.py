"""TCL106: ``torch.empty_like(x).copy_(x)`` spelled instead of ``x.clone()``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import TRIGGERS
from ..engine import Rule
from ..imports import dotted_name
from ._build import method

_LIKE_FUNCTIONS = frozenset({"torch.empty_like", "torch.zeros_like", "torch.ones_like"})


class EmptyLikeCopy(Rule):
    """``torch.empty_like(x).copy_(x)`` (or ``zeros_like``/``ones_like``) is a longer
    ``x.clone()``: same values, dtype, device and strides (transposed, channels-last
    and non-dense inputs included), and the same gradients. It is not the "fast
    detached copy" some articles call it: when ``x`` requires grad the result records
    ``CopyBackwards`` and requires grad, and it is not faster than ``clone()``.

    Only the one-expression form with the same name or attribute chain on both sides
    and no other arguments is flagged; ``buf = torch.empty_like(x)`` followed by
    ``buf.copy_(x)`` is preallocation and is left alone. The fix is ``x.clone()``
    (safe); use ``x.detach().clone()`` if a detached copy was meant.
    """

    code = "TCL106"
    name = "empty-like-copy"
    message = (
        "`torch.empty_like(x).copy_(x)` is `x.clone()`: it is neither detached (it records CopyBackwards when x "
        "requires grad) nor faster; use `x.clone()`, or `x.detach().clone()` for a detached copy"
    )
    triggers = TRIGGERS["TCL106"]  # in codes.py, importable without LibCST

    VALID = [
        "import torch\nbuf = torch.empty_like(x)\nbuf.copy_(x)",
        "import torch\ny = torch.empty_like(x).copy_(z)",
        "import torch\ny = torch.empty_like(x, dtype=torch.float16).copy_(x)",
        "import torch\ny = torch.empty_like(x).copy_(x, non_blocking=True)",
        "import torch\ny = torch.empty(x.shape).copy_(x)",
        "import torch\ny = torch.empty_like(f(x)).copy_(f(x))",
        "import torch\ny = torch.full_like(x, 1).copy_(x)",
        "import numpy as np\ny = np.empty_like(x).copy_(x)",
    ]
    INVALID = [
        "import torch\ny = torch.empty_like(x).copy_(x)",
        "import torch as th\ny = th.zeros_like(self.weight).copy_(self.weight)",
        "from torch import ones_like as ol\ny = ol(x).copy_(x)",
        "import torch\ny = torch.empty_like(x, memory_format=torch.preserve_format).copy_(x)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "copy_":
            return
        like = func.value
        if not isinstance(like, cst.Call) or self.context.qualified_name(like.func) not in _LIKE_FUNCTIONS:
            return
        source = self._like_source(like)
        copied = _only_positional(node)
        if source is None or copied is None or dotted_name(copied) is None \
                or dotted_name(copied) != dotted_name(source):
            return
        self.report(node, replacement=method(copied, "clone").with_changes(lpar=node.lpar, rpar=node.rpar))

    def _like_source(self, like: cst.Call) -> Optional[cst.BaseExpression]:
        """``x`` in ``torch.empty_like(x)`` or ``torch.empty_like(x, memory_format=torch.preserve_format)``."""
        if not like.args or like.args[0].keyword is not None or like.args[0].star:
            return None
        for extra in like.args[1:]:
            if extra.keyword is None or extra.keyword.value != "memory_format" \
                    or self.context.qualified_name(extra.value) != "torch.preserve_format":
                return None
        return like.args[0].value


def _only_positional(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The argument of a call with exactly one plain positional argument."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value
