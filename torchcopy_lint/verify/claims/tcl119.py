"""TCL119 claims: a write through .data where no graph can be live does what the modern forms do."""

from __future__ import annotations

from typing import Callable, List

from ..core import Claim
from ..support import assert_same_tensor
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)

_VIEWS = ((".data", lambda p: p.data), (".detach()", lambda p: p.detach()))


def _writes(view: Callable[[object], object], p) -> None:
    view(p).mul_(0.5)
    view(p)[0] = 1.0
    view(p).add_(0.25)
    view(p).clamp_(-1.0, 1.0)


def _train_once(p, x) -> object:
    """One forward and backward after the writes: the gradient the writes lead to."""
    (p * x).pow(2).sum().backward()
    return p.grad.clone()


@claim("TCL119-data-write-skips-version", "TCL119",
       "a write through p.data leaves p's version counter unchanged while the same write through p.detach() "
       "bumps it: moved where a graph is live, only the .detach() form would be caught",
       tags={"hazard"})
def _tcl119_data_write_skips_version(device: str) -> None:
    import torch

    p = torch.zeros(3, device=device, requires_grad=True)
    before = p._version
    p.data.add_(1)  # noqa: TCL104
    assert p._version == before, f"p.data.add_ bumped p's version from {before} to {p._version}"
    p.detach().add_(1)
    assert p._version > before, "p.detach().add_ did not bump p's version"


def _compare(device: str, setup: Callable[[Callable[[object], object], object], None], what: str) -> None:
    import torch

    results = []
    for name, view in _VIEWS:
        torch.manual_seed(0)
        p = torch.randn(4, 3, device=device).requires_grad_(True)
        x = torch.randn(4, 3, device=device)
        setup(view, p)
        results.append((name, p, _train_once(p, x)))
    (_, p0, g0), (name, p1, g1) = results
    assert_same_tensor(p0, p1, f"{what}: parameter after .data vs {name}")
    assert_same_tensor(g0, g1, f"{what}: gradient after .data vs {name}")


@claim("TCL119-no-grad-identical", "TCL119",
       "under torch.no_grad() with no graph saved, writes through .data and .detach() give bit-identical parameters "
       "and the same gradients in the next forward/backward",
       tags={"fix"})
def _tcl119_no_grad_identical(device: str) -> None:
    import torch

    def setup(view, p) -> None:
        with torch.no_grad():
            _writes(view, p)

    _compare(device, setup, "no_grad")


@claim("TCL119-before-forward-identical", "TCL119",
       "in a module's __init__ (before any forward), writes through .data and .detach() give bit-identical "
       "parameters and gradients",
       tags={"fix"})
def _tcl119_before_forward_identical(device: str) -> None:
    import torch

    def build(view):
        class Net(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                torch.manual_seed(0)
                self.fc = torch.nn.Linear(3, 2).to(device)
                _writes(view, self.fc.weight)
                view(self.fc.bias).zero_()

        net = Net()
        x = torch.randn(5, 3, device=device, generator=torch.Generator(device).manual_seed(1))
        net.fc(x).pow(2).sum().backward()
        return net.fc.weight, net.fc.weight.grad

    (w0, g0), (w1, g1) = (build(view) for _, view in _VIEWS)
    assert_same_tensor(w0, w1, "__init__: weight after .data vs .detach()")
    assert_same_tensor(g0, g1, "__init__: gradient after .data vs .detach()")


@claim("TCL119-optimizer-step-identical", "TCL119",
       "in an Optimizer subclass's step() (after backward), updates through .data and .detach() give bit-identical "
       "parameters over three steps, and the .grad buffer scaled through .data or .detach() is the same",
       tags={"fix"})
def _tcl119_optimizer_step_identical(device: str) -> None:
    import torch

    def run(view):
        class SGD(torch.optim.Optimizer):
            def __init__(self, params) -> None:
                super().__init__(params, {"lr": 0.1})

            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        view(p.grad).mul_(0.5)
                        view(p).add_(p.grad, alpha=-group["lr"])

        torch.manual_seed(0)
        p = torch.randn(4, 3, device=device).requires_grad_(True)
        x = torch.randn(4, 3, device=device)
        optimizer = SGD([p])
        for _ in range(3):
            optimizer.zero_grad()
            (p * x).pow(2).sum().backward()  # the graph is freed by backward before step()
            optimizer.step()
        return p

    via_data, via_detach = (run(view) for _, view in _VIEWS)
    assert_same_tensor(via_data, via_detach, "step(): parameters after .data vs .detach()")


@claim("TCL119-init-without-data", "TCL119",
       "nn.init.*_(w) works on a leaf requiring grad and matches nn.init.*_(w.data) bit for bit, "
       "so the fix may drop .data",
       tags={"fix"})
def _tcl119_init_without_data(device: str) -> None:
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


@claim("TCL119-data-assign-keeps-object", "TCL119",
       "p.data = v keeps the Parameter object that the module and the optimizer hold, and gives it v's dtype, "
       "shape and storage: a float64 value makes the float32 weight float64",
       tags={"hazard"})
def _tcl119_data_assign_keeps_object(device: str) -> None:
    import torch

    layer = torch.nn.Linear(3, 2).to(device)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    weight = layer.weight
    value = torch.ones(4, 3, dtype=torch.float64, device=device)
    weight.data = value  # noqa: TCL119
    assert layer.weight is weight and optimizer.param_groups[0]["params"][0] is weight, "the object was replaced"
    assert (weight.dtype, tuple(weight.shape)) == (torch.float64, (4, 3)), f"{weight.dtype} {tuple(weight.shape)}"
    assert weight.data_ptr() == value.data_ptr(), "the weight does not take the value's storage"


@claim("TCL119-copy-is-not-a-rebind", "TCL119",
       "with torch.no_grad(): b.copy_(v) casts v into b's old dtype and storage (an int64 buffer gets -8 for "
       "-8.667) and a state_dict() snapshot taken before sees the write, where b.data = v takes v's dtype and "
       "leaves the snapshot's values alone",
       tags={"hazard"})
def _tcl119_copy_is_not_a_rebind(device: str) -> None:
    import torch

    def buffer_module():
        module = torch.nn.Module()
        module.register_buffer("b", torch.tensor([1, 2], device=device))
        return module

    value = torch.tensor([-8.667, 0.5], device=device)
    rebound, copied = buffer_module(), buffer_module()
    kept_rebound, kept_copied = rebound.state_dict(), copied.state_dict()
    rebound.b.data = value  # noqa: TCL119
    with torch.no_grad():
        copied.b.copy_(value)
    assert rebound.b.dtype == torch.float32 and copied.b.dtype == torch.int64, "dtypes"
    assert copied.b.tolist() == [-8, 0], f"copy_ gave {copied.b.tolist()}"
    assert kept_rebound["b"].tolist() == [1, 2], "the snapshot changed under .data ="
    assert kept_copied["b"].tolist() == [-8, 0], "the snapshot did not see copy_'s write"


@claim("TCL119-same-metadata-rebind-is-copy", "TCL119",
       "where the value is computed from p with p's dtype, shape and device (p.data = p.data.clamp(0, 1)), "
       "with torch.no_grad(): p.copy_(p.clamp(0, 1)) gives the same values, dtype and object",
       tags={"fix"})
def _tcl119_same_metadata_rebind_is_copy(device: str) -> None:
    import torch

    torch.manual_seed(0)
    start = torch.randn(4, 3, device=device)
    rebound = torch.nn.Parameter(start.clone())
    copied = torch.nn.Parameter(start.clone())
    rebound.data = rebound.data.clamp(0, 1) * 2  # noqa: TCL119
    with torch.no_grad():
        copied.copy_(copied.clamp(0, 1) * 2)
    assert_same_tensor(rebound, copied, "p.data = f(p) vs no_grad copy_")
