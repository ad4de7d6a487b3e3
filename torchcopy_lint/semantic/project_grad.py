"""Across modules: whether nothing a project function or method returns requires grad.

The summary of the function (``ng``, semantic/grad_returns.py) lists the names that answer rests on as
written in its module: each grad-mode context or decorator must be torch's (``torch.no_grad``,
``inference_mode``, ``set_grad_enabled``) and each namespace of a function called torch's own
(``torch``, ``torch.nn.functional``...), as the module's imports resolve them.
"""

from __future__ import annotations

from .project_names import Ctx, lookup, symbol_in
from .project_store import ProjectStore
from .vocabulary import NO_GRAD_CONTEXTS, SET_GRAD_ENABLED

_OFF = NO_GRAD_CONTEXTS | SET_GRAD_ENABLED
_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft"})


def returns_without_grad(store: ProjectStore, qualified: str) -> bool:
    """``qualified`` (a project function or method) returns only values that do not require grad."""
    sym = lookup(store, qualified)
    if sym is None or sym[0] not in ("def", "method"):
        return False
    module = sym[2]
    fn = module.summary["functions"][sym[3]] if sym[0] == "def" else \
        module.summary["classes"][sym[3]]["methods"][sym[4]]
    names = fn.get("ng")
    if names is None:
        return False
    ctx = Ctx(store, module)
    for name, role in names:
        found = symbol_in(ctx, name)
        target = found[1] if found is not None and found[0] == "external" else None
        if target not in (_OFF if role == "off" else _NAMESPACES):
            return False
    return True
