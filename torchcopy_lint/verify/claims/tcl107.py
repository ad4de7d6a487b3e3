"""TCL107 claims: torch.tensor([t1, t2, ...]) of tensors instead of torch.stack."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import assert_same_tensor, recorded_warnings, silenced_warnings
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)

#: Stable part of the warning torch emits when a tensor that requires grad is converted to a Python scalar.
SCALAR_WARNING = "Converting a tensor with requires_grad=True to a scalar"


def _constructors():
    import torch

    return {"torch.tensor": torch.tensor, "torch.as_tensor": torch.as_tensor}


@claim("TCL107-multi-element-raises", "TCL107",
       "torch.tensor([t1, t2]) and torch.as_tensor([t1, t2]) of multi-element tensors raise ValueError "
       "(each element is converted to a Python scalar)",
       tags={"hazard"})
def _tcl107_multi_element_raises(device: str) -> None:
    import torch

    rows = [torch.randn(3, device=device), torch.randn(3, device=device)]
    for name, make in _constructors().items():
        try:
            make(rows)
        except ValueError as error:
            assert "only one element tensors can be converted to Python scalars" in str(error), str(error)
        else:
            raise AssertionError(f"{name} of two 3-element tensors did not raise")
    assert torch.stack(rows).shape == (2, 3)


@claim("TCL107-drops-graph", "TCL107",
       "torch.tensor/as_tensor of 0-d tensors that require grad returns a tensor that does not require grad "
       "(the graph is dropped; torch warns once per process, then never again)",
       tags={"hazard"})
def _tcl107_drops_graph(device: str) -> None:
    import torch

    weight = torch.ones(2, device=device, requires_grad=True)
    losses = [(weight * 2).sum(), (weight * 3).sum()]
    for name, make in _constructors().items():
        with silenced_warnings():
            make(losses)  # the warning, if this process has not shown it yet
        with recorded_warnings() as records:
            built = make(losses)
        assert not built.requires_grad and built.grad_fn is None, f"{name} kept the graph"
        assert built.tolist() == [4.0, 6.0], f"{name} gave {built}"
        repeated = [r for r in records if SCALAR_WARNING in str(r.message)]
        assert not repeated, f"{name} warned again: {repeated[0].message}"


@claim("TCL107-stack-keeps-graph", "TCL107",
       "torch.stack of 0-d tensors that require grad keeps the graph: gradients reach every element's leaves",
       tags={"fix"})
def _tcl107_stack_keeps_graph(device: str) -> None:
    import torch

    weight = torch.ones(2, device=device, requires_grad=True)
    stacked = torch.stack([(weight * 2).sum(), (weight * 3).sum()])
    assert stacked.requires_grad and stacked.tolist() == [4.0, 6.0], f"torch.stack gave {stacked}"
    stacked.sum().backward()
    assert weight.grad.tolist() == [5.0, 5.0], f"gradient {weight.grad}"


@claim("TCL107-same-for-0d", "TCL107",
       "for 0-d tensors without grad, torch.tensor(L)/as_tensor(L) equals torch.stack(L) in values, dtype "
       "(float32/64, float16, bfloat16, int32/64, bool kept), shape, strides (device aside)",
       tags={"fix"})
def _tcl107_same_for_0d(device: str) -> None:
    import torch

    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool):
        elements = [torch.tensor(1, dtype=dtype, device=device), torch.tensor(0, dtype=dtype, device=device)]
        stacked = torch.stack(elements)
        assert stacked.device == elements[0].device, f"torch.stack moved {dtype} elements to {stacked.device}"
        for name, make in _constructors().items():
            with silenced_warnings():
                built = make(elements, device=device)
            assert_same_tensor(built, stacked, f"{name} of 0-d {dtype}")


@claim("TCL107-one-element-shape", "TCL107",
       "1-element 1-d tensors: torch.tensor(L) has shape (n,), torch.stack(L) has shape (n, 1)",
       tags={"fix-caveat"})
def _tcl107_one_element_shape(device: str) -> None:
    import torch

    elements = [torch.ones(1, device=device), torch.zeros(1, device=device)]
    assert torch.tensor(elements).shape == (2,), "torch.tensor of 1-element tensors is not 1-d"
    assert torch.stack(elements).shape == (2, 1), "torch.stack of 1-element tensors is not (n, 1)"


@claim("TCL107-stack-empty-raises", "TCL107",
       "torch.stack([]) raises where torch.tensor([]) returns an empty tensor: no fix for a list filled in a loop",
       tags={"fix-caveat"})
def _tcl107_stack_empty_raises(device: str) -> None:
    import torch

    assert torch.tensor([], device=device).shape == (0,)
    try:
        torch.stack([])
    except RuntimeError as error:
        assert "non-empty" in str(error), str(error)
    else:
        raise AssertionError("torch.stack([]) did not raise")
