"""Calling a module instance, as the project index sees it: what its ``forward`` returns.

What it knows: a project class's own ``forward`` (or one of its project bases'), evaluated like any
project method with the call's arguments and the instance as ``self``; an ``nn`` layer's ``forward`` as
torch's annotations say (``knowledge/torch_table.json``; only answers that do not depend on the
arguments); a project class that defines ``__call__`` (or whose forward is unknown) gives UNKNOWN.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence

from .. import knowledge
from .project_names import UNKNOWN, Ctx, Value, class_summary, find_method, lookup, symbol_in

_MAX_BASES = 8


def module_call(ctx: Ctx, module: Value, args: Sequence[Any], kwargs: Dict, call_function: Callable) -> Value:
    """What ``module(*args, **kwargs)`` returns, for a module value ``(kind, class)``. ``call_function``
    evaluates a project method (``project_kinds.call_function``, which calls this module: passed in so
    that imports go one way)."""
    kind, cls = module
    if kind != "module" or cls is None:
        return UNKNOWN
    store = ctx.store
    if find_method(store, cls, "__call__") is not None:
        return UNKNOWN
    found = find_method(store, cls, "forward")
    if found is not None:
        return call_function(store, found[0], ctx, args, kwargs, receiver=module)
    layer = _torch_layer(store, cls, 0)
    returned = knowledge.plain_kind("module_forward", layer) if layer else None
    return (returned, None) if returned else UNKNOWN


def _torch_layer(store, cls: str, depth: int) -> str:
    """The ``torch.nn`` class whose ``forward`` ``cls`` inherits (itself, or through project bases), or ""."""
    parts = cls.split(".")
    if parts[:2] == ["torch", "nn"]:
        return parts[-1]
    sym = lookup(store, cls)
    if sym is not None and sym[0] == "external":
        return sym[1].split(".")[-1] if sym[1].startswith("torch.nn.") else ""
    summary = class_summary(sym)
    if summary is None or depth > _MAX_BASES:
        return ""
    ctx = Ctx(store, sym[2])
    layers = []
    for base in summary["bases"]:
        found = symbol_in(ctx, base[1]) if base[0] == "name" else None
        if found is not None and found[0] in ("class", "external"):
            layers.append(_torch_layer(store, found[1], depth + 1))
    return layers[0] if len(layers) == 1 else ""  # several bases: which forward wins is not followed
