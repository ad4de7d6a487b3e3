"""TCL104 claims: mutation through .data."""

from __future__ import annotations

from typing import Callable, List

from ..core import Claim
from ..support import INPLACE_ERROR, assert_same_tensor, shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


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


def _module_with(device: str, write_in_forward: Callable[[object], None], hook: bool):
    """A module computing sum(w * w) at w = [1, 2, 3]; ``write_in_forward`` runs in its forward after w is
    used, or in a forward hook; returns w's gradient after backward (raises where autograd sees the write)."""
    import torch

    class Square(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], device=device))

        def forward(self):
            out = (self.w * self.w).sum()  # saves w for backward
            if not hook:
                write_in_forward(self.w)
            return out

    module = Square()
    if hook:
        module.register_forward_hook(lambda m, inputs, output: write_in_forward(m.w))
    module().backward()
    return module.w.grad.tolist()


def _live_context_check(hook: bool) -> Callable[[str], None]:
    def check(device: str) -> None:
        grad = _module_with(device, _data_add, hook)
        assert grad == [4.0, 6.0, 8.0], f"grad through .data is {grad}, expected the silently wrong [4, 6, 8]"
        try:
            grad = _module_with(device, _detach_add, hook)
        except RuntimeError as exc:
            assert INPLACE_ERROR in str(exc), f"unexpected error {exc}"
        else:
            raise AssertionError(f"the write through .detach() did not raise; grad {grad}")

    return check


for _context, _hook in (("forward", False), ("hook", True)):
    claim(f"TCL104-{_context}-write-corrupts-grad", "TCL104",
          f"in a module's {_context}, after w is used, w.data.add_(1) leaves backward of sum(w*w) silently wrong "
          "([4, 6, 8], not [2, 4, 6]) while w.detach().add_(1) makes it raise",
          tags={"hazard"})(_live_context_check(_hook))


def _mlp_step(device: str, between: Callable[[object], None]):
    """A two-layer network's step: forward, ``between(net)``, backward; returns the first layer's gradient
    (which backpropagates through the second layer's weight, saved by the forward)."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).to(device)
    x = torch.randn(5, 3, device=device)
    loss = net(x).pow(2).sum()
    between(net)
    loss.backward()
    return net[0].weight.grad.clone()


@claim("TCL104-step-write-corrupts-grad", "TCL104",
       "between a forward and its backward, net[2].weight.data.mul_(0.5) silently changes the gradient backward "
       "computes for net[0] (it uses the written weight), while net[2].weight.detach().mul_(0.5) makes it raise",
       tags={"hazard"})
def _tcl104_step_write_corrupts_grad(device: str) -> None:
    import torch

    untouched = _mlp_step(device, lambda net: None)
    written = _mlp_step(device, lambda net: net[2].weight.data.mul_(0.5))  # noqa: TCL104
    assert not torch.equal(untouched, written), "the write through .data did not change the gradient"
    try:
        _mlp_step(device, lambda net: net[2].weight.detach().mul_(0.5))
    except RuntimeError as exc:
        assert INPLACE_ERROR in str(exc), f"unexpected error {exc}"
    else:
        raise AssertionError("the write through .detach() did not raise")


@claim("TCL104-rebind-saved-self-or-view", "TCL104",
       "w.data = v between a forward and its backward: where the graph saved w itself as an input (x * w) "
       "backward uses v, where it saved a view (F.linear saves w.t()) or w as an op's output (exp) the old values",
       tags={"hazard"})
def _tcl104_rebind_saved_self_or_view(device: str) -> None:
    import torch
    import torch.nn.functional as F

    x = torch.full((3,), 2.0, device=device, requires_grad=True)
    w = torch.nn.Parameter(torch.ones(3, device=device))
    loss = (x * w).sum()
    w.data = torch.full((3,), 5.0, device=device)  # noqa: TCL104
    loss.backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0], f"x * w: x.grad {x.grad.tolist()}, expected the new w [5, 5, 5]"
    x = torch.full((1, 3), 2.0, device=device, requires_grad=True)
    w = torch.nn.Parameter(torch.ones(2, 3, device=device))
    loss = F.linear(x, w).sum()
    w.data = torch.full((2, 3), 5.0, device=device)  # noqa: TCL104
    loss.backward()
    assert x.grad.tolist() == [[2.0, 2.0, 2.0]], f"F.linear: x.grad {x.grad.tolist()}, expected the old w's [2, 2, 2]"
    x = torch.zeros(3, device=device, requires_grad=True)
    y = x.exp()  # exp saves its output, y
    y.data = torch.full((3,), 5.0, device=device)  # noqa: TCL104
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0], f"exp: x.grad {x.grad.tolist()}, expected the old output's [1, 1, 1]"


@claim("TCL104-write-before-use-consistent", "TCL104",
       "in a forward, w.data.clamp_(max=2) before anything uses w gives backward of sum(w*w) the gradient of what "
       "the forward computed ([2, 4, 4] at w = [1, 2, 2] after the clamp): no graph saved w yet, so nothing is "
       "corrupted (why TCL104 needs a use before the write)",
       tags={"near-miss"})
def _tcl104_write_before_use_consistent(device: str) -> None:
    import torch

    class Clamped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0], device=device))

        def forward(self):
            self.w.data.clamp_(max=2.0)  # before any use: shapes what this forward computes
            return (self.w * self.w).sum()

    module = Clamped()
    module().backward()
    assert module.w.grad.tolist() == [2.0, 4.0, 4.0], f"grad {module.w.grad.tolist()}, expected 2 * clamped w"



def _prehooked_linear(device: str, write: Callable[[object], None], calls: int):
    """A 3 -> 3 linear layer whose forward pre-hook runs ``write(module)``, called ``calls`` times in a row on an
    input that requires grad; returns (the input, the weight each call ran with, the input's and weight's grads)."""
    import torch

    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 3, bias=False).to(device)
    seen: list = []

    def hook(module, inputs) -> None:
        before = module.weight.detach().clone()
        write(module)
        assert not torch.equal(before, module.weight), "the pre-hook's write changed nothing"
        seen.append(module.weight.detach().clone())  # the values this call's forward runs with

    layer.register_forward_pre_hook(hook)
    x = torch.randn(2, 3, device=device, requires_grad=True)
    out = x
    for _ in range(calls):
        out = layer(out)
    out.pow(2).sum().backward()
    return x, seen, x.grad, layer.weight.grad


def _linear_grads(x0, weights):
    """The input's grad and the summed weight grads of pow(2).sum() of linear layers applied in turn, each weight
    a separate leaf: what backward must give when every call saw the values it was given."""
    import torch.nn.functional as F

    x = x0.detach().clone().requires_grad_(True)
    leaves = [w.detach().clone().requires_grad_(True) for w in weights]
    out = x
    for w in leaves:
        out = F.linear(out, w)
    out.pow(2).sum().backward()
    return x.grad, sum(w.grad for w in leaves)


@claim("TCL104-pre-hook-write-before-use", "TCL104",
       "a forward pre-hook runs before the module's forward: mod.weight.data = 2 * mod.weight.masked_fill(mask, 0) "
       "or mod.weight.data.mul_(0.5) there gives backward exactly the gradients of the written weight (the graph "
       "of this call saves it after the write), so nothing is corrupted (why TCL104 leaves such a write to TCL119)",
       tags={"near-miss"})
def _tcl104_pre_hook_write_before_use(device: str) -> None:
    import torch

    def rebind(module) -> None:
        mask = torch.zeros_like(module.weight, dtype=torch.bool)
        mask[0, 0] = True
        module.weight.data = 2 * module.weight.masked_fill(mask, 0)

    for write in (rebind, lambda module: module.weight.data.mul_(0.5)):
        x, seen, x_grad, w_grad = _prehooked_linear(device, write, 1)
        want_x, want_w = _linear_grads(x, seen)
        assert torch.allclose(x_grad, want_x) and torch.allclose(w_grad, want_w), \
            f"grads {x_grad.tolist()} {w_grad.tolist()}, expected {want_x.tolist()} {want_w.tolist()}"


@claim("TCL104-pre-hook-second-call-corrupts", "TCL104",
       "a module called twice in one forward: its pre-hook's mod.weight.data.mul_(0.5) before the second call "
       "changes the weight the first call saved, so the input's gradient silently differs from the one of what "
       "was computed, while mod.weight.detach().mul_(0.5) makes backward raise (why TCL104 keeps such a hook)",
       tags={"hazard"})
def _tcl104_pre_hook_second_call_corrupts(device: str) -> None:
    import torch

    x, seen, x_grad, _ = _prehooked_linear(device, lambda module: module.weight.data.mul_(0.5), 2)
    want_x, _ = _linear_grads(x, seen)
    assert not torch.allclose(x_grad, want_x), "the write before the second call did not change the input's grad"
    try:
        _prehooked_linear(device, lambda module: module.weight.detach().mul_(0.5), 2)
    except RuntimeError as exc:
        assert INPLACE_ERROR in str(exc), f"unexpected error {exc}"
    else:
        raise AssertionError("the write through .detach() did not raise")
