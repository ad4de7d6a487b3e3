"""Claims about widely repeated statements not tied to a single rule (rule ``general``; docs/myths.md)."""

from __future__ import annotations

import copy
from typing import List

from ..core import Claim
from ..support import shares_storage
from .common import TIMING_ELEMENTS, TIMING_RATIO_BOUND, assert_not_slower, timing_input
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("general-clone-owns-memory", "general",
       "t.clone() is not a shallow copy: it has its own storage and writes do not cross over",
       tags={"myth"})
def _general_clone_owns_memory(device: str) -> None:
    import torch

    original = torch.arange(5, device=device)
    cloned = original.clone()
    assert not shares_storage(original, cloned), "clone() shares storage"
    cloned[0] = 10
    original[1] = 20
    assert original.tolist() == [0, 20, 2, 3, 4] and cloned.tolist() == [10, 1, 2, 3, 4], "writes crossed over"


@claim("general-tensors-mutable", "general",
       "tensors are mutable: in-place ops change them where they are, visible through every alias",
       tags={"myth"})
def _general_tensors_mutable(device: str) -> None:
    import torch

    t = torch.zeros(3, device=device)
    alias = t
    view = t[1:]
    storage, version = t.untyped_storage().data_ptr(), t._version
    t.add_(1)
    assert t.untyped_storage().data_ptr() == storage, "add_ moved the tensor"
    assert t._version == version + 1, "the version counter did not move"
    assert alias.tolist() == [1.0, 1.0, 1.0] and view.tolist() == [1.0, 1.0], "an alias did not see the change"


@claim("general-empty-like-copy-tracks-grad", "general",
       "torch.empty_like(t).copy_(t) is not detached: it requires grad and records CopyBackwards",
       tags={"myth"})
def _general_empty_like_copy_tracks_grad(device: str) -> None:
    import torch

    t = torch.randn(3, device=device, requires_grad=True)
    copied = torch.empty_like(t).copy_(t)  # noqa: TCL106
    assert copied.requires_grad, "the copy does not require grad"
    assert type(copied.grad_fn).__name__ == "CopyBackwards", f"grad_fn is {copied.grad_fn}"


@claim("general-empty-like-copy-not-faster", "general",
       f"torch.empty_like(t).copy_(t) is no fast path: at {TIMING_ELEMENTS:,} elements t.detach().clone() costs "
       f"< {TIMING_RATIO_BOUND}x it",
       devices=("cpu",), tags={"myth", "timing"})
def _general_empty_like_copy_not_faster(device: str) -> None:
    import torch

    t = timing_input()
    assert_not_slower(lambda: t.detach().clone(), lambda: torch.empty_like(t).copy_(t),  # noqa: TCL106
                      "t.detach().clone() / empty_like(t).copy_(t)")


@claim("general-copy-copy-cuts-graph", "general",
       "copy.copy(t) of a non-leaf returns a leaf with no grad_fn sharing t's storage: the graph is silently cut",
       tags={"hazard"})
def _general_copy_copy_cuts_graph(device: str) -> None:
    import torch

    hidden = torch.randn(3, device=device, requires_grad=True) * 2
    shallow = copy.copy(hidden)  # noqa: TCL108
    assert shallow.is_leaf and shallow.grad_fn is None, f"copy.copy kept grad_fn {shallow.grad_fn}"
    assert shares_storage(shallow, hidden), "copy.copy copied the data"


@claim("general-deepcopy-view-copies-base", "general",
       "copy.deepcopy(view) copies the view's whole base storage; view.clone() copies only the view",
       tags={"hazard"})
def _general_deepcopy_view_copies_base(device: str) -> None:
    import torch

    base = torch.zeros(10_000, device=device)
    view = base[:2]
    base_bytes = base.untyped_storage().nbytes()
    deep_bytes = copy.deepcopy(view).untyped_storage().nbytes()
    clone_bytes = view.clone().untyped_storage().nbytes()
    assert deep_bytes == base_bytes, f"deepcopy(view) holds {deep_bytes} bytes, base has {base_bytes}"
    assert clone_bytes == view.numel() * view.element_size(), f"view.clone() holds {clone_bytes} bytes"
