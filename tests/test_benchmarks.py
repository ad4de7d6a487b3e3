"""The benchmark scripts start (their imports of the shared helpers resolve) and share one latency file.

Timing itself is not tested here (see benchmarks/README.md); this catches a script left behind by a
change to _common.py / _setup.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from _support import ROOT

BENCH = ROOT / "benchmarks"
SCRIPTS = ["bench.py", "speed.py", "floors.py", "torchfix_compare.py", "identical.py", "flake8_latency.py"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_help(script):
    result = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--repeats" in result.stdout and "--json-out" in result.stdout


def test_bench_keeps_the_options_of_every_part():
    result = subprocess.run([sys.executable, str(BENCH / "bench.py"), "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    for option in ("--corpus", "--skip-linter", "--skip-floors", "--skip-torchfix", "--skip-ruff",
                   "--skip-identical-check", "--flake8-latency-only", "--ruff-version", "--torchfix-timeout"):
        assert option in result.stdout, option


def test_latency_file_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    from _latency_file import make_latency_file

    first = make_latency_file(tmp_path).read_text()
    (tmp_path / "again").mkdir()
    assert make_latency_file(tmp_path / "again").read_text() == first
    assert first.count("\n") == 1000 and first.count(".clone().detach()") > 10


def test_libcst_share_reports_what_reaches_libcst():
    result = subprocess.run([sys.executable, str(BENCH / "libcst_share.py"), str(ROOT / "fixtures" / "TCL103")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "reach LibCST" in result.stdout and "TCL103:" in result.stdout


def test_plan_keepers_names_the_kept_call_sites():
    """On fixtures/TCL108: the near misses the plan keeps are listed with a reason, and counted."""
    result = subprocess.run([sys.executable, str(BENCH / "plan_keepers.py"), str(ROOT / "fixtures" / "TCL108"),
                             "--select", "TCL108"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "TCL108:" in result.stdout and "pass the plan with no finding" in result.stdout
    listed = [line for line in result.stdout.splitlines() if " TCL108 " in line and "copy" in line]
    assert listed and all(" -- " in line for line in listed)
