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


@claim("TCL115-reads-before-the-write-near-miss", "TCL115",
       "y = x.detach(): y.add_(x * 2), y += x and y[k] = f(x[k]) read x before the write lands; over disjoint "
       "blocks k, each pass reads values no earlier pass wrote (not flagged)", tags={"near-miss"})
def _tcl115_reads_before_the_write_near_miss(device: str) -> None:
    import torch

    def by_blocks(out: "torch.Tensor", source: "torch.Tensor") -> None:
        for k in (slice(0, 2), slice(2, 4)):  # disjoint blocks, as an initialiser's
            out[k] = torch.flip(source[k], [0]) + source[k].sum()

    x = torch.arange(4.0, device=device)
    x.detach().add_(x * 2)
    assert x.tolist() == [0.0, 3.0, 6.0, 9.0], f"y.add_(x * 2) did not read x first: {x.tolist()}"
    alias = x.detach()
    alias += x
    assert x.tolist() == [0.0, 6.0, 12.0, 18.0], f"y += x did not read x first: {x.tolist()}"
    on_copy = x.clone()
    by_blocks(on_copy, x)
    by_blocks(x.data, x)
    assert torch.equal(x, on_copy), f"a later block saw an earlier block's write: {x.tolist()} {on_copy.tolist()}"
