"""Inputs, rewrites and assertions shared by several rules' claims.

The rewrites here are the fixes the rules propose, spelled as Python functions so the
claims can compare them with the original call on real tensors.
"""

from __future__ import annotations

from typing import Callable, Dict

from ..support import copy_construct_warnings, recorded_warnings, shares_storage, silenced_warnings, timing_ratio

#: Elements in the tensors the timing claims copy (4 MB of float32: copy cost, not call overhead).
TIMING_ELEMENTS = 1_000_000
#: A "2-3x slower" claim would need a ratio of 2 or more; anything under this bound refutes it.
TIMING_RATIO_BOUND = 1.5
#: Bound on the fixed per-call overhead of torch.tensor(t) over t.detach().clone() (measured: ~0.7 us).
OVERHEAD_BOUND_US = 5.0


def copy_sources(device: str) -> Dict[str, object]:
    """Tensors a copy must reproduce faithfully: odd strides, integer, graph leaf and non-leaf, 0-d."""
    import torch

    leaf = torch.randn(3, 4, device=device, requires_grad=True)
    return {
        "contiguous": torch.randn(3, 4, device=device),
        "transposed": torch.randn(3, 4, device=device).t(),
        "channels_last": torch.randn(2, 3, 4, 5, device=device).contiguous(memory_format=torch.channels_last),
        "int64": torch.arange(6, device=device),
        "leaf requiring grad": leaf,
        "non-leaf": leaf * 2,
        "0-d": torch.tensor(1.5, device=device),
    }


def _conversions(device, dtype) -> Dict[str, object]:
    """The ``.to()`` keywords a fix spells out: only those given, device before dtype."""
    return {name: value for name, value in (("device", device), ("dtype", dtype)) if value is not None}


def _with_requires_grad(fixed, requires_grad):
    """``requires_grad=R`` becomes a trailing ``.requires_grad_(R)``."""
    return fixed if requires_grad is None else fixed.requires_grad_(requires_grad)


def fixed_torch_tensor(src, device=None, dtype=None, requires_grad=None):
    """TCL101's rewrite of ``torch.tensor(src, **kwargs)``."""
    conversions = _conversions(device, dtype)
    fixed = src.detach().to(**conversions, copy=True) if conversions else src.detach().clone()
    return _with_requires_grad(fixed, requires_grad)


def fixed_new_tensor(x, y, device=None, dtype=None, requires_grad=None):
    """TCL102's rewrite of ``x.new_tensor(y, **kwargs)``.

    ``y.detach().to(x, copy=True)``; with device/dtype, the missing one comes from ``x``; for
    ``x.new_tensor(x)`` the target already is ``x``, so only the kwargs given are kept.
    """
    conversions = _conversions(device, dtype)
    if not conversions:
        fixed = y.detach().clone() if y is x else y.detach().to(x, copy=True)
    elif y is x:
        fixed = y.detach().to(**conversions, copy=True)
    else:
        target = {"device": x.device, "dtype": x.dtype, **conversions}
        fixed = y.detach().to(**target, copy=True)
    return _with_requires_grad(fixed, requires_grad)


def assert_fresh_copy(copied, src, what: str) -> None:
    """A copy must be a detached leaf in its own storage."""
    assert not shares_storage(copied, src), f"{what}: result shares storage with its source"
    assert copied.is_leaf and copied.grad_fn is None, f"{what}: result is not a detached leaf"


def assert_no_copy_warning(make: Callable[[], object], what: str) -> None:
    with recorded_warnings() as records:
        make()
    found = copy_construct_warnings(records)
    assert not found, f"{what} emitted {str(found[0].message)!r}"


def warning_message(make: Callable[[], object], what: str) -> str:
    with recorded_warnings() as records:
        make()
    found = copy_construct_warnings(records)
    assert len(found) == 1, f"{what} emitted {len(found)} copy-construct warnings, expected 1: {records}"
    return str(found[0].message)


def timing_input(requires_grad: bool = False):
    import torch

    torch.manual_seed(0)
    return torch.randn(TIMING_ELEMENTS, requires_grad=requires_grad)


def assert_not_slower(candidate: Callable[[], object], baseline: Callable[[], object], what: str) -> None:
    with silenced_warnings():  # the copy-construct warning is not what is being timed
        ratio = timing_ratio(candidate, baseline)
    assert ratio < TIMING_RATIO_BOUND, f"{what}: time ratio {ratio:.2f} >= {TIMING_RATIO_BOUND}"
