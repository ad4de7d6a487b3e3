"""The server's lint worker functions, in-process (no pygls needed): caching and the invalidation hook."""

from __future__ import annotations

from torchcopy_lint.server import worker

HAZARD = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"


def test_files_changed_runs_the_invalidators_and_drops_cached_results():
    seen = []
    worker.INVALIDATORS.append(seen.append)
    try:
        worker._lint.cache_clear()
        first = worker.lint_text(HAZARD, "a.py", frozenset({"TCL103"}))
        assert [d.code for d in first] == ["TCL103"]
        assert worker.lint_text(HAZARD, "a.py", frozenset({"TCL103"})) is first  # answered by the cache
        worker.files_changed(["/project/helpers.py"])
        assert seen == [["/project/helpers.py"]]
        assert worker.lint_text(HAZARD, "a.py", frozenset({"TCL103"})) is not first
    finally:
        worker.INVALIDATORS.remove(seen.append)


def test_buffers_declaring_another_encoding_are_linted_as_text():
    latin = "# -*- coding: latin-1 -*-\nimport torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()  # é\n"
    assert worker.engine_source(latin) == latin
    assert worker.engine_source(HAZARD) == HAZARD.encode()
    assert [d.code for d in worker.lint_text(latin, "l.py", frozenset({"TCL103"}))] == ["TCL103"]
    assert worker.fix_text(latin, "l.py", frozenset({"TCL103"})) == latin.replace("clone().detach()", "detach().clone()")


def test_an_exception_in_the_engine_becomes_a_diagnostic(monkeypatch):
    import torchcopy_lint.engine as engine

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(engine, "lint_source", broken)  # guard.lint_in_host imports it on each call
    worker._lint.cache_clear()
    (found,) = worker.lint_text(HAZARD, "bug.py", frozenset({"TCL103"}))
    worker._lint.cache_clear()
    assert found.code == "TCL003" and "RuntimeError: a bug" in found.message


def test_a_job_that_kills_or_hangs_the_worker_fails_alone_and_a_new_worker_takes_over():
    import asyncio
    import os
    import time

    import pytest

    async def scenario():
        pool = worker.LintWorker()
        try:
            with pytest.raises(worker.WorkerCrashed):
                await pool.run(os._exit, 3)  # as a segfault in the parser would
            with pytest.raises(worker.WorkerCrashed, match="before"):
                await pool.run(os._exit, 3)  # not run a second time
            with pytest.raises(worker.WorkerTimeout):
                await pool.run(time.sleep, 30, timeout=0.5)
            return await pool.run(worker.lint_text, HAZARD, "a.py", frozenset({"TCL103"}))
        finally:
            pool.close()

    assert [d.code for d in asyncio.run(scenario())] == ["TCL103"]
