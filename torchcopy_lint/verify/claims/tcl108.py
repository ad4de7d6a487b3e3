"""TCL108 claims: copy.copy(t) of a tensor is not a copy."""

from __future__ import annotations

import copy
from typing import List

from ..core import Claim
from ..support import shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL108-shares-storage", "TCL108",
       "copy.copy(t) returns a new tensor object over t's storage: a write to either shows in the other",
       tags={"hazard"})
def _tcl108_shares_storage(device: str) -> None:
    import torch

    t = torch.arange(4.0, device=device)
    shallow = copy.copy(t)  # noqa: TCL108
    assert shallow is not t, "copy.copy returned the same object"
    assert shares_storage(shallow, t), "copy.copy copied the data"
    t.add_(1)
    shallow[0] = 10
    assert shallow.tolist() == [10.0, 2.0, 3.0, 4.0] and t.tolist() == [10.0, 2.0, 3.0, 4.0], \
        f"writes did not cross over: {t.tolist()} / {shallow.tolist()}"


@claim("TCL108-cuts-graph", "TCL108",
       "copy.copy(non-leaf) is a leaf requiring grad with no grad_fn: backward through it never reaches the "
       "original's leaves",
       tags={"hazard"})
def _tcl108_cuts_graph(device: str) -> None:
    import torch

    leaf = torch.ones(3, device=device, requires_grad=True)
    shallow = copy.copy(leaf * 2)  # noqa: TCL108
    assert shallow.is_leaf and shallow.requires_grad and shallow.grad_fn is None, \
        f"copy.copy kept the graph: leaf={shallow.is_leaf} grad_fn={shallow.grad_fn}"
    (shallow * 3).sum().backward()
    assert leaf.grad is None, f"gradient reached the original leaf: {leaf.grad}"
    assert shallow.grad is not None, "the copy did not become a leaf that accumulates .grad"


@claim("TCL108-parameter-stays-parameter", "TCL108",
       "copy.copy(parameter) returns another Parameter over the same storage",
       tags={"hazard"})
def _tcl108_parameter_stays_parameter(device: str) -> None:
    import torch

    weight = torch.nn.Parameter(torch.randn(3, device=device))
    shallow = copy.copy(weight)  # noqa: TCL108
    assert type(shallow) is torch.nn.Parameter, f"copy.copy(Parameter) is a {type(shallow).__name__}"
    assert shallow is not weight and shares_storage(shallow, weight), "the Parameter's storage was copied"


@claim("TCL108-fix-clone", "TCL108",
       "t.clone() has its own storage, equal values/dtype/strides, and keeps the graph: gradients reach t's leaves",
       tags={"fix"})
def _tcl108_fix_clone(device: str) -> None:
    import torch

    leaf = torch.ones(3, device=device, requires_grad=True)
    hidden = leaf * 2
    cloned = hidden.clone()
    assert not shares_storage(cloned, hidden), "clone shares storage"
    assert torch.equal(cloned, hidden) and cloned.stride() == hidden.stride() and cloned.dtype == hidden.dtype
    (cloned * 3).sum().backward()
    assert leaf.grad is not None and leaf.grad.tolist() == [6.0, 6.0, 6.0], f"gradient through clone: {leaf.grad}"


@claim("TCL108-fix-parameter-caveat", "TCL108",
       "parameter.clone() is a plain Tensor (non-leaf, CloneBackward0), not a Parameter: the fix changes the type",
       tags={"fix-caveat"})
def _tcl108_fix_parameter_caveat(device: str) -> None:
    import torch

    weight = torch.nn.Parameter(torch.randn(3, device=device))
    cloned = weight.clone()
    assert type(cloned) is torch.Tensor, f"clone of a Parameter is a {type(cloned).__name__}"
    assert not cloned.is_leaf and type(cloned.grad_fn).__name__ == "CloneBackward0", f"grad_fn {cloned.grad_fn}"


@claim("TCL108-container-copy-near-miss", "TCL108",
       "copy.copy(list_of_tensors) copies the list and keeps the same tensor objects: intended, not flagged",
       tags={"near-miss"})
def _tcl108_container_copy_near_miss(device: str) -> None:
    import torch

    tensors = [torch.zeros(2, device=device), torch.ones(2, device=device)]
    copied = copy.copy(tensors)
    assert copied is not tensors and all(a is b for a, b in zip(copied, tensors)), "list copy did not keep elements"
