"""TCL112 claims: `[t] * n` holds one tensor n times."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL112-one-tensor-n-times", "TCL112",
       "[t] * n and n * [t] hold the same tensor object n times: xs[0].add_(..), xs[1][0] = v and xs[2] += v "
       "(in place on a tensor) each change every element",
       tags={"hazard"})
def _tcl112_one_tensor_n_times(device: str) -> None:
    import torch

    for make in (lambda: [torch.zeros(2, device=device)] * 3, lambda: 3 * [torch.zeros(2, device=device)]):
        xs = make()
        assert all(x is xs[0] for x in xs), "the elements are different objects"
        xs[0].add_(1)
        xs[1][0] = 7
        xs[2] += 1
        assert all(x.tolist() == [8.0, 2.0] for x in xs), f"the writes did not reach every element: {xs}"


@claim("TCL112-rebinding-is-safe", "TCL112",
       "rebinding an element (xs[0] = xs[0] + 1) replaces that slot only; stacking or reading the list is "
       "unaffected: not flagged",
       tags={"near-miss"})
def _tcl112_rebinding_is_safe(device: str) -> None:
    import torch

    xs = [torch.zeros(2, device=device)] * 3
    xs[0] = xs[0] + 1
    assert xs[0].tolist() == [1.0, 1.0] and xs[1].tolist() == [0.0, 0.0] and xs[2] is xs[1], xs
    assert torch.stack(xs).tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


@claim("TCL112-fix-distinct", "TCL112",
       "[t.clone() for _ in range(n)] and [torch.zeros(..) for _ in range(n)] hold n tensors with their own "
       "storage and the values, dtype, device and requires_grad of the repeated one: a write reaches one element",
       tags={"fix"})
def _tcl112_fix_distinct(device: str) -> None:
    import torch

    t = torch.arange(3.0, device=device)
    for xs in ([t.clone() for _ in range(3)], [torch.arange(3.0, device=device) for _ in range(3)]):
        assert all(torch.equal(x, t) and x.dtype == t.dtype and x.device == t.device for x in xs)
        assert not any(shares_storage(a, b) for i, a in enumerate(xs) for b in xs[i + 1:]), "elements share"
        xs[0].add_(1)
        assert xs[0].tolist() == [1.0, 2.0, 3.0] and xs[1].tolist() == [0.0, 1.0, 2.0], xs
    assert t.tolist() == [0.0, 1.0, 2.0], "a write to a clone reached the original"


@claim("TCL112-fix-clone-caveat", "TCL112",
       "t.clone() of a tensor that requires grad is a non-leaf (CloneBackward0) that no longer is t: the list no "
       "longer follows later in-place writes to t, and gradients flow back to t through each element",
       tags={"fix-caveat"})
def _tcl112_fix_clone_caveat(device: str) -> None:
    import torch

    t = torch.ones(2, device=device, requires_grad=True)
    xs = [t.clone() for _ in range(2)]
    assert all(not x.is_leaf and type(x.grad_fn).__name__ == "CloneBackward0" for x in xs), xs
    sum(x.sum() for x in xs).backward()
    assert t.grad is not None and t.grad.tolist() == [2.0, 2.0], t.grad
