"""TCL114 claims: a tensor kept by reference follows later in-place writes."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL114-history-holds-last-value", "TCL114",
       "hist.append(x) then x.add_()/x += in a loop: every entry is the same tensor and equals the last value",
       tags={"hazard"})
def _tcl114_history_holds_last_value(device: str) -> None:
    import torch

    x = torch.zeros(2, device=device)
    hist = []
    for _ in range(3):
        hist.append(x)
        x.add_(1)
        x += 1
    assert all(h is x for h in hist), "the entries are not the tensor itself"
    assert [h.tolist() for h in hist] == [[6.0, 6.0]] * 3, f"entries: {[h.tolist() for h in hist]}"


@claim("TCL114-best-follows", "TCL114",
       "best = w (or w.data, w.detach()) then w.add_(..): best follows w", tags={"hazard"})
def _tcl114_best_follows(device: str) -> None:
    import torch

    w = torch.ones(2, device=device)
    best, best_data, best_detached = w, w.data, w.detach()
    w.add_(1)
    for kept in (best, best_data, best_detached):
        assert kept.tolist() == [2.0, 2.0], f"the kept reference did not follow w: {kept.tolist()}"


@claim("TCL114-old-data-after-step", "TCL114",
       "old = p.data then optimizer.step(): old is the updated parameter, p - old is 0", tags={"hazard"})
def _tcl114_old_data_after_step(device: str) -> None:
    import torch

    p = torch.nn.Parameter(torch.ones(3, device=device))
    optimizer = torch.optim.SGD([p], lr=0.5)
    old = p.data
    p.sum().backward()
    optimizer.step()
    assert p.tolist() == [0.5, 0.5, 0.5], f"the step did not update p: {p.tolist()}"
    assert torch.count_nonzero(p.detach() - old).item() == 0, "p - old is not zero"


@claim("TCL114-rebinding-near-miss", "TCL114",
       "hist.append(x) then x = x + 1 keeps distinct entries (not flagged)", tags={"near-miss"})
def _tcl114_rebinding_near_miss(device: str) -> None:
    import torch

    x = torch.zeros(1, device=device)
    hist = []
    for _ in range(3):
        hist.append(x)
        x = x + 1
    assert [h.item() for h in hist] == [0.0, 1.0, 2.0], f"entries: {[h.item() for h in hist]}"


@claim("TCL114-fix-snapshot", "TCL114",
       "t.detach().clone() keeps the value at that time: own storage, no graph, later writes of t do not show",
       tags={"fix"})
def _tcl114_fix_snapshot(device: str) -> None:
    import torch

    p = torch.nn.Parameter(torch.ones(3, device=device))
    optimizer = torch.optim.SGD([p], lr=0.5)
    old = p.detach().clone()
    assert not shares_storage(old, p) and not old.requires_grad and old.grad_fn is None
    p.sum().backward()
    optimizer.step()
    assert (p.detach() - old).tolist() == [-0.5, -0.5, -0.5], f"weight change: {(p.detach() - old).tolist()}"
