"""TCL115 claims: a detached alias written in place writes the original."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import INPLACE_ERROR, shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL115-detach-shares-storage", "TCL115",
       "y = x.detach(); y.zero_() zeroes x: detach() returns a tensor over x's storage", tags={"hazard"})
def _tcl115_detach_shares_storage(device: str) -> None:
    import torch

    x = torch.arange(1.0, 4.0, device=device)
    y = x.detach()
    assert shares_storage(x, y), "detach() copied the storage"
    y.zero_()
    assert x.tolist() == [0.0, 0.0, 0.0], f"x did not follow its detached alias: {x.tolist()}"


@claim("TCL115-data-shares-storage", "TCL115",
       "y = x.data; y[0] = 5 and y += 1 write x (in place on a tensor)", tags={"hazard"})
def _tcl115_data_shares_storage(device: str) -> None:
    import torch

    x = torch.zeros(3, device=device, requires_grad=True) * 2
    y = x.data
    y[0] = 5
    y += 1
    assert x.tolist() == [6.0, 1.0, 1.0], f"x did not follow x.data: {x.tolist()}"


@claim("TCL115-breaks-backward", "TCL115",
       "writing x.detach() in place when x was saved for backward makes backward() raise "
       "'modified by an inplace operation'", tags={"hazard"})
def _tcl115_breaks_backward(device: str) -> None:
    import torch

    leaf = torch.ones(3, device=device, requires_grad=True)
    x = leaf.exp()  # exp saves its output for backward
    y = x.detach()
    y.zero_()
    try:
        x.sum().backward()
    except RuntimeError as error:
        assert INPLACE_ERROR in str(error), f"another error: {error}"
    else:
        raise AssertionError("backward() ran although the saved output was written through its detached alias")


@claim("TCL115-fix-clone", "TCL115",
       "x.detach().clone() has the same values and its own storage: writing it leaves x and backward alone",
       tags={"fix"})
def _tcl115_fix_clone(device: str) -> None:
    import torch

    leaf = torch.ones(3, device=device, requires_grad=True)
    x = leaf.exp()
    y = x.detach().clone()
    assert torch.equal(y, x.detach()) and not y.requires_grad and not shares_storage(x, y)
    y.zero_()
    x.sum().backward()
    assert leaf.grad is not None and torch.allclose(leaf.grad, x.detach()), f"gradient: {leaf.grad}"


@claim("TCL115-not-writes-near-miss", "TCL115",
       "requires_grad_() and share_memory_() on a detached alias do not change the original's values "
       "(not flagged)", tags={"near-miss"})
def _tcl115_not_writes_near_miss(device: str) -> None:
    import torch

    x = torch.arange(3.0, device=device)
    y = x.detach()
    y.requires_grad_()
    if device == "cpu":
        y.share_memory_()
    assert x.tolist() == [0.0, 1.0, 2.0] and not x.requires_grad, f"x changed: {x.tolist()} {x.requires_grad}"
