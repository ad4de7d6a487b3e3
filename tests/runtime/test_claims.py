"""Every registered claim, on every device it applies to: the proof behind each rule and doc.

A claim's node id is ``test_claim_holds[<claim id>-<device>]``; docs cite it. A claim whose declared module
(numpy) is not installed is skipped with that reason, as ``torchcopy-lint verify`` reports it.
"""

import pytest

from torchcopy_lint.verify.claims import CLAIMS

pytest.importorskip("torch", reason="the runtime claims need torch")

pytestmark = pytest.mark.runtime


@pytest.mark.parametrize(
    ("claim", "device"),
    [pytest.param(claim, device, id=f"{claim.id}-{device}") for claim in CLAIMS for device in claim.devices],
    indirect=["device"],
)
def test_claim_holds(claim, device):
    for module in claim.requires:
        pytest.importorskip(module, reason=f"{module} not installed")
    claim.check(device)
