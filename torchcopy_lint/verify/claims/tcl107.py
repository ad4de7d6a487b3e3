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


@claim("TCL107-one-element-flatten", "TCL107",
       "1-element tensors (any number of dimensions): torch.stack(L).flatten() has torch.tensor(L)'s shape (n,); "
       "for 0-d ones flatten() changes nothing",
       tags={"fix-caveat"})
def _tcl107_one_element_flatten(device: str) -> None:
    import torch

    for shape in ((1,), (1, 1)):
        elements = [torch.ones(shape, device=device), torch.zeros(shape, device=device)]
        assert torch.stack(elements).flatten().shape == torch.tensor(elements).shape == (2,), shape
    scalars = [torch.ones((), device=device), torch.zeros((), device=device)]
    assert torch.stack(scalars).flatten().shape == torch.stack(scalars).shape == (2,)


@claim("TCL107-zero-dim-evidence", "TCL107",
       "what the rule takes as 0-d is 0-d: whole reductions without arguments (sum mean prod max min norm std var "
       "median all any nansum nanmean count_nonzero), torch.<reduction>(x), torch.dot/vdot/trace, x.dot(y), the losses of "
       "torch.nn.functional with reduction mean or sum (and kl_div's batchmean), torch.zeros(()) and the other "
       "creations of shape (), *_like of a 0-d tensor, torch.tensor(<number>), and shape-keeping methods of these",
       tags={"fix-caveat"})
def _tcl107_zero_dim_evidence(device: str) -> None:
    import torch
    import torch.nn.functional as F

    from ...rules._zero_dim import LOSSES, SHAPE_KEEPING, WHOLE_REDUCTIONS

    x = torch.randn(4, 3, device=device)
    found = {f"x.{name}()": getattr(x, name)() for name in sorted(WHOLE_REDUCTIONS)}
    found.update({f"torch.{name}(x)": getattr(torch, name)(x) for name in sorted(WHOLE_REDUCTIONS)})
    found.update({"torch.dot": torch.dot(x[0], x[1]), "torch.vdot": torch.vdot(x[0], x[1]),
                  "x.dot(y)": x[0].dot(x[1]), "x.vdot(y)": x[0].vdot(x[1]),
                  "torch.trace": torch.trace(x[:3]), "torch.tensor(2.0)": torch.tensor(2.0, device=device),
                  "torch.scalar_tensor": torch.scalar_tensor(2, device=device)})
    target = torch.randint(0, 3, (4,), device=device)
    probabilities = torch.rand(4, 3, device=device)
    for name in sorted(LOSSES):
        loss = getattr(F, name)
        if name in ("cross_entropy", "nll_loss"):
            arguments = (x, target)
        elif name == "binary_cross_entropy":
            arguments = (probabilities, probabilities)
        else:
            arguments = (x, torch.randn(4, 3, device=device))
        for reduction in ("mean", "sum"):
            found[f"F.{name}(reduction={reduction})"] = loss(*arguments, reduction=reduction)
    found["F.kl_div(reduction=batchmean)"] = F.kl_div(x, x, reduction="batchmean")
    for creation in ("zeros", "ones", "empty", "rand", "randn"):
        made = getattr(torch, creation)((), device=device)
        found[f"torch.{creation}(())"] = made
        found[f"torch.{creation}_like(0-d)"] = getattr(torch, creation + "_like")(made)
    found["torch.randint_like(0-d, high=3)"] = torch.randint_like(torch.zeros((), device=device), high=3)
    found["torch.full((), v)"] = torch.full((), 2.0, device=device)
    scalar = x.sum()
    for name in sorted(SHAPE_KEEPING - {"cuda", "to", "requires_grad_"}):
        found[f"0-d.{name}()"] = getattr(scalar.detach(), name)()
    found["0-d.to(float64)"] = scalar.to(torch.float64)
    not_0d = {spelling: tuple(value.shape) for spelling, value in found.items() if value.dim() != 0}
    assert not not_0d, f"not 0-d: {not_0d}"


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
