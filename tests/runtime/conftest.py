"""Shared fixtures for the runtime suite, which checks claims and fixes against real torch.

torch is imported lazily: without it, each test module ends in a visible
``pytest.importorskip`` skip instead of a collection error.
"""

import pytest

from torchcopy_lint.verify.core import ALL_DEVICES


@pytest.fixture(params=ALL_DEVICES)
def device(request) -> str:
    """Every device in turn (or the one given by indirect parametrization).

    CUDA cases skip with a reason when CUDA is missing, so they show up as skipped
    instead of silently disappearing from the run.
    """
    import torch

    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA not available")
    return request.param
