"""TCL118 claims: x.to(.., copy=True) is x.clone().to(..) in one copy."""

from __future__ import annotations

from typing import List

from ..core import Claim
from ..support import assert_same_tensor, shares_storage, tensor_differences
from .common import copy_sources
from .registry import registrar
from .tcl117 import conversions

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _fixed(name: str, t, device: str, other):
    """TCL118's rewrite of ``t.clone().<name>``."""
    import torch

    casts = {"float()": torch.float, "double()": torch.double, "half()": torch.half, "bfloat16()": torch.bfloat16,
             "long()": torch.long}
    if name in casts:
        return t.to(casts[name], copy=True)
    return {
        "cpu()": lambda: t.to("cpu", copy=True), "to(float64)": lambda: t.to(torch.float64, copy=True),
        "to(device)": lambda: t.to(device, copy=True),
        "to(device, float16)": lambda: t.to(device, torch.float16, copy=True),
        "to(dtype=, device=)": lambda: t.to(dtype=torch.float64, device=device, copy=True),
        "to(other)": lambda: t.to(other, copy=True),
    }[name]()


@claim("TCL118-same-result", "TCL118",
       "x.clone().M(..) == x.to(.., copy=True) for cpu/float/double/half/bfloat16/long/to(dtype/device/other) on "
       "contiguous, transposed, channels-last, non-dense, expanded, integer, leaf and non-leaf x: values, dtype, "
       "device, strides, requires_grad, leaf, a new storage, equal gradients; the grad_fn is named "
       "ToCopyBackward0 where the clone form's is CloneBackward0 when nothing converts",
       tags={"fix"})
def _tcl118_same_result(device: str) -> None:
    import torch

    other = torch.zeros(1, dtype=torch.float64, device=device)
    sources = dict(copy_sources(device))
    sources["non-dense"] = torch.randn(4, 6, device=device)[:, ::2]
    sources["expanded"] = torch.randn(3, 1, device=device).expand(3, 4)
    for name, src in sources.items():
        for spelling, convert in conversions(device, other).items():
            original, fixed = convert(src.clone()), _fixed(spelling, src, device, other)
            differences = [d for d in tensor_differences(original, fixed)
                           if d != "grad_fn: 'CloneBackward0' != 'ToCopyBackward0'"]
            assert not differences, f"{name}.clone().{spelling}: " + "; ".join(differences)
            assert not shares_storage(fixed, src), f"{name}.to(.., copy=True) aliases its source"
            if original.requires_grad and original.is_floating_point():
                grads = [torch.autograd.grad(out.sum(), src, retain_graph=True)[0] for out in (original, fixed)]
                assert_same_tensor(*grads, f"gradients through {name}.clone().{spelling}")


@claim("TCL118-one-copy", "TCL118",
       "x.clone().double() dispatches aten.clone and aten._to_copy and allocates both results; "
       "x.to(torch.double, copy=True) dispatches one _to_copy",
       tags={"hazard"})
def _tcl118_one_copy(device: str) -> None:
    import torch

    from .copies import dispatched

    src = torch.randn(1024, 1024, device=device)
    twice, once = dispatched(lambda: src.clone().double()), dispatched(lambda: src.to(torch.double, copy=True))
    assert twice == (["aten.clone", "aten._to_copy"], 4 * 2 ** 20 + 8 * 2 ** 20), twice
    assert once == (["aten._to_copy"], 8 * 2 ** 20), once


@claim("TCL118-copy-needed", "TCL118",
       "copy=True is what keeps the fix a copy: x.to(x.dtype), x.float() on float32 and x.to(x.device) return x "
       "itself, x.to(.., copy=True) a new tensor",
       tags={"fix", "near-miss"})
def _tcl118_copy_needed(device: str) -> None:
    import torch

    src = torch.randn(3, device=device)
    assert src.to(src.dtype) is src and src.float() is src and src.to(device) is src
    for copied in (src.to(src.dtype, copy=True), src.to(torch.float, copy=True), src.to(device, copy=True)):
        assert copied is not src and not shares_storage(copied, src)


@claim("TCL118-own-dtype", "TCL118",
       "a conversion to a tensor's own dtype returns the tensor itself: argmax/argsort/nonzero/randint/randperm/"
       "arange(ints)/.long() give int64 and .long() of them is the same tensor; a comparison gives bool and .bool() "
       "is the same tensor; randn/zeros give float32 and .float() is the same; so x.clone().long() of an int64 x "
       "dispatches one aten.clone and nothing else",
       tags={"near-miss"})
def _tcl118_own_dtype(device: str) -> None:
    import torch

    from .copies import dispatched

    scores = torch.randn(4, 5, device=device)
    made = {
        torch.int64: [scores.argmax(-1), torch.argmax(scores), scores.argsort(), scores.nonzero(),
                      torch.randint(0, 5, (3,), device=device), torch.randperm(4, device=device),
                      torch.arange(5, device=device), scores.long()],
        torch.bool: [scores > 0, scores == scores, torch.isnan(scores), scores.eq(0)],
        torch.float32: [scores, torch.zeros(3, device=device), scores.float()],
    }
    casts = {torch.int64: lambda t: t.long(), torch.bool: lambda t: t.bool(), torch.float32: lambda t: t.float()}
    for dtype, tensors in made.items():
        for t in tensors:
            assert t.dtype == dtype, f"{dtype} expected, {t.dtype} made"
            assert casts[dtype](t) is t and t.to(dtype) is t, f"{dtype}: a new tensor"
            assert casts[dtype](t).data_ptr() == t.data_ptr()
    ids = scores.argmax(-1)
    assert dispatched(lambda: ids.clone().long())[0] == ["aten.clone"], dispatched(lambda: ids.clone().long())


@claim("TCL118-known-dtype-device", "TCL118",
       "what TCL118 takes as proof of a tensor's dtype and device holds: torch.tensor of Python ints is int64 "
       "(also under set_default_dtype(float64)), of bools bool, of floats float32 (float64 under "
       "set_default_dtype(float64)); torch.LongTensor is int64; zeros_like, indexing, view(-1) and .cpu() keep the "
       "dtype and view(torch.int32) makes int32; a creation naming no device is on the CPU and .cpu(), .to('cpu') "
       "and .long() of an int64 one return it itself; .float() of an int64 tensor and .double() of a float32 one "
       "make a new tensor",
       tags={"near-miss"})
def _tcl118_known_dtype_device(device: str) -> None:
    import torch

    ids, flags, weights = torch.tensor([[1, 2], [3, 4]]), torch.tensor([True, False]), torch.tensor([0.5, 1.0])
    assert (ids.dtype, flags.dtype, weights.dtype) == (torch.int64, torch.bool, torch.float32)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor([1, 2]).dtype == torch.int64 and torch.tensor([0.5]).dtype == torch.float64
    finally:
        torch.set_default_dtype(before)
    assert torch.LongTensor([1, 2]).dtype == torch.int64 and torch.zeros_like(ids).dtype == torch.int64
    assert ids[:, 1:].dtype == ids.view(-1).dtype == ids.cpu().dtype == torch.int64
    assert torch.randn(3).view(torch.int32).dtype == torch.int32
    for made in (ids, weights, torch.randn(3), torch.zeros(3)):
        assert made.device.type == "cpu" and made.cpu() is made and made.to("cpu") is made
    assert ids.long() is ids and flags.bool() is flags and weights.float() is weights
    moved = torch.randn(3, device=device)
    assert moved.to(device) is moved
    assert ids.float() is not ids and weights.double() is not weights
