"""TCL109 claims: a live state_dict() kept as a snapshot across a training step."""

from __future__ import annotations

import collections
import copy
from typing import List

from ..core import Claim
from ..support import shares_storage
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _model_and_step(device: str, momentum: float = 0.0):
    """A small model, its SGD optimizer, and a function running one training step."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    data = torch.randn(8, 3, device=device)

    def step() -> None:
        optimizer.zero_grad()
        model(data).pow(2).sum().backward()
        optimizer.step()

    return model, optimizer, step


@claim("TCL109-state-dict-is-live", "TCL109",
       "sd = model.state_dict() (and its .copy(), dict(...), OrderedDict(...)) holds the live tensors: after "
       "optimizer.step() the 'snapshot' equals the new weights",
       tags={"hazard"})
def _tcl109_state_dict_is_live(device: str) -> None:
    import torch

    model, _, step = _model_and_step(device)
    before = model[0].weight.detach().clone()
    snapshots = {"state_dict()": model.state_dict(), ".copy()": model.state_dict().copy(),
                 "dict()": dict(model.state_dict()), "OrderedDict()": collections.OrderedDict(model.state_dict())}
    step()
    assert not torch.equal(model[0].weight, before), "the step did not change the weights"
    for spelling, snapshot in snapshots.items():
        assert shares_storage(snapshot["0.weight"], model[0].weight), f"{spelling} copied the weight"
        assert torch.equal(snapshot["0.weight"], model[0].weight), f"{spelling} kept the old weights"


@claim("TCL109-deepcopy-is-snapshot", "TCL109",
       "copy.deepcopy(model.state_dict()) does not change with training and load_state_dict restores it exactly "
       "(buffers and _metadata included)",
       tags={"fix"})
def _tcl109_deepcopy_is_snapshot(device: str) -> None:
    import torch

    model, _, step = _model_and_step(device)
    expected = {k: v.detach().clone() for k, v in model.state_dict().items()}
    snapshot = copy.deepcopy(model.state_dict())
    assert snapshot._metadata == model.state_dict()._metadata, "deepcopy lost the _metadata (versions)"
    step()
    for key, value in expected.items():
        assert torch.equal(snapshot[key], value), f"{key} changed in the deepcopy"
        assert not shares_storage(snapshot[key], model.state_dict()[key]), f"{key} shares storage"
    model.load_state_dict(snapshot)
    for key, value in model.state_dict().items():
        assert torch.equal(value, expected[key]), f"{key} not restored"


@claim("TCL109-optimizer-state-live", "TCL109",
       "optimizer.state_dict() taken after a step holds live state tensors (momentum buffers change with the next "
       "step); taken before the first step its state is empty and stays empty",
       tags={"hazard", "near-miss"})
def _tcl109_optimizer_state_live(device: str) -> None:
    import torch

    _, optimizer, step = _model_and_step(device, momentum=0.9)
    initial = optimizer.state_dict()
    step()
    assert initial["state"] == {}, f"the state taken before the first step changed: {list(initial['state'])}"
    after_first = optimizer.state_dict()
    buffer = after_first["state"][0]["momentum_buffer"]
    value = buffer.clone()
    step()
    assert not torch.equal(buffer, value), "the momentum buffer in the earlier state_dict did not change"


@claim("TCL109-param-groups-copied", "TCL109",
       "optimizer.state_dict()['param_groups'] is a copy: an lr changed later (by a scheduler) is not seen",
       tags={"near-miss"})
def _tcl109_param_groups_copied(device: str) -> None:
    _, optimizer, _ = _model_and_step(device)
    state = optimizer.state_dict()
    optimizer.param_groups[0]["lr"] = 0.5
    assert state["param_groups"][0]["lr"] == 0.1, f"lr in the state_dict is {state['param_groups'][0]['lr']}"
