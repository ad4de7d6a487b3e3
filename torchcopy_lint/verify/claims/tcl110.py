"""TCL110 claims: accumulating a loss together with its graph."""

from __future__ import annotations

from typing import List, Tuple

from ..core import Claim
from ..support import bitwise_equal
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _graph_size(tensor) -> int:
    """Autograd nodes reachable from ``tensor.grad_fn``."""
    seen, pending = set(), [tensor.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        pending.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def _train(device: str, steps: int, detach: bool) -> Tuple[object, object]:
    """A 2-layer MLP trained for ``steps`` steps, summing its losses; returns (total, first layer's weight)."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(steps, 16, 4, device=device)
    total = 0.0
    for x in data:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        total += loss.detach() if detach else loss  # noqa: TCL110
    return total, model[0].weight.detach().clone()


@claim("TCL110-graph-grows", "TCL110",
       "total += loss after loss.backward() makes total require grad and grow by the same number of graph nodes "
       "every step (a 2-layer MLP here: 8 nodes per step, 84 after 10 steps, 244 after 30)",
       tags={"hazard"})
def _tcl110_graph_grows(device: str) -> None:
    sizes = {}
    for steps in (10, 20, 30):
        total, _ = _train(device, steps, detach=False)
        assert total.requires_grad, f"after {steps} steps the total does not require grad"
        sizes[steps] = _graph_size(total)
    assert sizes[20] - sizes[10] == sizes[30] - sizes[20] == 80, f"graph sizes {sizes}: not 8 nodes per step"


@claim("TCL110-detach-keeps-values", "TCL110",
       "total += loss.detach() gives the bitwise same total and the same trained weights, with no graph at all",
       tags={"fix"})
def _tcl110_detach_keeps_values(device: str) -> None:
    leaking, weights = _train(device, 20, detach=False)
    fixed, fixed_weights = _train(device, 20, detach=True)
    assert fixed.grad_fn is None and not fixed.requires_grad, f"the fixed total has grad_fn {fixed.grad_fn}"
    assert bitwise_equal(leaking, fixed), f"totals differ: {leaking} vs {fixed}"
    assert bitwise_equal(weights, fixed_weights), "training changed"


@claim("TCL110-graph-frees-saved-tensors", "TCL110",
       "the kept graph is not usable: backward() through the total raises (its saved tensors were freed)",
       tags={"fix"})
def _tcl110_graph_frees_saved_tensors(device: str) -> None:
    total, _ = _train(device, 3, detach=False)
    try:
        total.backward()
    except RuntimeError as error:
        assert "second time" in str(error) or "freed" in str(error), str(error)
    else:
        raise AssertionError("backward through the accumulated total did not raise")
