"""Counting what a piece of torch code copies: the aten ops it dispatches and the bytes they allocate."""

from __future__ import annotations

from typing import Callable, List, Tuple


def dispatched(make: Callable[[], object]) -> Tuple[List[str], int]:
    """The aten ops ``make()`` dispatches (in order) and the bytes of the new tensors they return (views and
    in-place ops allocate nothing and are not counted)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class Log(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: List[str] = []
            self.bytes = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.ops.append(str(func.overloadpacket))
            inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs))
                      if isinstance(t, torch.Tensor)}
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in inputs:
                    self.bytes += t.untyped_storage().nbytes()
            return out

    with Log() as log:
        make()
    return log.ops, log.bytes


def allocated_bytes(make: Callable[[], object]) -> int:
    return dispatched(make)[1]
