"""The claim model shared by ``torchcopy-lint verify`` and the runtime test-suite.

Nothing here imports torch at module level: the linter and CLI import this package
and must keep working on machines without torch.
"""

from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass, field
from typing import Callable, Collection, Iterable, List, Optional, Set, Tuple

#: Every device a claim can be checked on, in table order.
ALL_DEVICES: Tuple[str, ...] = ("cpu", "cuda")

#: How reports name a device.
DEVICE_NAMES = {"cpu": "CPU", "cuda": "CUDA"}
#: The end of the reason a claim was skipped for a missing module (``numpy not installed``).
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Claim:
    """One statement about torch behaviour that a rule, its fix or its docs relies on.

    ``check(device)`` returns nothing when the statement holds on ``device`` and raises
    ``AssertionError`` with a precise message when it does not. ``requires`` names the modules besides
    torch that the check imports or that torch needs for it (numpy for the numpy bridge): where one is
    missing the claim is skipped, not failed. A check that raises for any other reason fails.
    """

    id: str
    rule: str
    statement: str
    check: Callable[[str], None]
    devices: Tuple[str, ...] = ALL_DEVICES
    tags: frozenset = field(default_factory=frozenset)
    requires: Tuple[str, ...] = ()

    def applies_to(self, device: str) -> bool:
        return device in self.devices


class Status(enum.Enum):
    HOLDS = "holds"
    FAILS = "DOES NOT HOLD"
    SKIPPED = "skipped"  #: a prerequisite is missing (the outcome's detail says which): the check did not run
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class Outcome:
    claim: Claim
    device: str
    status: Status
    detail: Optional[str] = None

    @property
    def cell(self) -> str:
        """The outcome in the report's table: a skip names its reason."""
        return f"skipped ({self.detail})" if self.status is Status.SKIPPED else self.status.value


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


def missing_modules(names: Iterable[str]) -> Set[str]:
    """The modules among ``names`` that cannot be imported here."""
    missing = set()
    for name in set(names):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.add(name)
    return missing


def missing_prerequisite(claim: Claim, device: str, available: Collection[str],
                         missing: Collection[str] = ()) -> Optional[str]:
    """Why ``claim`` cannot run on ``device`` here (the device first, then a module), or None."""
    if device not in available:
        return f"{DEVICE_NAMES.get(device, device)} not available"
    for module in claim.requires:
        if module in missing:
            return f"{module} {NOT_INSTALLED}"
    return None


def evaluate(claim: Claim, device: str, available: Collection[str], missing: Collection[str] = ()) -> Outcome:
    """Run one claim on one device and classify the result for the report.

    ``missing`` holds the modules that are not installed (see :func:`missing_modules`): a claim that
    requires one is skipped with that reason. Only a check that ran can fail.
    """
    if not claim.applies_to(device):
        return Outcome(claim, device, Status.NOT_APPLICABLE)
    reason = missing_prerequisite(claim, device, available, missing)
    if reason is not None:
        return Outcome(claim, device, Status.SKIPPED, reason)
    try:
        claim.check(device)
    except AssertionError as exc:
        return Outcome(claim, device, Status.FAILS, str(exc) or "assertion failed")
    except Exception as exc:  # a check that crashes proves nothing: report it as failing
        return Outcome(claim, device, Status.FAILS, f"check raised {type(exc).__name__}: {exc}")
    return Outcome(claim, device, Status.HOLDS)
