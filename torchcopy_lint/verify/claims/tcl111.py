"""TCL111 claims: a tensor conversion whose result is discarded does nothing."""

from __future__ import annotations

from typing import List

from ..core import Claim
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _state(t):
    """What a conversion could change about ``t``: everything a later line can observe."""
    return (t.dtype, t.device, t.requires_grad, t.grad_fn, t.is_contiguous(), t.stride(), t._version,
            t.detach().cpu().tolist())


@claim("TCL111-conversion-not-in-place", "TCL111",
       "x.to(dtype), x.to(device=.., dtype=..), x.float()/.half()/.double()/.bfloat16()/.int()/.bool() on a long "
       "tensor, x.detach(), x.clone() and x.contiguous() on a non-contiguous tensor return a new tensor and leave x "
       "unchanged (dtype, device, grad, strides, version, values); x.cpu() from another device likewise",
       tags={"hazard"})
def _tcl111_conversion_not_in_place(device: str) -> None:
    import torch

    leaf = torch.ones(6, device=device, requires_grad=True)
    x = (leaf * 3).long().reshape(2, 3).t()  # a non-contiguous long tensor
    before = _state(x)
    results = {
        "to(dtype)": x.to(torch.float32), "to(device, dtype)": x.to(device=device, dtype=torch.float64),
        "float": x.float(), "half": x.half(), "double": x.double(), "bfloat16": x.bfloat16(), "int": x.int(),
        "bool": x.bool(), "contiguous": x.contiguous(), "clone": x.clone(),
    }
    if device != "cpu":
        results["cpu"] = x.cpu()
    for name, result in results.items():
        assert result is not x, f"x.{name}() returned x itself"
        assert _state(x) == before, f"x.{name}() changed x: {_state(x)} != {before}"
    grad = leaf * 2
    detached = grad.detach()
    assert detached is not grad and grad.requires_grad and grad.grad_fn is not None, "x.detach() changed x"


@claim("TCL111-no-op-returns-self", "TCL111",
       "when nothing needs converting, x.to(its device), x.to(its dtype), x.float() on float32 and x.contiguous() "
       "on a contiguous tensor return x itself: a discarded result changes nothing either way",
       tags={"hazard"})
def _tcl111_no_op_returns_self(device: str) -> None:
    import torch

    x = torch.arange(4.0, device=device)
    for name, result in (("to(device)", x.to(device)), ("to(float32)", x.to(torch.float32)),
                         ("float", x.float()), ("contiguous", x.contiguous())):
        assert result is x, f"x.{name}() returned a new tensor"
    if device == "cpu":
        assert x.cpu() is x, "x.cpu() on a CPU tensor returned a new tensor"
    else:
        assert x.cuda() is x, "x.cuda() on a CUDA tensor returned a new tensor"


@claim("TCL111-cuda-not-in-place", "TCL111",
       "x.cuda() and x.to('cuda') on a CPU tensor return a CUDA copy and leave x on the CPU",
       devices=("cuda",), tags={"hazard"})
def _tcl111_cuda_not_in_place(device: str) -> None:
    import torch

    x = torch.arange(4.0)
    moved, to = x.cuda(), x.to(device)
    assert moved.device.type == "cuda" and to.device.type == "cuda", "the results are not on CUDA"
    assert x.device.type == "cpu", f"x moved to {x.device}"


@claim("TCL111-module-in-place", "TCL111",
       "nn.Module.to(dtype)/.float()/.half()/.double() convert the module in place and return the module itself: "
       "`model.to(device)` as a statement is correct and not flagged",
       tags={"near-miss"})
def _tcl111_module_in_place(device: str) -> None:
    import torch

    model = torch.nn.Linear(2, 2).to(device)
    for convert, dtype in ((lambda m: m.to(torch.float64), torch.float64), (lambda m: m.half(), torch.float16),
                           (lambda m: m.float(), torch.float32), (lambda m: m.double(), torch.float64)):
        assert convert(model) is model, "a module conversion returned another object"
        assert model.weight.dtype == dtype, f"the module was not converted in place: {model.weight.dtype}"


@claim("TCL111-in-place-methods", "TCL111",
       "x.requires_grad_() and x.detach_() change x in place and return x: not flagged",
       tags={"near-miss"})
def _tcl111_in_place_methods(device: str) -> None:
    import torch

    x = torch.zeros(3, device=device)
    assert x.requires_grad_() is x and x.requires_grad, "requires_grad_() is not in place"
    y = x * 2
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None, "detach_() is not in place"


@claim("TCL111-fix-assign", "TCL111",
       "`x = x.to(dtype)` rebinds x to the converted tensor: later lines see the new dtype, while another name "
       "bound to the old tensor still sees the old one (the fix changes what later lines see)",
       tags={"fix"})
def _tcl111_fix_assign(device: str) -> None:
    import torch

    x = torch.arange(3, device=device)
    alias = x
    x = x.to(torch.float64)
    assert x.dtype == torch.float64 and alias.dtype == torch.int64, f"{x.dtype} / {alias.dtype}"
    assert x.tolist() == [0.0, 1.0, 2.0], x.tolist()


@claim("TCL111-fix-parameter-caveat", "TCL111",
       "Parameter.to(dtype) returns a plain Tensor and leaves the parameter unchanged; assigning it to the module's "
       "parameter attribute raises TypeError, so a parameter gets no fix",
       tags={"fix-caveat"})
def _tcl111_fix_parameter_caveat(device: str) -> None:
    import torch

    layer = torch.nn.Linear(2, 2).to(device)
    converted = layer.weight.to(torch.float64)
    assert type(converted) is torch.Tensor and layer.weight.dtype == torch.float32, type(converted)
    try:
        layer.weight = converted
    except TypeError:
        return
    raise AssertionError("assigning a plain tensor to a parameter attribute did not raise")


@claim("TCL111-comparison-is-a-tensor", "TCL111",
       "a comparison of a tensor with a number or tensor (<, >, <=, >=, ==, !=; either side) and & of two are bool "
       "tensors that .float()/.long()/.to(int64) leave bool; ints compared, `in`, `is` give Python bools; on a tensor "
       "nn.LSTM returns tensors (output, (h, c)), nn.GRU (output, h), MultiheadAttention (output, weights)", tags={
           "hazard", "near-miss"})
def _tcl111_comparison_is_a_tensor(device: str) -> None:
    import torch

    feats = torch.tensor([-1.0, 0.0, 2.0], device=device)
    masks = [feats > 0, 0 < feats, feats == feats.max(), feats != 1, feats <= 1, feats >= 1,
             (feats >= 1) & (feats < 3)]
    for mask in masks:
        assert isinstance(mask, torch.Tensor) and mask.dtype is torch.bool, type(mask)
        before = _state(mask)
        for convert in (mask.float, mask.long, lambda: mask.to(torch.int64)):
            assert convert() is not mask and _state(mask) == before, "a conversion changed the mask"
    n = 3
    assert type(n > 0) is bool and not hasattr(n > 0, "float")
    assert type(feats in [feats]) is bool and type(feats is feats) is bool
    x = torch.zeros(5, 2, 8, device=device)
    out, (h, c) = torch.nn.LSTM(8, 4).to(device)(x)
    seq, last = torch.nn.GRU(8, 4).to(device)(x)
    attended, weights = torch.nn.MultiheadAttention(8, 2).to(device)(x, x, x)
    for value in (out, h, c, seq, last, attended, weights):
        assert isinstance(value, torch.Tensor), type(value)


@claim("TCL111-loop-variable-rebind", "TCL111",
       "`for b in m.buffers(): b = b.to(dtype)` (or `b.to(dtype)`) leaves the module's buffers as they were: "
       "rebinding the loop variable changes nothing outside the loop, so a loop variable nothing reads again "
       "gets no `x = x.to(...)` fix",
       tags={"fix-caveat"})
def _tcl111_loop_variable_rebind(device: str) -> None:
    import torch

    module = torch.nn.BatchNorm1d(2).to(device)
    for buffer in module.buffers():
        if buffer.is_floating_point():
            buffer.to(torch.float64)
    for buffer in module.buffers():
        if buffer.is_floating_point():
            buffer = buffer.to(torch.float64)
    dtypes = {name: b.dtype for name, b in module.named_buffers()}
    assert dtypes["running_mean"] == torch.float32 and dtypes["running_var"] == torch.float32, dtypes


@claim("TCL111-subclass-may-convert-in-place", "TCL111",
       "a Tensor subclass may define its own `to` (or dispatch it itself) and change its receiver: a subclass "
       "whose `to` sets `self.data` leaves the receiver converted, so instances of a project's own Tensor "
       "subclass are not reported",
       tags={"near-miss"})
def _tcl111_subclass_may_convert_in_place(device: str) -> None:
    import torch

    class Moving(torch.Tensor):
        def to(self, *args, **kwargs):
            self.data = torch.Tensor.to(self.data, *args, **kwargs)
            return self

    t = torch.arange(3.0, device=device).as_subclass(Moving)
    t.to(torch.float64)  # discarded, and yet
    assert type(t) is Moving and t.dtype == torch.float64, (type(t), t.dtype)
