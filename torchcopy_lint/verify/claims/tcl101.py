"""TCL101 claims: torch.tensor(t) on a tensor."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import (
    assert_same_tensor,
    best_times,
    copy_construct_warnings,
    recorded_warnings,
    shares_storage,
    silenced_warnings,
)
from .common import (
    OVERHEAD_BOUND_US,
    TIMING_ELEMENTS,
    TIMING_RATIO_BOUND,
    assert_fresh_copy,
    assert_no_copy_warning,
    assert_not_slower,
    copy_sources,
    fixed_torch_tensor,
    timing_input,
    warning_message,
)
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL101-warns", "TCL101", "torch.tensor(t) on a tensor emits the copy-construct UserWarning on every call",
       tags={"hazard"})
def _tcl101_warns(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    for attempt in range(2):
        message = warning_message(lambda: torch.tensor(t), f"torch.tensor(t), call {attempt + 1}")  # noqa: TCL101
        assert message.endswith("rather than torch.tensor(sourceTensor)."), message


@claim("TCL101-warning-text", "TCL101",
       "the warning recommends sourceTensor.detach().clone() and no longer mentions clone().detach()",
       tags={"myth"})
def _tcl101_warning_text(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    message = warning_message(lambda: torch.tensor(t), "torch.tensor(t)")  # noqa: TCL101
    assert "sourceTensor.detach().clone()" in message, message
    assert "clone().detach()" not in message, message


@claim("TCL101-fix-silent", "TCL101", "every form of the TCL101 fix emits no copy-construct warning", tags={"fix"})
def _tcl101_fix_silent(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    for kwargs in ({}, {"dtype": torch.float64}, {"device": device}, {"requires_grad": True}):
        assert_no_copy_warning(lambda: fixed_torch_tensor(t, **kwargs), f"TCL101 fix with {kwargs}")


@claim("TCL101-fix-equivalent", "TCL101",
       "torch.tensor(t) == t.detach().clone(): values, dtype, device, strides, requires_grad=False, leaf, new storage",
       tags={"fix"})
def _tcl101_fix_equivalent(device: str) -> None:
    import torch

    for name, src in copy_sources(device).items():
        with silenced_warnings():
            original = torch.tensor(src)
        fixed = fixed_torch_tensor(src)
        assert_same_tensor(original, fixed, f"{name} source")
        assert not original.requires_grad, f"{name} source: torch.tensor(t) requires grad"
        assert_fresh_copy(original, src, f"torch.tensor(t), {name} source")
        assert_fresh_copy(fixed, src, f"t.detach().clone(), {name} source")


@claim("TCL101-kwargs-equivalent", "TCL101",
       "torch.tensor(t, device=D, dtype=T, requires_grad=R) == t.detach().to(device=D, dtype=T, copy=True)"
       ".requires_grad_(R)",
       tags={"fix"})
def _tcl101_kwargs_equivalent(device: str) -> None:
    import torch

    for name, src in copy_sources(device).items():
        variants = [{"dtype": torch.float64}, {"dtype": src.dtype}, {"device": device},
                    {"device": device, "dtype": torch.float16}]
        if src.is_floating_point():  # integer tensors cannot require grad, in either form
            variants += [{"requires_grad": True}, {"requires_grad": False},
                         {"dtype": torch.float64, "requires_grad": True}]
        for kwargs in variants:
            with silenced_warnings():
                original = torch.tensor(src, **kwargs)
            fixed = fixed_torch_tensor(src, **kwargs)
            assert_same_tensor(original, fixed, f"{name} source, {kwargs}")
            assert not shares_storage(fixed, src), f"{name} source, {kwargs}: fix aliases its source"


@claim("TCL101-kwargs-need-copy", "TCL101",
       "without copy=True, t.detach().to(dtype=t.dtype) or .to(device=t.device) returns an alias of t",
       tags={"fix"})
def _tcl101_kwargs_need_copy(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    for kwargs in ({"dtype": t.dtype}, {"device": device}, {"device": device, "dtype": t.dtype}):
        assert shares_storage(t.detach().to(**kwargs), t), f".to(**{kwargs}) without copy=True made a copy"
        assert not shares_storage(t.detach().to(**kwargs, copy=True), t), f".to(**{kwargs}, copy=True) aliased"
        with silenced_warnings():
            copied = torch.tensor(t, **kwargs)  # noqa: TCL101
        assert not shares_storage(copied, t), f"torch.tensor(t, **{kwargs}) aliased"


@claim("TCL101-device-move", "TCL101",
       "across devices, torch.tensor(t, device=D) == t.detach().to(device=D, copy=True)",
       devices=("cuda",), tags={"fix"})
def _tcl101_device_move(device: str) -> None:
    import torch

    for src_device, target in (("cpu", device), (device, "cpu")):
        for src in (torch.randn(3, 4, device=src_device), torch.randn(3, 4, device=src_device).t()):
            with silenced_warnings():
                original = torch.tensor(src, device=target)  # noqa: TCL101
            assert_same_tensor(original, fixed_torch_tensor(src, device=target), f"{src_device} -> {target}")


@claim("TCL101-default-device", "TCL101",
       "only difference: under a default device (torch.set_default_device / with torch.device), "
       "torch.tensor(t) moves the copy there, t.detach().clone() does not",
       tags={"fix-caveat"})
def _tcl101_default_device(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    with torch.device("meta"), silenced_warnings():
        original, fixed = torch.tensor(t), fixed_torch_tensor(t)  # noqa: TCL101
    assert original.device.type == "meta", f"torch.tensor(t) landed on {original.device}, not the default device"
    assert fixed.device == t.device, f"t.detach().clone() landed on {fixed.device}, not {t.device}"


@claim("TCL101-pin-memory-raises", "TCL101",
       "torch.tensor(t, pin_memory=True) raises RuntimeError (\"Can't pin tensor constructed from a variable\"), "
       "so there is nothing to fix",
       tags={"fix"})
def _tcl101_pin_memory_raises(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    try:
        with silenced_warnings():
            torch.tensor(t, pin_memory=True)  # noqa: TCL101
    except RuntimeError as exc:
        assert "Can't pin tensor constructed from a variable" in str(exc), f"unexpected error: {exc}"
    else:
        raise AssertionError("torch.tensor(t, pin_memory=True) did not raise")


@claim("TCL101-pin-memory-manual", "TCL101",
       "the manual spelling for a pinned copy, t.detach().clone().pin_memory(), pins a fresh copy of a CPU tensor",
       devices=("cuda",), tags={"fix-caveat"})
def _tcl101_pin_memory_manual(device: str) -> None:
    import torch

    t = torch.randn(3, 4).t()  # pinning applies to CPU tensors; it needs the CUDA runtime
    pinned = t.detach().clone().pin_memory()
    assert pinned.is_pinned(), "result is not pinned"
    assert torch.equal(pinned, t) and not shares_storage(pinned, t), "result is not a fresh copy of t"


@claim("TCL101-as-tensor-identity", "TCL101",
       "torch.as_tensor(t) returns t itself (graph included): it is not a copy and is not flagged",
       tags={"near-miss"})
def _tcl101_as_tensor_identity(device: str) -> None:
    import torch

    for name, src in copy_sources(device).items():
        for kwargs in ({}, {"dtype": src.dtype}, {"device": device}):
            assert torch.as_tensor(src, **kwargs) is src, f"torch.as_tensor({name}, **{kwargs}) is not its input"


@claim("TCL101-legacy-constructor-alias", "TCL101",
       "torch.Tensor(t) is no copy either: it shares t's storage and keeps its graph (AliasBackward0)",
       devices=("cpu",), tags={"near-miss"})
def _tcl101_legacy_constructor_alias(device: str) -> None:
    import torch

    src = torch.randn(3, device=device, requires_grad=True) * 2
    alias = torch.Tensor(src)
    assert shares_storage(alias, src), "torch.Tensor(t) copied"
    assert type(alias.grad_fn).__name__ == "AliasBackward0", f"grad_fn is {alias.grad_fn}"


@claim("TCL101-near-miss-no-warning", "TCL101",
       "torch.tensor of a torch.Size, a list of floats or a list of 0-d tensors emits no copy-construct warning",
       tags={"near-miss"})
def _tcl101_near_miss_no_warning(device: str) -> None:
    import torch

    sources = {
        "torch.Size": torch.Size([2, 3]),
        "list of 0-d tensors": [torch.tensor(1.0, device=device), torch.tensor(2.0, device=device)],
        "list of floats": [1.0, 2.0],
    }
    for name, data in sources.items():
        assert_no_copy_warning(lambda: torch.tensor(data, device=device), f"torch.tensor({name})")


@claim("TCL101-numpy-array-no-warning", "TCL101",
       "torch.tensor of a numpy array emits no copy-construct warning", tags={"near-miss"}, requires=("numpy",))
def _tcl101_numpy_array_no_warning(device: str) -> None:
    import numpy
    import torch

    assert_no_copy_warning(lambda: torch.tensor(numpy.arange(3.0), device=device), "torch.tensor(numpy array)")


@claim("TCL101-list-of-tensors", "TCL101",
       "torch.tensor([t1, t2]) raises ValueError for multi-element tensors and drops the graph of 0-d ones "
       "(torch's 'requires_grad=True to a scalar' hint is shown once per process at most)",
       tags={"near-miss"})
def _tcl101_list_of_tensors(device: str) -> None:
    import torch

    a = torch.tensor(1.0, device=device, requires_grad=True)
    with recorded_warnings() as records:
        stacked = torch.tensor([a * 2, a * 3], device=device)  # noqa: TCL107
        torch.tensor([a * 2, a * 3], device=device)  # noqa: TCL107
    assert not stacked.requires_grad and stacked.grad_fn is None, "graph was kept"
    assert not copy_construct_warnings(records), "copy-construct warning emitted for a list"
    hints = [r for r in records if "requires_grad=True to a scalar" in str(r.message)]
    assert len(hints) <= 1, f"the hint was shown {len(hints)} times in two calls"
    assert torch.stack([a * 2, a * 3]).grad_fn is not None, "torch.stack lost the graph"
    try:
        torch.tensor([torch.ones(2, device=device), torch.ones(2, device=device)])  # noqa: TCL107
    except ValueError:
        pass
    else:
        raise AssertionError("torch.tensor([multi-element tensors]) did not raise ValueError")


@claim("TCL101-speed", "TCL101",
       f"torch.tensor(t) is not '2-3x slower': at {TIMING_ELEMENTS:,} elements it costs "
       f"< {TIMING_RATIO_BOUND}x t.detach().clone()",
       devices=("cpu",), tags={"myth", "timing"})
def _tcl101_speed(device: str) -> None:
    import torch

    t = timing_input()
    assert_not_slower(lambda: torch.tensor(t), lambda: t.detach().clone(),  # noqa: TCL101
                      "torch.tensor(t) / t.detach().clone()")


@claim("TCL101-overhead", "TCL101",
       f"torch.tensor(t)'s extra cost is a fixed per-call overhead: < {OVERHEAD_BOUND_US:g} us over "
       "t.detach().clone() on a 10-element tensor",
       devices=("cpu",), tags={"timing"})
def _tcl101_overhead(device: str) -> None:
    import torch

    t = torch.randn(10)
    with silenced_warnings():
        slow, fast = best_times(lambda: torch.tensor(t), lambda: t.detach().clone(), number=200)  # noqa: TCL101
    overhead_us = (slow - fast) * 1e6
    assert overhead_us < OVERHEAD_BOUND_US, f"torch.tensor(t) adds {overhead_us:.2f} us per call"
