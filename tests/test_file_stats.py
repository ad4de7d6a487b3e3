"""The stat records of a warm run (run/filestats.py): a file whose stat is as recorded is not read, and
anything that may have changed the content (an edit, even with the mtime set back, a replaced file) is read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Tuple

import pytest

from torchcopy_lint.run import filestats, runner
from torchcopy_lint.settings.config import Settings

FLAGGED = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"
CLEAN = FLAGGED.replace(b"x.clone().detach()", b"x.detach().clone()")  # the same size, nothing to report


@pytest.fixture
def counted(monkeypatch) -> List[str]:
    """The paths the run's parent reads."""
    reads: List[str] = []
    real = runner.read_source

    def read_source(path, info=None):
        reads.append(path)
        return real(path, info)

    monkeypatch.setattr(runner, "read_source", read_source)
    return reads


@pytest.fixture
def linted(monkeypatch) -> List[str]:
    """The paths the run hands to a worker (not answered by the cache)."""
    jobs: List[str] = []
    real = runner._lint_isolated

    def lint_isolated(pending, *args):
        taken = list(pending)
        jobs.extend(job.path for job in taken)
        return real(taken, *args)

    monkeypatch.setattr(runner, "_lint_isolated", lint_isolated)
    return jobs


def lint(path: Path, cache: Path) -> List[Tuple[str, int]]:
    return [(d.code, d.line) for d in runner.run([str(path)], Settings(), cache_dir=str(cache), jobs=1).diagnostics]


def old(path: Path, seconds: int = 100) -> int:
    """Set the file's mtime ``seconds`` back; its new mtime (ns)."""
    mtime = path.stat().st_mtime_ns - seconds * 1_000_000_000
    os.utime(path, ns=(mtime, mtime))
    return mtime


def records(cache: Path) -> dict:
    (found,) = cache.rglob("files.json")
    return json.loads(found.read_text())


@pytest.fixture
def settled(monkeypatch):
    """Files as if written long before the run (their ctime, which nothing sets back, is just now)."""
    monkeypatch.setattr(filestats, "RACY_NS", 0)


def test_an_unchanged_file_is_answered_without_reading_it(tmp_path, counted, linted, settled):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    cold = lint(path, tmp_path / "cache")
    assert cold == [("TCL103", 3)] and counted == [str(path)] and linted == [str(path)]
    counted.clear(), linted.clear()
    assert lint(path, tmp_path / "cache") == cold and counted == [] and linted == []


def test_a_touched_but_unchanged_file_is_read_and_still_answered_by_the_cache(tmp_path, counted, linted, settled):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    cold = lint(path, tmp_path / "cache")
    os.utime(path)
    counted.clear(), linted.clear()
    assert lint(path, tmp_path / "cache") == cold and counted == [str(path)] and linted == []


def test_an_edit_within_the_racy_window_is_read_though_size_and_mtime_are_as_before(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    mtime = path.stat().st_mtime_ns
    assert lint(path, tmp_path / "cache") == [("TCL103", 3)]
    assert not list((tmp_path / "cache").rglob("files.json"))  # written just now: not trusted, not recorded
    path.write_bytes(CLEAN)
    os.utime(path, ns=(mtime, mtime))
    counted.clear()
    assert lint(path, tmp_path / "cache") == [] and counted == [str(path)]


def test_a_record_is_kept_only_for_a_file_older_than_the_racy_window(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    stats = filestats.FileStats(str(tmp_path / "cache"))
    stats.record(str(tmp_path), "a.py", path.stat(), "0" * 32)
    assert stats.new == {}
    stats.trusted_before += 2 * filestats.RACY_NS  # as a run started two seconds later sees it
    stats.record(str(tmp_path), "a.py", path.stat(), "0" * 32)
    assert filestats.FileStats.digest(stats.new[str(tmp_path)], "a.py", path.stat()) == "0" * 32


def test_an_edit_with_the_old_size_and_mtime_is_read(tmp_path, counted, settled):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    mtime = old(path)
    assert lint(path, tmp_path / "cache") == [("TCL103", 3)]
    assert records(tmp_path / "cache")[str(tmp_path)]["a.py"][1] == mtime
    path.write_bytes(CLEAN)  # the ctime moves; nothing sets it back
    os.utime(path, ns=(mtime, mtime))
    counted.clear()
    assert lint(path, tmp_path / "cache") == [] and counted == [str(path)]


def test_a_file_replaced_by_another_is_read(tmp_path, counted, settled):
    path = tmp_path / "a.py"
    path.write_bytes(CLEAN)
    mtime = old(path)
    assert lint(path, tmp_path / "cache") == []
    other = tmp_path / "other.py"
    other.write_bytes(FLAGGED)
    os.utime(other, ns=(mtime, mtime))
    os.replace(other, path)
    counted.clear()
    assert lint(path, tmp_path / "cache") == [("TCL103", 3)] and counted == [str(path)]


@pytest.mark.parametrize("stored", ["{not json", "[1, 2]", '{"%s": [1]}', '{"%s": {"a.py": [1, 2, "x"]}}',
                                    '{"%s": {"a.py": "0123"}}'])
def test_a_corrupt_stats_file_is_ignored(tmp_path, counted, settled, stored):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    cold = lint(path, tmp_path / "cache")
    (found,) = (tmp_path / "cache").rglob("files.json")
    found.write_text(stored.replace("%s", str(tmp_path)) if "%s" in stored else stored)
    counted.clear()
    assert lint(path, tmp_path / "cache") == cold and counted == [str(path)]
    assert records(tmp_path / "cache")[str(tmp_path)]["a.py"][:2] == [len(FLAGGED), path.stat().st_mtime_ns]


def test_a_record_that_matches_another_stat_gives_no_digest(tmp_path, settled):
    path = tmp_path / "a.py"
    path.write_bytes(FLAGGED)
    info = path.stat()
    record = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, "0" * 32]
    assert filestats.FileStats.digest({"a.py": record}, "a.py", info) == "0" * 32
    for position in range(4):
        changed = list(record)
        changed[position] += 1
        assert filestats.FileStats.digest({"a.py": changed}, "a.py", info) is None


def test_a_used_module_edited_with_its_old_size_and_mtime_is_read(tmp_path, settled):
    """The modules a cached result consulted are known by their records too, and read once they may differ."""
    from test_project_index import PROJECT, write_tree

    det = write_tree(tmp_path / "det", PROJECT)
    common = det / "models" / "common.py"
    mtime = old(common)

    def codes():
        return [(d.path.split(os.sep)[-1], d.code) for d in runner.run([str(det)], Settings(), cache_dir=str(
            tmp_path / "cache"), jobs=1).diagnostics]

    assert ("train.py", "TCL105") in codes()
    assert ("train.py", "TCL105") in codes()  # warm: models/common.py, which it used, known by its record
    assert str(common.parent) in records(tmp_path / "cache")
    edited = common.read_text().replace("class BaseModel(nn.Module)", "class BaseModel(object)   ")
    assert len(edited) == len(common.read_text())
    common.write_text(edited)
    os.utime(common, ns=(mtime, mtime))
    assert ("train.py", "TCL105") not in codes()
