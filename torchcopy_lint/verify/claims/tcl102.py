"""TCL102 claims: x.new_tensor(y) on a tensor."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import assert_same_tensor, shares_storage, silenced_warnings
from .common import (
    TIMING_ELEMENTS,
    TIMING_RATIO_BOUND,
    assert_fresh_copy,
    assert_no_copy_warning,
    assert_not_slower,
    copy_sources,
    fixed_new_tensor,
    timing_input,
    warning_message,
)
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


@claim("TCL102-warns", "TCL102", "x.new_tensor(y) on a tensor y emits the copy-construct UserWarning",
       tags={"hazard"})
def _tcl102_warns(device: str) -> None:
    import torch

    x, y = torch.zeros(2, device=device), torch.randn(2, device=device)
    message = warning_message(lambda: x.new_tensor(y), "x.new_tensor(y)")  # noqa: TCL102
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
        for y_name, y in list(copy_sources(device).items()) + [("x itself", x)]:
            what = f"{x_name}.new_tensor({y_name})"
            with silenced_warnings():
                original = x.new_tensor(y)
            fixed = fixed_new_tensor(x, y)
            assert_no_copy_warning(lambda: fixed_new_tensor(x, y), f"fix of {what}")
            assert_same_tensor(original, fixed, what)
            assert_fresh_copy(fixed, y, f"fix of {what}")


@claim("TCL102-kwargs-equivalent", "TCL102",
       "x.new_tensor(y, device=D, dtype=T, requires_grad=R) == "
       "y.detach().to(device=D or x.device, dtype=T or x.dtype, copy=True).requires_grad_(R)",
       tags={"fix"})
def _tcl102_kwargs_equivalent(device: str) -> None:
    import torch

    x = torch.zeros(2, dtype=torch.int64, device=device)
    for y_name, y in list(copy_sources(device).items()) + [("x itself", x)]:
        for kwargs in ({"dtype": torch.float64}, {"dtype": y.dtype}, {"device": device},
                       {"device": device, "dtype": torch.float16}, {"dtype": torch.float32, "requires_grad": True}):
            with silenced_warnings():
                original = x.new_tensor(y, **kwargs)
            fixed = fixed_new_tensor(x, y, **kwargs)
            assert_same_tensor(original, fixed, f"x.new_tensor({y_name}, **{kwargs})")
            assert not shares_storage(fixed, y), f"fix of x.new_tensor({y_name}, **{kwargs}) aliases y"
    float_x = torch.zeros(2, device=device)
    y = torch.randn(3, device=device)
    with silenced_warnings():
        original = float_x.new_tensor(y, requires_grad=True)  # noqa: TCL102
    assert_same_tensor(original, fixed_new_tensor(float_x, y, requires_grad=True), "requires_grad=True only")


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
        assert_no_copy_warning(lambda: x.new_tensor(data), f"x.new_tensor({data!r})")
        built = x.new_tensor(data)
        assert (built.dtype, built.device) == (x.dtype, x.device), f"x.new_tensor({data!r}) is {built.dtype}"


@claim("TCL102-speed", "TCL102",
       f"x.new_tensor(y) is not '2-3x slower': at {TIMING_ELEMENTS:,} elements it costs "
       f"< {TIMING_RATIO_BOUND}x y.detach().to(x, copy=True)",
       devices=("cpu",), tags={"myth", "timing"})
def _tcl102_speed(device: str) -> None:
    t = timing_input()
    assert_not_slower(lambda: t.new_tensor(t), lambda: t.detach().to(t, copy=True), "new_tensor / fix")  # noqa: TCL102
