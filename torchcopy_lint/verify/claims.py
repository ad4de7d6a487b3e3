"""Every claim the rules, their fixes and their docs make about torch, as runnable checks.

Each ``check(device)`` builds its tensors on ``device`` and raises ``AssertionError`` with a
precise message when torch does not behave as stated. torch is imported inside the checks so
that importing this module (to list claims, or from the CLI) never pays for it.

Tags say what a claim backs: ``hazard`` (why the rule exists), ``fix`` (why the autofix is
equivalent), ``fix-caveat`` (where the fix differs), ``near-miss`` (why similar code is not
flagged), ``myth`` (a widely repeated statement that is false; see docs/myths.md) and ``timing``.
"""

from __future__ import annotations

import copy
from typing import Callable, Dict, Iterable, List, Tuple

from .core import ALL_DEVICES, Claim
from .support import (
    INPLACE_ERROR,
    assert_same_tensor,
    best_times,
    copy_construct_warnings,
    recorded_warnings,
    shares_storage,
    silenced_warnings,
    timing_ratio,
)

CLAIMS: List[Claim] = []

#: Elements in the tensors the timing claims copy (4 MB of float32: copy cost, not call overhead).
TIMING_ELEMENTS = 1_000_000
#: A "2-3x slower" claim would need a ratio of 2 or more; anything under this bound refutes it.
TIMING_RATIO_BOUND = 1.5
#: Bound on the fixed per-call overhead of torch.tensor(t) over t.detach().clone() (measured: ~0.7 us).
OVERHEAD_BOUND_US = 5.0


def claim(
    claim_id: str,
    rule: str,
    statement: str,
    *,
    devices: Tuple[str, ...] = ALL_DEVICES,
    tags: Iterable[str] = (),
) -> Callable[[Callable[[str], None]], Callable[[str], None]]:
    """Register the decorated ``check(device)`` in :data:`CLAIMS`."""

    def register(check: Callable[[str], None]) -> Callable[[str], None]:
        CLAIMS.append(Claim(claim_id, rule, statement, check, tuple(devices), frozenset(tags)))
        return check

    return register


# ---------------------------------------------------------------------------------------------
# Shared inputs and the rewrites the rules propose
# ---------------------------------------------------------------------------------------------


def _copy_sources(device: str) -> Dict[str, object]:
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


def _fixed_torch_tensor(src, device=None, dtype=None, requires_grad=None):
    """TCL101's rewrite of ``torch.tensor(src, **kwargs)``."""
    conversions = _conversions(device, dtype)
    fixed = src.detach().to(**conversions, copy=True) if conversions else src.detach().clone()
    return _with_requires_grad(fixed, requires_grad)


def _fixed_new_tensor(x, y, device=None, dtype=None, requires_grad=None):
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


def _assert_fresh_copy(copied, src, what: str) -> None:
    """A copy must be a detached leaf in its own storage."""
    assert not shares_storage(copied, src), f"{what}: result shares storage with its source"
    assert copied.is_leaf and copied.grad_fn is None, f"{what}: result is not a detached leaf"


def _assert_no_copy_warning(make: Callable[[], object], what: str) -> None:
    with recorded_warnings() as records:
        make()
    found = copy_construct_warnings(records)
    assert not found, f"{what} emitted {str(found[0].message)!r}"


def _warning_message(make: Callable[[], object], what: str) -> str:
    with recorded_warnings() as records:
        make()
    found = copy_construct_warnings(records)
    assert len(found) == 1, f"{what} emitted {len(found)} copy-construct warnings, expected 1: {records}"
    return str(found[0].message)


def _timing_input(requires_grad: bool = False):
    import torch

    torch.manual_seed(0)
    return torch.randn(TIMING_ELEMENTS, requires_grad=requires_grad)


def _assert_not_slower(candidate: Callable[[], object], baseline: Callable[[], object], what: str) -> None:
    with silenced_warnings():  # the copy-construct warning is not what is being timed
        ratio = timing_ratio(candidate, baseline)
    assert ratio < TIMING_RATIO_BOUND, f"{what}: time ratio {ratio:.2f} >= {TIMING_RATIO_BOUND}"


# ---------------------------------------------------------------------------------------------
# TCL101: torch.tensor(t) on a tensor
# ---------------------------------------------------------------------------------------------


@claim("TCL101-warns", "TCL101", "torch.tensor(t) on a tensor emits the copy-construct UserWarning on every call",
       tags={"hazard"})
def _tcl101_warns(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    for attempt in range(2):
        message = _warning_message(lambda: torch.tensor(t), f"torch.tensor(t), call {attempt + 1}")  # noqa: TCL101
        assert message.endswith("rather than torch.tensor(sourceTensor)."), message


@claim("TCL101-warning-text", "TCL101",
       "the warning recommends sourceTensor.detach().clone() and no longer mentions clone().detach()",
       tags={"myth"})
def _tcl101_warning_text(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    message = _warning_message(lambda: torch.tensor(t), "torch.tensor(t)")  # noqa: TCL101
    assert "sourceTensor.detach().clone()" in message, message
    assert "clone().detach()" not in message, message


@claim("TCL101-fix-silent", "TCL101", "every form of the TCL101 fix emits no copy-construct warning", tags={"fix"})
def _tcl101_fix_silent(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    for kwargs in ({}, {"dtype": torch.float64}, {"device": device}, {"requires_grad": True}):
        _assert_no_copy_warning(lambda: _fixed_torch_tensor(t, **kwargs), f"TCL101 fix with {kwargs}")


@claim("TCL101-fix-equivalent", "TCL101",
       "torch.tensor(t) == t.detach().clone(): values, dtype, device, strides, requires_grad=False, leaf, new storage",
       tags={"fix"})
def _tcl101_fix_equivalent(device: str) -> None:
    import torch

    for name, src in _copy_sources(device).items():
        with silenced_warnings():
            original = torch.tensor(src)
        fixed = _fixed_torch_tensor(src)
        assert_same_tensor(original, fixed, f"{name} source")
        assert not original.requires_grad, f"{name} source: torch.tensor(t) requires grad"
        _assert_fresh_copy(original, src, f"torch.tensor(t), {name} source")
        _assert_fresh_copy(fixed, src, f"t.detach().clone(), {name} source")


@claim("TCL101-kwargs-equivalent", "TCL101",
       "torch.tensor(t, device=D, dtype=T, requires_grad=R) == t.detach().to(device=D, dtype=T, copy=True)"
       ".requires_grad_(R)",
       tags={"fix"})
def _tcl101_kwargs_equivalent(device: str) -> None:
    import torch

    for name, src in _copy_sources(device).items():
        variants = [{"dtype": torch.float64}, {"dtype": src.dtype}, {"device": device},
                    {"device": device, "dtype": torch.float16}]
        if src.is_floating_point():  # integer tensors cannot require grad, in either form
            variants += [{"requires_grad": True}, {"requires_grad": False},
                         {"dtype": torch.float64, "requires_grad": True}]
        for kwargs in variants:
            with silenced_warnings():
                original = torch.tensor(src, **kwargs)
            fixed = _fixed_torch_tensor(src, **kwargs)
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
            assert_same_tensor(original, _fixed_torch_tensor(src, device=target), f"{src_device} -> {target}")


@claim("TCL101-default-device", "TCL101",
       "only difference: under a default device (torch.set_default_device / with torch.device), "
       "torch.tensor(t) moves the copy there, t.detach().clone() does not",
       tags={"fix-caveat"})
def _tcl101_default_device(device: str) -> None:
    import torch

    t = torch.randn(3, device=device)
    with torch.device("meta"), silenced_warnings():
        original, fixed = torch.tensor(t), _fixed_torch_tensor(t)  # noqa: TCL101
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

    for name, src in _copy_sources(device).items():
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
       "torch.tensor of a numpy array, a torch.Size or a list of 0-d tensors emits no copy-construct warning",
       tags={"near-miss"})
def _tcl101_near_miss_no_warning(device: str) -> None:
    import torch

    sources = {
        "torch.Size": torch.Size([2, 3]),
        "list of 0-d tensors": [torch.tensor(1.0, device=device), torch.tensor(2.0, device=device)],
        "list of floats": [1.0, 2.0],
    }
    try:
        import numpy

        sources["numpy array"] = numpy.arange(3.0)
    except ImportError:  # numpy is optional for torch; the other sources still prove the point
        pass
    for name, data in sources.items():
        _assert_no_copy_warning(lambda: torch.tensor(data, device=device), f"torch.tensor({name})")


@claim("TCL101-list-of-tensors", "TCL101",
       "torch.tensor([t1, t2]) raises ValueError for multi-element tensors and drops the graph of 0-d ones "
       "(torch's 'requires_grad=True to a scalar' hint is shown once per process at most)",
       tags={"near-miss"})
def _tcl101_list_of_tensors(device: str) -> None:
    import torch

    a = torch.tensor(1.0, device=device, requires_grad=True)
    with recorded_warnings() as records:
        stacked = torch.tensor([a * 2, a * 3], device=device)
        torch.tensor([a * 2, a * 3], device=device)
    assert not stacked.requires_grad and stacked.grad_fn is None, "graph was kept"
    assert not copy_construct_warnings(records), "copy-construct warning emitted for a list"
    hints = [r for r in records if "requires_grad=True to a scalar" in str(r.message)]
    assert len(hints) <= 1, f"the hint was shown {len(hints)} times in two calls"
    assert torch.stack([a * 2, a * 3]).grad_fn is not None, "torch.stack lost the graph"
    try:
        torch.tensor([torch.ones(2, device=device), torch.ones(2, device=device)])
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

    t = _timing_input()
    _assert_not_slower(lambda: torch.tensor(t), lambda: t.detach().clone(), "torch.tensor(t) / t.detach().clone()")


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


# ---------------------------------------------------------------------------------------------
# TCL102: x.new_tensor(y) on a tensor
# ---------------------------------------------------------------------------------------------


@claim("TCL102-warns", "TCL102", "x.new_tensor(y) on a tensor y emits the copy-construct UserWarning",
       tags={"hazard"})
def _tcl102_warns(device: str) -> None:
    import torch

    x, y = torch.zeros(2, device=device), torch.randn(2, device=device)
    message = _warning_message(lambda: x.new_tensor(y), "x.new_tensor(y)")  # noqa: TCL102
    assert message.endswith("rather than tensor.new_tensor(sourceTensor)."), message


@claim("TCL102-casts-to-x", "TCL102",
       "x.new_tensor(y) casts to x's dtype and device: int64 x, y=[1.9, -1.9] gives [1, -1]",
       tags={"hazard"})
def _tcl102_casts_to_x(device: str) -> None:
    import torch

    x = torch.zeros(2, dtype=torch.int64, device=device)
    y = torch.tensor([1.9, -1.9], device=device)
    with silenced_warnings():
        result = x.new_tensor(y)  # noqa: TCL102
    assert result.dtype == torch.int64 and result.device == x.device, f"got {result.dtype} on {result.device}"
    assert result.tolist() == [1, -1], f"got {result.tolist()}"


@claim("TCL102-not-clone-detach", "TCL102",
       "x.new_tensor(y) is not y.clone().detach() in general: the copy takes x's dtype, not y's",
       tags={"myth"})
def _tcl102_not_clone_detach(device: str) -> None:
    import torch

    x = torch.zeros(2, dtype=torch.int64, device=device)
    y = torch.tensor([1.9, -1.9], device=device)
    with silenced_warnings():
        via_new_tensor = x.new_tensor(y)  # noqa: TCL102
    via_clone = y.clone().detach()  # noqa: TCL103
    assert via_new_tensor.dtype != via_clone.dtype, "dtypes agree"
    assert not torch.equal(via_new_tensor.to(via_clone.dtype), via_clone), "values agree"


@claim("TCL102-fix-equivalent", "TCL102",
       "x.new_tensor(y) == y.detach().to(x, copy=True) and x.new_tensor(x) == x.detach().clone(), "
       "strides and leaf status included",
       tags={"fix"})
def _tcl102_fix_equivalent(device: str) -> None:
    import torch

    templates = {
        "float32 x": torch.zeros(2, device=device),
        "float64 x": torch.zeros(2, dtype=torch.float64, device=device),
        "int64 x": torch.zeros(2, dtype=torch.int64, device=device),
        "x requiring grad": torch.zeros(2, device=device, requires_grad=True),
    }
    for x_name, x in templates.items():
        for y_name, y in list(_copy_sources(device).items()) + [("x itself", x)]:
            what = f"{x_name}.new_tensor({y_name})"
            with silenced_warnings():
                original = x.new_tensor(y)
            fixed = _fixed_new_tensor(x, y)
            _assert_no_copy_warning(lambda: _fixed_new_tensor(x, y), f"fix of {what}")
            assert_same_tensor(original, fixed, what)
            _assert_fresh_copy(fixed, y, f"fix of {what}")


@claim("TCL102-kwargs-equivalent", "TCL102",
       "x.new_tensor(y, device=D, dtype=T, requires_grad=R) == "
       "y.detach().to(device=D or x.device, dtype=T or x.dtype, copy=True).requires_grad_(R)",
       tags={"fix"})
def _tcl102_kwargs_equivalent(device: str) -> None:
    import torch

    x = torch.zeros(2, dtype=torch.int64, device=device)
    for y_name, y in list(_copy_sources(device).items()) + [("x itself", x)]:
        for kwargs in ({"dtype": torch.float64}, {"dtype": y.dtype}, {"device": device},
                       {"device": device, "dtype": torch.float16}, {"dtype": torch.float32, "requires_grad": True}):
            with silenced_warnings():
                original = x.new_tensor(y, **kwargs)
            fixed = _fixed_new_tensor(x, y, **kwargs)
            assert_same_tensor(original, fixed, f"x.new_tensor({y_name}, **{kwargs})")
            assert not shares_storage(fixed, y), f"fix of x.new_tensor({y_name}, **{kwargs}) aliases y"
    float_x = torch.zeros(2, device=device)
    y = torch.randn(3, device=device)
    with silenced_warnings():
        original = float_x.new_tensor(y, requires_grad=True)  # noqa: TCL102
    assert_same_tensor(original, _fixed_new_tensor(float_x, y, requires_grad=True), "requires_grad=True only")


@claim("TCL102-to-needs-copy", "TCL102",
       "without copy=True, y.detach().to(x) returns an alias of y when dtype and device already match",
       tags={"fix"})
def _tcl102_to_needs_copy(device: str) -> None:
    import torch

    x, y = torch.zeros(2, device=device), torch.randn(3, device=device)
    assert shares_storage(y.detach().to(x), y), "y.detach().to(x) made a copy"
    assert not shares_storage(y.detach().to(x, copy=True), y), "y.detach().to(x, copy=True) aliased y"


@claim("TCL102-no-torch-new-tensor", "TCL102",
       "there is no torch.new_tensor function; new_tensor exists only as a Tensor method",
       tags={"myth"})
def _tcl102_no_torch_new_tensor(device: str) -> None:
    import torch

    assert not hasattr(torch, "new_tensor"), "torch.new_tensor exists"
    assert callable(getattr(torch.Tensor, "new_tensor", None)), "Tensor.new_tensor is missing"


@claim("TCL102-lists-no-warning", "TCL102",
       "x.new_tensor(list or scalar) emits no warning and builds a tensor of x's dtype and device",
       tags={"near-miss"})
def _tcl102_lists_no_warning(device: str) -> None:
    import torch

    x = torch.zeros(2, dtype=torch.float64, device=device)
    for data in ([1, 2], 3.0):
        _assert_no_copy_warning(lambda: x.new_tensor(data), f"x.new_tensor({data!r})")
        built = x.new_tensor(data)
        assert (built.dtype, built.device) == (x.dtype, x.device), f"x.new_tensor({data!r}) is {built.dtype}"


@claim("TCL102-speed", "TCL102",
       f"x.new_tensor(y) is not '2-3x slower': at {TIMING_ELEMENTS:,} elements it costs "
       f"< {TIMING_RATIO_BOUND}x y.detach().to(x, copy=True)",
       devices=("cpu",), tags={"myth", "timing"})
def _tcl102_speed(device: str) -> None:
    t = _timing_input()
    _assert_not_slower(lambda: t.new_tensor(t), lambda: t.detach().to(t, copy=True), "new_tensor / fix")


# ---------------------------------------------------------------------------------------------
# TCL103: clone().detach() instead of detach().clone()
# ---------------------------------------------------------------------------------------------


def _clone_variants(src) -> List[Dict[str, object]]:
    import torch

    variants = [{}, {"memory_format": torch.contiguous_format}, {"memory_format": torch.preserve_format}]
    if src.dim() == 4:
        variants.append({"memory_format": torch.channels_last})
    return variants


@claim("TCL103-same-result", "TCL103",
       "t.clone(fmt).detach() == t.detach().clone(fmt) (method and torch.clone forms): values, dtype, strides, "
       "requires_grad, leaf, grad_fn",
       tags={"fix"})
def _tcl103_same_result(device: str) -> None:
    import torch

    for name, src in _copy_sources(device).items():
        for kwargs in _clone_variants(src):
            method_original, method_fixed = src.clone(**kwargs).detach(), src.detach().clone(**kwargs)  # noqa: TCL103
            assert_same_tensor(method_original, method_fixed, f"{name}.clone(**{kwargs})")
            _assert_fresh_copy(method_fixed, src, f"{name}.detach().clone(**{kwargs})")
            function_original = torch.clone(src, **kwargs).detach()  # noqa: TCL103
            function_fixed = torch.clone(src.detach(), **kwargs)
            assert_same_tensor(function_original, function_fixed, f"torch.clone({name}, **{kwargs})")
            assert_same_tensor(method_original, function_original, f"method vs torch.clone, {name}, {kwargs}")


@claim("TCL103-same-aten-ops", "TCL103",
       "both orders dispatch exactly one aten.clone and one aten.detach: neither copies anything more",
       tags={"myth"})
def _tcl103_same_aten_ops(device: str) -> None:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpLog(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: List[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    src = torch.randn(3, 4, device=device, requires_grad=True) * 2
    logs = {}
    for order, make in (("clone().detach()", lambda: src.clone().detach()),  # noqa: TCL103
                        ("detach().clone()", lambda: src.detach().clone())):
        with OpLog() as log:
            make()
        logs[order] = sorted(log.ops)
    expected = ["aten.clone.default", "aten.detach.default"]
    assert all(ops == expected for ops in logs.values()), f"dispatched ops differ: {logs}"


@claim("TCL103-one-transient-node", "TCL103",
       "clone() first adds one CloneBackward0 node pointing at the existing graph (nothing is copied), "
       "and only when the input requires grad",
       tags={"hazard", "myth"})
def _tcl103_one_transient_node(device: str) -> None:
    import torch

    hidden = torch.randn(3, device=device, requires_grad=True) * 2
    temporary = hidden.clone()
    node = temporary.grad_fn
    assert type(node).__name__ == "CloneBackward0", f"clone() recorded {node}"
    assert node.next_functions == ((hidden.grad_fn, 0),), f"clone() node links to {node.next_functions}"
    assert temporary.detach().grad_fn is None, "detach() kept a grad_fn"
    plain = torch.randn(3, device=device)
    assert plain.clone().grad_fn is None, "clone() of a tensor without grad recorded a node"


@claim("TCL103-speed", "TCL103",
       f"clone().detach() is not measurably slower: at {TIMING_ELEMENTS:,} elements requiring grad it costs "
       f"< {TIMING_RATIO_BOUND}x detach().clone()",
       devices=("cpu",), tags={"myth", "timing"})
def _tcl103_speed(device: str) -> None:
    t = _timing_input(requires_grad=True)
    _assert_not_slower(lambda: t.clone().detach(), lambda: t.detach().clone(),  # noqa: TCL103
                       "clone().detach() / detach().clone()")


# ---------------------------------------------------------------------------------------------
# TCL104: mutation through .data
# ---------------------------------------------------------------------------------------------


def _data_add(p) -> None:
    p.data.add_(1)  # noqa: TCL104


def _data_copy(p) -> None:
    p.data.copy_(p.detach() + 1)  # noqa: TCL104


def _data_setitem(p) -> None:
    p.data[0] = 10


def _data_iadd(p) -> None:
    p.data += 1


def _detach_add(p) -> None:
    p.detach().add_(1)


def _detach_copy(p) -> None:
    p.detach().copy_(p.detach() + 1)


def _detach_setitem(p) -> None:
    p.detach()[0] = 10


def _no_grad_add(p) -> None:
    import torch

    with torch.no_grad():
        p.add_(1)


def _init_without_data(p) -> None:
    import torch

    torch.nn.init.constant_(p, 10.0)


def _backward_after_write(device: str, write: Callable[[object], None]):
    """Gradient of sum(p * p) at p = [1, 2, 3] when ``write`` runs between forward and backward."""
    import torch

    p = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    loss = (p * p).sum()  # saves p for backward
    write(p)
    loss.backward()
    return p.grad.tolist()


_SILENT_WRITES = (
    ("add", "p.data.add_(1)", _data_add, [4.0, 6.0, 8.0]),
    ("copy", "p.data.copy_(p + 1)", _data_copy, [4.0, 6.0, 8.0]),
    ("setitem", "p.data[0] = 10", _data_setitem, [20.0, 4.0, 6.0]),
    ("iadd", "p.data += 1", _data_iadd, [4.0, 6.0, 8.0]),
)


def _silent_write_check(write: Callable[[object], None], wrong_grad: List[float]) -> Callable[[str], None]:
    def check(device: str) -> None:
        grad = _backward_after_write(device, write)
        assert grad == wrong_grad, f"grad is {grad}, expected the silently wrong {wrong_grad} (correct: [2, 4, 6])"

    return check


for _suffix, _code, _write, _wrong_grad in _SILENT_WRITES:
    claim(f"TCL104-data-{_suffix}-corrupts-grad", "TCL104",
          f"with a live graph, {_code} goes unnoticed: backward of sum(p*p) at p=[1,2,3] gives {_wrong_grad}, "
          "not [2, 4, 6]",
          tags={"hazard"})(_silent_write_check(_write, _wrong_grad))


@claim("TCL104-tracked-writes-raise", "TCL104",
       "the same writes through p.detach(), under torch.no_grad() or via nn.init (no .data) make backward raise "
       "'modified by an inplace operation'",
       tags={"hazard", "fix-caveat", "myth"})
def _tcl104_tracked_writes_raise(device: str) -> None:
    for write in (_detach_add, _detach_copy, _detach_setitem, _no_grad_add, _init_without_data):
        try:
            grad = _backward_after_write(device, write)
        except RuntimeError as exc:
            assert INPLACE_ERROR in str(exc), f"{write.__name__}: unexpected error {exc}"
        else:
            raise AssertionError(f"{write.__name__}: backward did not raise; grad {grad}")


@claim("TCL104-no-graph-identical", "TCL104",
       "with no live graph, writes through .data, .detach() and torch.no_grad() give bit-identical parameters",
       tags={"fix"})
def _tcl104_no_graph_identical(device: str) -> None:
    import torch

    torch.manual_seed(0)
    initial = torch.randn(4, 3, device=device)
    grad = torch.randn(4, 3, device=device)
    other = torch.randn(4, 3, device=device)

    def update(view: Callable[[object], object], p) -> None:
        view(p).add_(grad, alpha=-0.1)
        view(p).mul_(0.9)
        view(p)[0] = 1.0
        view(p).clamp_(-1.0, 1.0)
        view(p)[1].copy_(other[1])

    def fresh():
        p = initial.clone().requires_grad_(True)
        (p * p).sum().backward()  # a graph that has come and gone, as after an optimizer step
        return p

    via_data, via_detach, via_no_grad = fresh(), fresh(), fresh()
    update(lambda p: p.data, via_data)
    update(lambda p: p.detach(), via_detach)
    with torch.no_grad():
        update(lambda p: p, via_no_grad)
    for name, p in (("detach()", via_detach), ("no_grad", via_no_grad)):
        assert_same_tensor(via_data, p, f".data vs {name}")


@claim("TCL104-init-without-data", "TCL104",
       "nn.init.*_(w) works on a leaf requiring grad and matches nn.init.*_(w.data) bit for bit, "
       "so the fix may drop .data",
       tags={"fix"})
def _tcl104_init_without_data(device: str) -> None:
    import torch
    from torch.nn import init

    initializers = {
        "normal_": init.normal_,
        "uniform_": init.uniform_,
        "zeros_": init.zeros_,
        "constant_": lambda w: init.constant_(w, 0.5),
        "kaiming_uniform_": init.kaiming_uniform_,
        "xavier_normal_": init.xavier_normal_,
    }
    for name, initialize in initializers.items():
        results = []
        for target in (lambda w: w.data, lambda w: w):
            weight = torch.empty(4, 3, device=device, requires_grad=True)
            torch.manual_seed(0)
            initialize(target(weight))
            results.append(weight)
        via_data, direct = results
        assert direct.is_leaf and direct.requires_grad, f"init.{name}(w) changed w's autograd state"
        assert_same_tensor(via_data, direct, f"init.{name}(w.data) vs init.{name}(w)")


@claim("TCL104-data-assign-rebinds", "TCL104",
       "p.data = other makes p share other's storage and silently adopt its dtype and shape (no safe rewrite)",
       tags={"hazard"})
def _tcl104_data_assign_rebinds(device: str) -> None:
    import torch

    p = torch.zeros(3, device=device, requires_grad=True)
    other = torch.ones(2, dtype=torch.float64, device=device)
    p.data = other  # noqa: TCL104
    assert shares_storage(p, other), "p does not share other's storage"
    assert (p.dtype, tuple(p.shape)) == (torch.float64, (2,)), f"p is now {p.dtype} {tuple(p.shape)}"
    assert p.requires_grad and p.is_leaf, "p lost its autograd state"
    other.add_(1)
    assert p.tolist() == [2.0, 2.0], "a write to other is not visible through p"


@claim("TCL104-detached-metadata-ops", "TCL104",
       "resize_/t_/set_ on p.detach() succeed (no error) and leave p's shape alone, exactly as through p.data",
       tags={"myth", "fix"})
def _tcl104_detached_metadata_ops(device: str) -> None:
    import torch

    operations = {
        "resize_": lambda d: d.resize_(2),
        "t_": lambda d: d.t_(),
        "set_": lambda d: d.set_(torch.zeros(5, device=device)),
    }
    for name, operate in operations.items():
        for view_name, view in ((".detach()", lambda p: p.detach()), (".data", lambda p: p.data)):
            p = torch.arange(6.0, device=device).reshape(2, 3).requires_grad_()
            operate(view(p))  # raises if the old "will trigger an error" note were true
            assert tuple(p.shape) == (2, 3), f"p{view_name}.{name} changed p's shape to {tuple(p.shape)}"


@claim("TCL104-data-read-alias", "TCL104",
       "on CPU, p.data.cpu() is p's own storage: writing into what was 'read' silently corrupts the gradient",
       devices=("cpu",), tags={"hazard"})
def _tcl104_data_read_alias(device: str) -> None:
    grad = _backward_after_write(device, lambda p: p.data.cpu().add_(1))
    assert grad == [4.0, 6.0, 8.0], f"grad is {grad}"


# ---------------------------------------------------------------------------------------------
# TCL105: copy.deepcopy of a live module
# ---------------------------------------------------------------------------------------------


def _trained_linear(device: str):
    """A small model after one optimizer step, with .grad populated."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(4, 3, device=device)).sum().backward()
    optimizer.step()
    return model, optimizer


def _assert_deepcopy_raises_nonleaf(obj, what: str) -> None:
    try:
        copy.deepcopy(obj)
    except RuntimeError as exc:
        assert "Only Tensors created explicitly by the user" in str(exc), f"{what}: unexpected error {exc}"
    else:
        raise AssertionError(f"deepcopy of {what} did not raise")


@claim("TCL105-nonleaf-attribute-raises", "TCL105",
       "deepcopy of a module holding a non-leaf tensor set in forward raises RuntimeError "
       "('Only Tensors created explicitly by the user')",
       tags={"hazard"})
def _tcl105_nonleaf_attribute_raises(device: str) -> None:
    import torch

    class KeepsLastOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(3, 2, device=device)

        def forward(self, x):
            self.last_out = self.linear(x)
            return self.last_out

    model = KeepsLastOutput()
    copy.deepcopy(model)  # before any forward pass, copying works
    model(torch.randn(4, 3, device=device))
    _assert_deepcopy_raises_nonleaf(model, "a module after forward")


@claim("TCL105-legacy-weight-norm-raises", "TCL105",
       "deepcopy raises for a module using legacy nn.utils.weight_norm; nn.utils.parametrizations.weight_norm copies",
       tags={"hazard"})
def _tcl105_legacy_weight_norm_raises(device: str) -> None:
    import torch

    with silenced_warnings():  # legacy weight_norm is deprecated, which is the point
        legacy = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2, device=device))
    _assert_deepcopy_raises_nonleaf(legacy, "a legacy weight_norm module")
    copy.deepcopy(torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2, device=device)))


@claim("TCL105-hooks-shared", "TCL105",
       "deepcopy(model) does not copy forward-hook closures: the copy's hooks update the original's state",
       tags={"hazard"})
def _tcl105_hooks_shared(device: str) -> None:
    import torch

    model = torch.nn.Linear(3, 2, device=device)
    seen = []
    model.register_forward_hook(lambda module, inputs, output: seen.append(module))
    clone = copy.deepcopy(model)
    clone(torch.randn(1, 3, device=device))
    assert seen == [clone], f"the copy's hook recorded {seen} in the original's closure"


@claim("TCL105-drops-grad", "TCL105",
       "deepcopy(model) copies parameters but not their .grad", tags={"myth"})
def _tcl105_drops_grad(device: str) -> None:
    model, _ = _trained_linear(device)
    assert all(p.grad is not None for p in model.parameters()), "setup: model has no gradients"
    clone = copy.deepcopy(model)
    for (name, original), copied in zip(model.named_parameters(), clone.parameters()):
        assert copied.grad is None, f"{name}.grad was copied"
        assert_same_tensor(original, copied, name)
        assert not shares_storage(original, copied), f"{name} shares storage with the copy"


@claim("TCL105-state-dict-is-live", "TCL105",
       "model.state_dict() aliases the live parameters and changes with every step; "
       "{k: v.detach().clone()} does not",
       tags={"hazard", "fix"})
def _tcl105_state_dict_is_live(device: str) -> None:
    model, optimizer = _trained_linear(device)
    aliased = model.state_dict()
    snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
    before = {k: v.clone() for k, v in snapshot.items()}
    model(aliased["weight"].new_ones(4, 3)).sum().backward()
    optimizer.step()
    for name, value in model.state_dict().items():
        assert aliased[name].equal(value), f"state_dict()[{name!r}] did not follow the step"
        assert snapshot[name].equal(before[name]), f"snapshot[{name!r}] changed"
        assert not snapshot[name].equal(value), f"setup: step did not change {name}"


@claim("TCL105-deepcopy-state-dict", "TCL105",
       "copy.deepcopy(model.state_dict()) is an independent snapshot and keeps _metadata",
       tags={"near-miss"})
def _tcl105_deepcopy_state_dict(device: str) -> None:
    model, optimizer = _trained_linear(device)
    snapshot = copy.deepcopy(model.state_dict())
    before = {k: v.clone() for k, v in snapshot.items()}
    assert hasattr(snapshot, "_metadata"), "_metadata was lost"
    model(snapshot["weight"].new_ones(4, 3)).sum().backward()
    optimizer.step()
    for name, value in snapshot.items():
        assert value.equal(before[name]), f"snapshot[{name!r}] changed with the model"


@claim("TCL105-construction-deepcopy", "TCL105",
       "deepcopy of a freshly built module (e.g. an EMA/target network) works and is independent of later training",
       tags={"near-miss"})
def _tcl105_construction_deepcopy(device: str) -> None:
    import torch

    model = torch.nn.Linear(3, 2, device=device)
    target = copy.deepcopy(model)
    before = [p.detach().clone() for p in target.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(4, 3, device=device)).sum().backward()
    optimizer.step()
    for p, initial in zip(target.parameters(), before):
        assert p.equal(initial), "the copy followed the original's training"
        assert p.requires_grad and p.is_leaf, "the copy's parameters lost their autograd state"


@claim("TCL105-deepcopy-optimizer-orphans", "TCL105",
       "deepcopy(optimizer) holds its own parameter copies: stepping it leaves the model unchanged",
       tags={"hazard"})
def _tcl105_deepcopy_optimizer_orphans(device: str) -> None:
    import torch

    model, optimizer = _trained_linear(device)
    before = [p.detach().clone() for p in model.parameters()]
    orphan = copy.deepcopy(optimizer)
    orphan.step()
    assert all(p.equal(b) for p, b in zip(model.parameters(), before)), "the copied optimizer updated the model"
    assert all(torch.is_tensor(p) for p in orphan.param_groups[0]["params"]), "setup: no params"


@claim("TCL105-tensor-history", "TCL105",
       "deepcopy does not copy a tensor's history: it raises on a non-leaf and returns a history-free leaf otherwise",
       tags={"myth"})
def _tcl105_tensor_history(device: str) -> None:
    import torch

    leaf = torch.randn(3, device=device, requires_grad=True)
    _assert_deepcopy_raises_nonleaf(leaf * 2, "a non-leaf tensor")
    copied = copy.deepcopy(leaf)
    assert copied.is_leaf and copied.requires_grad and copied.grad_fn is None, "deepcopy of a leaf is not a leaf"
    assert not shares_storage(copied, leaf), "deepcopy of a leaf shares storage"


@claim("TCL105-no-module-clone", "TCL105",
       "nn.Module has no .clone(); copying a model means deepcopy or a state_dict snapshot", tags={"myth"})
def _tcl105_no_module_clone(device: str) -> None:
    import torch

    model = torch.nn.Linear(3, 2, device=device)
    assert not hasattr(model, "clone"), "nn.Module has a clone attribute"


# ---------------------------------------------------------------------------------------------
# Widely repeated claims not tied to a single rule
# ---------------------------------------------------------------------------------------------


@claim("general-clone-owns-memory", "general",
       "t.clone() is not a shallow copy: it has its own storage and writes do not cross over",
       tags={"myth"})
def _general_clone_owns_memory(device: str) -> None:
    import torch

    original = torch.arange(5, device=device)
    cloned = original.clone()
    assert not shares_storage(original, cloned), "clone() shares storage"
    cloned[0] = 10
    original[1] = 20
    assert original.tolist() == [0, 20, 2, 3, 4] and cloned.tolist() == [10, 1, 2, 3, 4], "writes crossed over"


@claim("general-tensors-mutable", "general",
       "tensors are mutable: in-place ops change them where they are, visible through every alias",
       tags={"myth"})
def _general_tensors_mutable(device: str) -> None:
    import torch

    t = torch.zeros(3, device=device)
    alias = t
    view = t[1:]
    storage, version = t.untyped_storage().data_ptr(), t._version
    t.add_(1)
    assert t.untyped_storage().data_ptr() == storage, "add_ moved the tensor"
    assert t._version == version + 1, "the version counter did not move"
    assert alias.tolist() == [1.0, 1.0, 1.0] and view.tolist() == [1.0, 1.0], "an alias did not see the change"


@claim("general-empty-like-copy-tracks-grad", "general",
       "torch.empty_like(t).copy_(t) is not detached: it requires grad and records CopyBackwards",
       tags={"myth"})
def _general_empty_like_copy_tracks_grad(device: str) -> None:
    import torch

    t = torch.randn(3, device=device, requires_grad=True)
    copied = torch.empty_like(t).copy_(t)
    assert copied.requires_grad, "the copy does not require grad"
    assert type(copied.grad_fn).__name__ == "CopyBackwards", f"grad_fn is {copied.grad_fn}"


@claim("general-empty-like-copy-not-faster", "general",
       f"torch.empty_like(t).copy_(t) is no fast path: at {TIMING_ELEMENTS:,} elements t.detach().clone() costs "
       f"< {TIMING_RATIO_BOUND}x it",
       devices=("cpu",), tags={"myth", "timing"})
def _general_empty_like_copy_not_faster(device: str) -> None:
    import torch

    t = _timing_input()
    _assert_not_slower(lambda: t.detach().clone(), lambda: torch.empty_like(t).copy_(t),
                       "t.detach().clone() / empty_like(t).copy_(t)")


@claim("general-copy-copy-cuts-graph", "general",
       "copy.copy(t) of a non-leaf returns a leaf with no grad_fn sharing t's storage: the graph is silently cut",
       tags={"hazard"})
def _general_copy_copy_cuts_graph(device: str) -> None:
    import torch

    hidden = torch.randn(3, device=device, requires_grad=True) * 2
    shallow = copy.copy(hidden)
    assert shallow.is_leaf and shallow.grad_fn is None, f"copy.copy kept grad_fn {shallow.grad_fn}"
    assert shares_storage(shallow, hidden), "copy.copy copied the data"


@claim("general-deepcopy-view-copies-base", "general",
       "copy.deepcopy(view) copies the view's whole base storage; view.clone() copies only the view",
       tags={"hazard"})
def _general_deepcopy_view_copies_base(device: str) -> None:
    import torch

    base = torch.zeros(10_000, device=device)
    view = base[:2]
    base_bytes = base.untyped_storage().nbytes()
    deep_bytes = copy.deepcopy(view).untyped_storage().nbytes()
    clone_bytes = view.clone().untyped_storage().nbytes()
    assert deep_bytes == base_bytes, f"deepcopy(view) holds {deep_bytes} bytes, base has {base_bytes}"
    assert clone_bytes == view.numel() * view.element_size(), f"view.clone() holds {clone_bytes} bytes"
