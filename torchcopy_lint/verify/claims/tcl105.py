"""TCL105 claims: copy.deepcopy of a live module."""

from __future__ import annotations

import copy
from typing import List

from ..core import Claim
from ..support import assert_same_tensor, shares_storage, silenced_warnings
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


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
    aliased = model.state_dict()  # noqa: TCL109
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
