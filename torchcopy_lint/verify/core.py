"""The claim model shared by ``torchcopy-lint verify`` and the runtime test-suite.

Nothing here imports torch at module level: the linter and CLI import this package
and must keep working on machines without torch.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

#: Every device a claim can be checked on, in table order.
ALL_DEVICES: Tuple[str, ...] = ("cpu", "cuda")


@dataclass(frozen=True)
class Claim:
    """One statement about torch behaviour that a rule, its fix or its docs relies on.

    ``check(device)`` returns nothing when the statement holds on ``device`` and raises
    ``AssertionError`` with a precise message when it does not.
    """

    id: str
    rule: str
    statement: str
    check: Callable[[str], None]
    devices: Tuple[str, ...] = ALL_DEVICES
    tags: frozenset = field(default_factory=frozenset)

    def applies_to(self, device: str) -> bool:
        return device in self.devices


class Status(enum.Enum):
    HOLDS = "holds"
    FAILS = "DOES NOT HOLD"
    NO_DEVICE = "skipped (no CUDA)"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class Outcome:
    claim: Claim
    device: str
    status: Status
    detail: Optional[str] = None


def torch_available() -> bool:
    """True when torch can be imported (checked without importing anything else)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def available_devices() -> List[str]:
    """Devices claims can run on here: always ``cpu``, plus ``cuda`` when usable."""
    import torch

    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def evaluate(claim: Claim, device: str, available: List[str]) -> Outcome:
    """Run one claim on one device and classify the result for the report."""
    if not claim.applies_to(device):
        return Outcome(claim, device, Status.NOT_APPLICABLE)
    if device not in available:
        return Outcome(claim, device, Status.NO_DEVICE)
    try:
        claim.check(device)
    except AssertionError as exc:
        return Outcome(claim, device, Status.FAILS, str(exc) or "assertion failed")
    except Exception as exc:  # a check that crashes proves nothing: report it as failing
        return Outcome(claim, device, Status.FAILS, f"check raised {type(exc).__name__}: {exc}")
    return Outcome(claim, device, Status.HOLDS)
