"""The language server with a big data file open (issue 19): the big literal never reaches LibCST
(structure.py), so the file is linted in about the time CPython parses it, and another document's
diagnostics are not held back behind it. A real LSP client over stdio (pytest-lsp)."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # Python 3.10+
from pytest_lsp import LanguageClient  # noqa: E402

from test_server import HAZARD, Doc, client, codes, diagnostics_where  # noqa: E402,F401  (client: a server of its own)

pytestmark = pytest.mark.asyncio(loop_scope="module")
LATENCY = 2.0  # seconds from an edit of a small document to its diagnostics, on a machine of its own


def slowdown() -> float:
    """How much slower than its CPU time wall-clock time runs now (>= 1): the machine may be shared, and
    the latency asked for is that of a machine of one's own."""
    wall, cpu = time.perf_counter(), time.process_time()
    total = 0
    while time.process_time() - cpu < 0.3:
        total += sum(range(10_000))
    return max(1.0, (time.perf_counter() - wall) / (time.process_time() - cpu))


def data_file() -> str:
    """Torch code with a finding, then a 200,000-element list literal (2 MB)."""
    rng = random.Random(19)
    values = ", ".join(f"{rng.random():.6f}" for _ in range(200_000))
    return HAZARD + f"DATA = [{values}]\nz = x.clone().detach()\n"


async def test_another_document_is_not_held_back_by_a_big_data_file(client: LanguageClient, tmp_path):
    big = Doc(client, tmp_path / "data.py", data_file())
    found = await diagnostics_where(client, big.uri, lambda ds: len(ds) == 2)
    assert codes(found) == ["TCL103", "TCL103"] and [d.range.start.line for d in found] == [2, 4]
    small = Doc(client, tmp_path / "small.py", "import torch\nx = torch.randn(3)\n")
    await diagnostics_where(client, small.uri, lambda ds: len(ds) == 0)
    big.change(big.text + "w = x.clone().detach()\n")  # the big file is linted again ...
    await asyncio.sleep(0.05)
    start = time.monotonic()
    small.change(HAZARD)  # ... while this edit waits for its diagnostics
    await diagnostics_where(client, small.uri, lambda ds: codes(ds) == ["TCL103"])
    elapsed = time.monotonic() - start
    await diagnostics_where(client, big.uri, lambda ds: len(ds) == 3)
    factor = slowdown()
    assert elapsed < LATENCY * factor, f"the small document's diagnostics took {elapsed:.2f} s (machine {factor:.1f}x slow)"
