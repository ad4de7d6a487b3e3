"""TCL108: ``copy.copy(t)`` of a tensor, which is not a copy."""

from __future__ import annotations

import libcst as cst

from ..codes import COPY_ALIAS, COPY_CALL, KIND_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ..engine import Rule
from ..semantic import Kind
from ._build import method


class ShallowCopyTensor(Rule):
    """``copy.copy(t)`` on a tensor returns a new tensor object over the *same*
    storage: writes to one show in the other. On a non-leaf it also cuts the graph
    without a word (the result is a leaf with ``requires_grad=True`` and no
    ``grad_fn``), and on a ``Parameter`` it returns another Parameter over the same
    storage. Whatever was meant (a copy, an alias, a detached view), something else
    says it: ``t.clone()``, ``t``, ``t.detach()``.

    Only arguments known to be tensors are flagged; dicts, lists, modules, unknown
    values and ``copy.deepcopy`` are left alone. The fix ``t.clone()`` is unsafe:
    memory is no longer shared (that is the point) and the graph is kept.
    """

    code = "TCL108"
    name = "shallow-copy-tensor"
    message = (
        "`copy.copy()` of a tensor shares its storage (writes show in both) and cuts the graph of a non-leaf; "
        "use `.clone()` for a copy (`.detach().clone()` for a detached one)"
    )
    triggers = TRIGGERS["TCL108"]  # in codes.py, importable without LibCST
    segment_triggers = (COPY_CALL + "|" + KIND_EVIDENCE,)
    unprunable = COPY_ALIAS  # `copy` under another name: calls can't be found by text

    VALID = [
        "import copy\nconfig = copy.copy({'lr': 1})",
        "import copy\nimport torch\nlayer = torch.nn.Linear(2, 2)\nother = copy.copy(layer)",
        "import copy\ndef f(x):\n    return copy.copy(x)",
        "import copy\nimport torch\nt = torch.zeros(3)\nu = copy.deepcopy(t)",
        "import copy\nimport torch\nxs = [torch.zeros(3)]\nys = copy.copy(xs)",
    ]
    INVALID = [
        "import copy\nimport torch\nt = torch.zeros(3)\nu = copy.copy(t)",
        "from copy import copy\nimport torch.nn as nn\np = nn.Parameter(torch.zeros(3))\nq = copy(p)",
        "import copy as c\nimport torch\ndef f(x: torch.Tensor):\n    return c.copy(x)",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if len(node.args) != 1 or self.context.qualified_name(node.func) != "copy.copy":
            return
        arg = node.args[0]
        if arg.keyword is not None or arg.star or self.context.kind_of(arg.value) is not Kind.TENSOR:
            return
        replacement = method(arg.value, "clone").with_changes(lpar=node.lpar, rpar=node.rpar)
        self.report(node, replacement=replacement, applicability=Applicability.UNSAFE)
