"""TCL103 claims: clone().detach() instead of detach().clone()."""

from __future__ import annotations

from typing import Dict, List

from ..core import Claim
from ..support import assert_same_tensor
from .common import (
    TIMING_ELEMENTS,
    TIMING_RATIO_BOUND,
    assert_fresh_copy,
    assert_not_slower,
    copy_sources,
    timing_input,
)
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


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

    for name, src in copy_sources(device).items():
        for kwargs in _clone_variants(src):
            method_original, method_fixed = src.clone(**kwargs).detach(), src.detach().clone(**kwargs)  # noqa: TCL103
            assert_same_tensor(method_original, method_fixed, f"{name}.clone(**{kwargs})")
            assert_fresh_copy(method_fixed, src, f"{name}.detach().clone(**{kwargs})")
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
    t = timing_input(requires_grad=True)
    assert_not_slower(lambda: t.clone().detach(), lambda: t.detach().clone(),  # noqa: TCL103
                      "clone().detach() / detach().clone()")


@claim("TCL103-no-node-under-no-grad", "TCL103",
       "under torch.no_grad()/inference_mode(), clone() of a parameter or of a non-leaf records no node (so "
       "clone().detach() there is not reported); a non-view result made there does not require grad, a view "
       "of a parameter made there still does",
       devices=("cpu",), tags={"near-miss"})
def _tcl103_no_node_under_no_grad(device: str) -> None:
    import torch

    weight = torch.nn.Parameter(torch.randn(3, device=device))
    hidden = weight * 2
    for mode in (torch.no_grad, torch.inference_mode):
        with mode():
            for name, t in (("parameter", weight), ("non-leaf", hidden)):
                copy = t.clone()
                assert copy.grad_fn is None and not copy.requires_grad, f"{mode.__name__}: clone() of a {name}"
                assert copy.detach().grad_fn is None
    with torch.no_grad():
        product, view = weight * 2, weight.view(-1)
    assert not product.requires_grad, "a product made under no_grad requires grad"
    assert view.requires_grad, "a view of a parameter made under no_grad does not require grad"
    assert type(view.clone().grad_fn).__name__ == "CloneBackward0", "clone() of that view records no node"
    plain = torch.randn(3, device=device, requires_grad=True)
    plain.requires_grad = False
    assert plain.clone().grad_fn is None, "clone() after requires_grad = False recorded a node"


@claim("TCL103-integral-results-no-grad", "TCL103",
       "comparisons, ~, &, argmax/argsort/nonzero, .long()/.int()/.bool(), torch.where(cond), the indices of "
       "max/sort/topk, .data, factories and hook gradients never require grad, even from a tensor that does: "
       "their clone() records no node",
       devices=("cpu",), tags={"near-miss"})
def _tcl103_integral_results_no_grad(device: str) -> None:
    import torch

    x = torch.randn(4, 5, device=device, requires_grad=True)
    mask = x > 0
    results = {
        "x > 0": mask, "x == 1": x == 1, "~mask": ~mask, "mask & mask": mask & mask, "x.argmax(1)": x.argmax(1),
        "x.argsort()": x.argsort(), "x.nonzero()": x.nonzero(), "x.long()": x.long(), "x.int()": x.int(),
        "x.bool()": x.bool(), "torch.where(mask)[0]": torch.where(mask)[0], "x.max(1)[1]": x.max(1)[1],
        "x.sort(1).indices": x.sort(1).indices, "x.topk(2)[1]": x.topk(2)[1], "x.data": x.data,
        "x.new_zeros(3)": x.new_zeros(3), "torch.zeros_like(x)": torch.zeros_like(x),
        "torch.randint(0, 3, (2,))": torch.randint(0, 3, (2,), device=device),
        "torch.arange(3)": torch.arange(3, device=device),
    }
    for spelling, t in results.items():
        assert not t.requires_grad, f"{spelling} requires grad"
        assert t.clone().grad_fn is None, f"{spelling}.clone() recorded a node"
    assert x.max(1)[0].requires_grad, "the values of max(1) do not require grad"
    seen = []
    x.register_hook(lambda grad: seen.append(grad.requires_grad) or None)
    (x * 2).sum().backward()
    assert seen == [False], f"a tensor hook's gradient requires grad: {seen}"
