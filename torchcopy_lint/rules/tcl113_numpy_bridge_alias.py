"""TCL113: ``t.numpy()``, ``torch.from_numpy(a)``, ``torch.as_tensor(a)``, ``np.asarray(t)`` share memory both ways,
and so does ``torch.FloatTensor(a)`` of a float32 array (a legacy constructor of the array's own dtype)."""

from __future__ import annotations

import libcst as cst

from ..codes import LEGACY_CONSTRUCTORS, TRIGGERS
from ..imports import dotted_name
from ..semantic import Kind
from ._alias import AliasRule, binding_at, name_of
from ._build import method
from ._dtypes import SETS_DTYPE, source_mentions
from ._numpy_dtype import array_dtype

_TO_ARRAY = ("numpy", "asarray")
_TO_TENSOR = ("from_numpy", "as_tensor", "legacy")  # legacy: torch.FloatTensor(a) of a float32 array


class NumpyBridgeAlias(AliasRule):
    """``t.numpy()`` and ``np.asarray(t)`` return an array over the tensor's memory;
    ``torch.from_numpy(a)`` and ``torch.as_tensor(a)`` return a tensor over the
    array's, and so do the legacy constructors (``torch.FloatTensor(a)``, ``torch.Tensor(a)``) of an array of
    their own dtype (float32 here; any other dtype is copied). Writing either side in place (``a[0] = 5``, ``a += 1``, ``t.add_(1)``,
    ``out=``) changes the other: a data pipeline that normalizes its tensor in place
    also rewrites the numpy array it came from, and an augmentation that edits the
    array edits the tensor already handed out. ``torch.tensor(a)`` and
    ``t.numpy().copy()`` copy.

    Flagged where the bridge is crossed, when the tensor side is known to be a
    tensor (or the array side a numpy array, for ``as_tensor``; of the constructor's dtype, spelled in the code,
    for a legacy constructor), one side is written
    in place and the *other* side is read afterwards on the same path, neither
    rebound in between. ``t.cpu().numpy()`` is left alone (``.cpu()`` copies from a
    GPU), and so are bridges whose sides are never written or never read again. The
    fix (``.copy()``, ``torch.tensor(a)``) is unsafe: memory is no longer shared,
    which is the point, but a reviewer must agree.
    """

    code = "TCL113"
    name = "numpy-bridge-alias"
    message = (
        "the numpy bridge shares memory: a write to one side changes the other; copy with `.copy()` / "
        "`torch.tensor(a)` if they must be independent"
    )
    triggers = TRIGGERS["TCL113"]  # in codes.py, importable without LibCST

    VALID = [
        "import torch\nt = torch.zeros(3)\na = t.numpy().copy()\na[0] = 5\nprint(t)",
        "import torch\nt = torch.zeros(3)\na = t.numpy()\na[0] = 5",
        "import torch\nt = torch.zeros(3)\na = t.numpy()\na = a + 1\nprint(t)",
        "import torch\nt = torch.zeros(3)\na = t.cpu().numpy()\na[0] = 5\nprint(t)",
        "import torch\nimport numpy as np\na = np.zeros(3)\nt = torch.tensor(a)\nt.add_(1)\nprint(a)",
        "import torch\ndef f(a):\n    t = torch.as_tensor(a)\n    t.add_(1)\n    return a",
        "import torch\nimport numpy as np\na = np.zeros(3)\nt = torch.FloatTensor(a)\nt.add_(1)\nprint(a)",
    ]
    INVALID = [
        "import torch\nt = torch.zeros(3)\na = t.numpy()\na[0] = 5\nprint(t)",
        "import torch\nimport numpy as np\na = np.zeros(3)\nt = torch.from_numpy(a)\nt.add_(1)\nprint(a)",
        "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.as_tensor(a)\na += 1\nprint(t)",
        "import torch\nimport numpy as np\nt = torch.ones(3)\na = np.asarray(t)\nt.mul_(2)\nprint(a)",
        "import torch\nimport numpy as np\na = np.zeros(3, dtype=np.float32)\nt = torch.FloatTensor(a)\nt.add_(1)"
        "\nprint(a)",
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or dotted_name(node.targets[0].target) is None:
            return
        target = node.targets[0].target
        storage = self.context.semantic.storage
        bridge, inner, expr = None, None, node.value
        while True:
            found = storage.alias_of(expr) or self._legacy(expr)
            if found is None:
                break
            if found[0] in _TO_ARRAY + _TO_TENSOR:
                bridge = bridge or (found[0], expr)
                inner = found[0]
            expr = found[1]
        key = dotted_name(expr)
        if bridge is None or key is None:
            return
        read = self.context.read(expr)
        binding = binding_at(read, dotted_name(target), target) if read is not None else None
        if binding is None:
            return
        flow = read.scope.flow
        alias, source = storage.side_of_binding(binding), storage.side_of_read(read)
        hazard = storage.hazard(flow, read.cfg, [alias], [source])
        written, seen = (name_of(target), key) if hazard is not None else (key, name_of(target))
        hazard = hazard or storage.hazard(flow, read.cfg, [source], [alias])
        if hazard is None or not self._known_side(inner, expr):
            return  # the kind last: it may read other modules
        detail = f"`{written}` written in place at line {{write}}, `{seen}` read at line {{read}}"
        self.report_hazard(bridge[1], hazard, detail, replacement=self._fix(*bridge))

    def _legacy(self, expr: cst.BaseExpression):
        """``torch.FloatTensor(a)`` / ``torch.Tensor(a)`` with ``a`` an array of the constructor's dtype, spelled in
        the code (``np.zeros(n, dtype=np.float32)``, ``.astype(np.float32)``): ("legacy", a); None otherwise
        (another or an unknown dtype: a copy, or not known to share; ``Tensor`` where the file sets the
        default dtype)."""
        if not isinstance(expr, cst.Call) or len(expr.args) != 1 or expr.args[0].keyword or expr.args[0].star:
            return None
        module, _, name = (self.context.qualified_name(expr.func) or "").rpartition(".")
        if module != "torch" or name not in LEGACY_CONSTRUCTORS \
                or name == "Tensor" and source_mentions(self.context, SETS_DTYPE):
            return None
        argument = expr.args[0].value
        return ("legacy", argument) if array_dtype(self.context, argument) == LEGACY_CONSTRUCTORS[name] else None

    def _known_side(self, inner: str, source: cst.BaseExpression) -> bool:
        """The side the innermost bridge starts from is what the bridge expects."""
        if inner in _TO_ARRAY:
            return self.context.kind_of(source) is Kind.TENSOR
        if inner == "as_tensor":
            return self.context.semantic.storage.is_array(source, self.context.stack)
        return True  # from_numpy raises on anything but an array; a legacy constructor's array is known

    def _fix(self, how: str, node: cst.BaseExpression):
        if how in _TO_ARRAY:
            return method(node, "copy")
        func = node.func  # type: ignore[attr-defined]
        if isinstance(func, cst.Attribute):
            return node.with_changes(func=func.with_changes(attr=cst.Name("tensor")))
        return None  # `from torch import from_numpy`: `torch` may not be bound here
