"""TCL115: ``y = x.detach()`` (or ``x.data``) written in place while ``x`` is read afterwards."""

from __future__ import annotations

import libcst as cst

from ..codes import TRIGGERS
from ..imports import dotted_name
from ..semantic import Kind
from ._alias import AliasRule, binding_at, name_of
from ._build import method

_DETACHING = ("detach", "data")
_TENSOR_VIEWS = frozenset({"detach", "data", "view", "view_as", "transpose", "t", "permute", "squeeze", "unsqueeze",
                           "expand", "expand_as", "narrow", "select", "unfold", "diagonal", "as_strided", "movedim",
                           "swapaxes", "swapdims", "unflatten", "subscript", "T", "mT"})


class DetachAliasMutated(AliasRule):
    """``x.detach()`` and ``x.data`` are not copies: they share ``x``'s storage (and,
    for ``detach()``, its version counter). Writing the detached tensor in place
    (``y.zero_()``, ``y[0] = v``, ``y += v``, ``out=y``) writes ``x``: ``x`` silently
    changes, and if ``x`` was saved for backward, ``backward()`` raises "one of the
    variables needed for gradient computation has been modified by an inplace
    operation". A detached *copy* is ``x.detach().clone()``.

    Flagged where the alias is made, when ``x`` is known to be a tensor (not a
    parameter or a ``self.`` attribute: updating parameters and buffers through a
    detached alias, as SWA/EMA averaging and optimizers do, is intended), the
    alias is written in place and ``x`` is read afterwards on the same path.
    ``requires_grad_()``/``share_memory_()`` are not writes; ``.shape``/``.dtype``
    are not reads. The fix ``.clone()`` is unsafe: ``x`` no longer changes, which
    is the point, but a reviewer must agree (code that updates ``x`` through the
    alias on purpose looks the same: the message says "if a copy was meant").

    "Read afterwards" is a read after the write lands: the reads that compute the
    written value (``y[s] = f(x[s])``, ``y.copy_(f(x))``, ``y += x``) come first and
    do not count. In a loop, a later pass's read does count (it sees the write:
    ``y.add_(x)`` in a loop reads the sum of the last pass), except ``x[k]`` read
    with the index of the write ``y[k]`` when every way back to it rebinds a name
    of ``k`` (``for k in blocks: y[k] = f(x[k])``, an initialiser's blocks): each
    pass reads its own element, and whether it is an earlier pass's is not known.
    """

    code = "TCL115"
    name = "detach-alias-mutated"
    message = (
        "`.detach()`/`.data` shares storage with the tensor: writing it in place changes the original too "
        "(and breaks backward if it was saved); if a copy was meant, use `.detach().clone()`"
    )
    triggers = TRIGGERS["TCL115"]  # in codes.py, importable without LibCST

    VALID = [
        "import torch\nx = torch.ones(3)\ny = x.detach().clone()\ny.zero_()\nprint(x)",
        "import torch\nx = torch.ones(3)\ny = x.detach()\ny.zero_()",
        "import torch\nx = torch.ones(3)\ny = x.detach()\nprint(x)\ny.zero_()",
        "import torch\nx = torch.ones(3)\ny = x.detach()\ny = y + 1\nprint(x)",
        "import torch\nx = torch.ones(3)\ny = x.detach()\ny.requires_grad_()\nprint(x)",
        "import torch\nx = torch.ones(3)\ny = x.detach()\ny.zero_()\nprint(x.shape)",
        "import torch\np = torch.nn.Parameter(torch.ones(3))\nd = p.detach()\nd.mul_(0.9)\nprint(p)",
        "def f(x):\n    y = x.detach()\n    y.zero_()\n    return x",
        "import torch\ndef f(x: torch.Tensor, s):\n    y = x.data\n    y[s] = torch.tanh(x[s])",
        "import torch\ndef f(x: torch.Tensor):\n    y = x.detach()\n    y.copy_(x * 2)",
        "import torch\ndef f(x: torch.Tensor, blocks):\n    y = x.data\n    for k in blocks:\n"
        "        y[k] = torch.tanh(x[k])",
    ]
    INVALID = [
        "import torch\nx = torch.ones(3)\ny = x.detach()\ny.zero_()\nprint(x)",
        "import torch\nx = torch.ones(3, requires_grad=True) * 2\ny = x.data\ny[0] = 5\nz = x.sum()",
        "import torch\ndef f(x: torch.Tensor):\n    y = x.detach()\n    y += 1\n    return x",
        "import torch\ndef f(x: torch.Tensor):\n    y = x.detach()\n    y.copy_(x * 2)\n    return x",
        "import torch\ndef f(x: torch.Tensor, n: int):\n    y = x.detach()\n    for _ in range(n):\n"
        "        y.add_(x)",
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or dotted_name(node.targets[0].target) is None:
            return
        target = node.targets[0].target
        source, hows, alias = self._root(node.value)
        if alias is None or hows[-1] not in _DETACHING or not all(h in _TENSOR_VIEWS for h in hows):
            return  # `.detach()`/`.data` right on the name (codes.py's trigger looks for that), views after it
        key = dotted_name(source)
        if key is None or key.split(".")[0] in ("self", "cls"):
            return
        read = self.context.read(source)
        binding = binding_at(read, dotted_name(target), target) if read is not None else None
        if binding is None:
            return
        storage = self.context.semantic.storage
        flow = read.scope.flow
        hazard = storage.hazard(flow, read.cfg, [storage.side_of_binding(binding)], [storage.side_of_read(read)],
                                 elements=True)
        if hazard is None or self.context.value_of(source).kind is not Kind.TENSOR:
            return  # parameters (intended updates), unknown values: silent (asked last: it may read other modules)
        write, seen = hazard
        later = " on a later pass of the loop" if write.read is not None and seen.cfg <= write.read.cfg else ""
        detail = f"`{name_of(target)}` written in place at line {{write}}, `{key}` read at line {{read}}{later}"
        self.report_hazard(alias, hazard, detail, replacement=method(alias, "clone"))

    def _root(self, value: cst.BaseExpression):
        """The tensor under the views of ``value``, their kinds, and the detaching node (the fix's target)."""
        storage = self.context.semantic.storage
        hows, alias, expr = [], None, value
        while True:
            found = storage.alias_of(expr)
            if found is None:
                return expr, hows, alias
            hows.append(found[0])
            if found[0] in _DETACHING and alias is None:
                alias = expr
            expr = found[1]

