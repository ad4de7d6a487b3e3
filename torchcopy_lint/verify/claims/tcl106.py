"""TCL106 claims: torch.empty_like(t).copy_(t) is t.clone()."""

from __future__ import annotations

from typing import Dict, List

from ..core import Claim
from ..support import shares_storage, tensor_differences
from .common import copy_sources
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _like_copies(src) -> Dict[str, object]:
    """Every spelling TCL106 flags, applied to ``src``."""
    import torch

    return {
        "empty_like": torch.empty_like(src).copy_(src),  # noqa: TCL106
        "zeros_like": torch.zeros_like(src).copy_(src),  # noqa: TCL106
        "ones_like": torch.ones_like(src).copy_(src),  # noqa: TCL106
        "empty_like(preserve_format)":
            torch.empty_like(src, memory_format=torch.preserve_format).copy_(src),  # noqa: TCL106
    }


def _sources(device: str) -> Dict[str, object]:
    """The copy sources plus layouts ``empty_like`` must reproduce: non-dense and expanded (stride 0)."""
    import torch

    sources = dict(copy_sources(device))
    sources["non-dense"] = torch.randn(4, 6, device=device)[:, ::2]
    sources["expanded"] = torch.randn(3, 1, device=device).expand(3, 4)
    sources["parameter"] = torch.nn.Parameter(torch.randn(3, device=device))
    return sources


@claim("TCL106-not-detached", "TCL106",
       "empty_like/zeros_like/ones_like(t).copy_(t) of a tensor requiring grad requires grad and records "
       "CopyBackwards: it is not a detached copy",
       tags={"hazard", "myth"})
def _tcl106_not_detached(device: str) -> None:
    import torch

    leaf = torch.randn(3, device=device, requires_grad=True)
    for source_name, src in (("leaf", leaf), ("non-leaf", leaf * 2), ("parameter", torch.nn.Parameter(leaf.detach()))):
        for spelling, copied in _like_copies(src).items():
            assert copied.requires_grad, f"{spelling}({source_name}).copy_ does not require grad"
            assert type(copied.grad_fn).__name__ == "CopyBackwards", \
                f"{spelling}({source_name}).copy_ has grad_fn {copied.grad_fn}"


@claim("TCL106-same-as-clone", "TCL106",
       "empty_like/zeros_like/ones_like(t).copy_(t) == t.clone(): values, dtype, device, shape, strides (transposed, "
       "channels-last, non-dense, expanded), requires_grad, leaf status, new storage; only the grad_fn's name differs",
       tags={"fix"})
def _tcl106_same_as_clone(device: str) -> None:
    for source_name, src in _sources(device).items():
        cloned = src.clone()
        for spelling, copied in _like_copies(src).items():
            differences = tensor_differences(cloned, copied)
            if src.requires_grad:
                expected = ["grad_fn: 'CloneBackward0' != 'CopyBackwards'"]
            else:
                expected = []
            assert differences == expected, f"{spelling}({source_name}).copy_ vs clone(): {differences}"
            assert type(copied) is type(cloned), f"{spelling}({source_name}): {type(copied)} vs {type(cloned)}"
            assert not shares_storage(copied, src), f"{spelling}({source_name}).copy_ shares storage"


@claim("TCL106-same-gradients", "TCL106",
       "gradients through empty_like(t).copy_(t) and through t.clone() are identical",
       tags={"fix"})
def _tcl106_same_gradients(device: str) -> None:
    import torch

    torch.manual_seed(0)
    weights = torch.randn(3, 4, device=device, requires_grad=True)
    scale = torch.randn(3, 4, device=device)
    grads = {}
    for spelling, make in (("clone", lambda t: t.clone()),
                           ("empty_like", lambda t: torch.empty_like(t).copy_(t)),  # noqa: TCL106
                           ("zeros_like", lambda t: torch.zeros_like(t).copy_(t))):  # noqa: TCL106
        weights.grad = None
        (make(weights.t() * 2).t() * scale).pow(2).sum().backward()
        grads[spelling] = weights.grad.clone()
    for spelling, grad in grads.items():
        assert torch.equal(grad, grads["clone"]), f"gradient through {spelling} differs from clone()"


@claim("TCL106-cast-is-not-clone", "TCL106",
       "empty_like(t, dtype=T).copy_(t) casts (float 1.7 -> int 1): a different operation from t.clone(), not flagged",
       tags={"near-miss"})
def _tcl106_cast_is_not_clone(device: str) -> None:
    import torch

    t = torch.tensor([1.7, -1.7], device=device)
    cast = torch.empty_like(t, dtype=torch.int64).copy_(t)
    assert cast.dtype == torch.int64 and cast.tolist() == [1, -1], f"cast gave {cast}"
    assert t.clone().dtype == torch.float32
