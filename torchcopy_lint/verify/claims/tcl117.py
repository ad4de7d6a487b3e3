"""TCL117 claims: detach before converting (x.detach().cpu(), not x.cpu().detach())."""

from __future__ import annotations

from typing import Callable, Dict, List

from ..core import Claim
from ..support import assert_same_tensor, shares_storage
from .common import copy_sources
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def conversions(device: str, other) -> Dict[str, Callable[[object], object]]:
    """The conversions TCL117 and TCL118 see, each applied to a tensor ``t``."""
    import torch

    return {
        "cpu()": lambda t: t.cpu(), "float()": lambda t: t.float(), "double()": lambda t: t.double(),
        "half()": lambda t: t.half(), "bfloat16()": lambda t: t.bfloat16(), "long()": lambda t: t.long(),
        "to(float64)": lambda t: t.to(torch.float64), "to(device)": lambda t: t.to(device),
        "to(device, float16)": lambda t: t.to(device, torch.float16),
        "to(dtype=, device=)": lambda t: t.to(dtype=torch.float64, device=device),
        "to(other)": lambda t: t.to(other),
    }


@claim("TCL117-same-result", "TCL117",
       "x.M(..).detach() == x.detach().M(..) for cpu/float/double/half/bfloat16/long/to(dtype/device/other): "
       "values, dtype, device, strides, requires_grad False, leaf, and storage shared with x exactly alike "
       "(both alias x when the conversion is a no-op)",
       tags={"fix"})
def _tcl117_same_result(device: str) -> None:
    import torch

    other = torch.zeros(1, dtype=torch.float64, device=device)
    for name, src in copy_sources(device).items():
        for spelling, convert in conversions(device, other).items():
            original, fixed = convert(src).detach(), convert(src.detach())
            assert_same_tensor(original, fixed, f"{name}.{spelling}")
            assert shares_storage(original, src) == shares_storage(fixed, src), f"{name}.{spelling}: aliasing"


@claim("TCL117-throwaway-node", "TCL117",
       "on a tensor that requires grad, a conversion records a ToCopyBackward0 node (the detach right after "
       "drops it); detaching first records nothing and dispatches the same aten ops (_to_copy, detach)",
       tags={"hazard"})
def _tcl117_throwaway_node(device: str) -> None:
    import torch

    from .copies import dispatched

    hidden = torch.randn(3, 4, device=device, requires_grad=True) * 2
    converted = hidden.to(torch.float64)
    assert type(converted.grad_fn).__name__ == "ToCopyBackward0", f"conversion recorded {converted.grad_fn}"
    assert converted.grad_fn.next_functions[0][0] is hidden.grad_fn, "the node does not link to the graph"
    assert hidden.detach().to(torch.float64).grad_fn is None
    late, early = dispatched(lambda: hidden.to(torch.float64).detach()), \
        dispatched(lambda: hidden.detach().to(torch.float64))
    assert sorted(late[0]) == sorted(early[0]) and late[1] == early[1], f"{late} vs {early}"


@claim("TCL117-no-node-without-grad", "TCL117",
       "a conversion records no node under no_grad (even of a parameter), nor of a comparison, an argmax, "
       ".long(), .data or a factory's result; a no-op conversion of a tensor that requires grad returns it "
       "itself and records nothing either",
       devices=("cpu",), tags={"near-miss"})
def _tcl117_no_node_without_grad(device: str) -> None:
    import torch

    weight = torch.nn.Parameter(torch.randn(3, 4, device=device))
    with torch.no_grad():
        assert weight.to(torch.float64).grad_fn is None, "a conversion under no_grad recorded a node"
    for spelling, t in {"weight > 0": weight > 0, "weight.argmax(1)": weight.argmax(1), "weight.long()": weight.long(),
                        "weight.data": weight.data, "weight.new_zeros(2)": weight.new_zeros(2)}.items():
        converted = t.to(torch.float64)
        assert converted.grad_fn is None and not converted.requires_grad, f"{spelling}.to(float64) recorded a node"
    same = weight.to(weight.dtype)
    assert same is weight and same.grad_fn is None, "a no-op conversion made a copy"


@claim("TCL117-no-node-to-integral", "TCL117",
       "a conversion of a tensor that requires grad to an integer or bool dtype (.long(), .int(), .byte(), "
       ".to(torch.int64), .to(device, torch.bool), .to(dtype=torch.uint8)) records no node: its result cannot "
       "require grad; to a floating dtype it records ToCopyBackward0",
       tags={"near-miss"})
def _tcl117_no_node_to_integral(device: str) -> None:
    import torch

    hidden = torch.randn(3, 4, device=device, requires_grad=True) * 2
    for spelling, convert in {"long()": lambda t: t.long(), "int()": lambda t: t.int(), "byte()": lambda t: t.byte(),
                              "to(torch.int64)": lambda t: t.to(torch.int64),
                              "to(device, torch.bool)": lambda t: t.to(device, torch.bool),
                              "to(dtype=torch.uint8)": lambda t: t.to(dtype=torch.uint8)}.items():
        converted = convert(hidden)
        assert converted.grad_fn is None and not converted.requires_grad, f".{spelling} recorded a node"
    assert type(hidden.double().grad_fn).__name__ == "ToCopyBackward0", "a floating conversion recorded no node"


@claim("TCL117-no-node-called-under-no-grad", "TCL117",
       "a function called only under no_grad (a with block, or a @no_grad method calling it) runs with grad mode "
       "off: a conversion in it records no node; what a function computes under no_grad and returns does not "
       "require grad (also after in-place scaling there), but does once updated in place with a parameter "
       "where grad mode is on",
       devices=("cpu",), tags={"near-miss"})
def _tcl117_no_node_called_under_no_grad(device: str) -> None:
    import torch

    weight = torch.nn.Parameter(torch.randn(3, 4, device=device))

    def _prediction():
        return (weight * 2).to(torch.float64)

    @torch.no_grad()
    def predict():
        return _prediction()

    with torch.no_grad():
        assert _prediction().grad_fn is None, "a conversion in a function called under no_grad recorded a node"
    assert predict().grad_fn is None, "a conversion in a function called from a no_grad method recorded a node"
    assert _prediction().grad_fn is not None, "the same function called with grad mode on recorded nothing"

    def projection():
        with torch.no_grad():
            out = weight.clone()
            out[out > 0] *= 0.5
        return out

    assert not projection().requires_grad, "a value computed under no_grad and returned requires grad"
    scaled = projection()
    scaled.mul_(weight)
    assert scaled.requires_grad, "an in-place update with a parameter, grad mode on, left it not requiring grad"


_LAYER_ARGUMENTS = {
    "Threshold": (0.1, 0.0), "Unflatten": (1, (2, 2)), "Fold": ((4, 4), 2), "FractionalMaxPool2d": (2,),
    "FractionalMaxPool3d": (2,), "ConstantPad1d": (1, 0.0), "ConstantPad2d": (1, 0.0), "ConstantPad3d": (1, 0.0),
    "LPPool1d": (2, 2), "LPPool2d": (2, 2), "LPPool3d": (2, 2),
}
_SIZED = ("Pool", "Unpool", "Pad", "Shuffle", "Unshuffle", "Unfold", "LocalResponseNorm", "CrossMapLRN2d")


@claim("TCL117-no-node-parameterless-layer", "TCL117",
       "every layer the model takes for parameterless (vocabulary.PARAMETERLESS_LAYERS) holds no parameter, buffer "
       "or submodule once built; its output requires grad exactly when an input does (ReLU, GELU, Dropout, "
       "MaxPool1d, Identity, Softmax, MSELoss), while PReLU's requires grad from a plain input",
       devices=("cpu",), tags={"near-miss"})
def _tcl117_no_node_parameterless_layer(device: str) -> None:
    import torch

    from ...semantic.vocabulary import PARAMETERLESS_LAYERS

    for name in sorted(PARAMETERLESS_LAYERS):
        args = _LAYER_ARGUMENTS.get(name, (2,) if any(part in name for part in _SIZED) else ())
        kwargs = {"output_ratio": 0.5} if name.startswith("FractionalMaxPool") else {}
        layer = getattr(torch.nn, name)(*args, **kwargs)
        held = list(layer.parameters()) + list(layer.buffers()) + list(layer.children())
        assert not held, f"nn.{name} holds {len(held)} parameters, buffers or submodules"
    plain = torch.randn(2, 4, device=device)
    leaf = torch.randn(2, 4, device=device, requires_grad=True)
    for spelling, call in {"ReLU": lambda t: torch.nn.ReLU()(t), "GELU": lambda t: torch.nn.GELU()(t),
                           "Dropout": lambda t: torch.nn.Dropout(0.5)(t), "MaxPool1d": lambda t: torch.nn.MaxPool1d(2)(t),
                           "Identity": lambda t: torch.nn.Identity()(t), "Softmax": lambda t: torch.nn.Softmax(-1)(t),
                           "MSELoss": lambda t: torch.nn.MSELoss()(t, plain)}.items():
        assert not call(plain).requires_grad, f"nn.{spelling} of a tensor that does not require grad requires grad"
        assert call(leaf).requires_grad, f"nn.{spelling} of a leaf that requires grad does not require grad"
    assert torch.nn.PReLU().to(device)(plain).requires_grad, "PReLU's output does not require grad (its weight)"
