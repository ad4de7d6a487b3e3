"""``torchcopy_lint.verify.main``: the report behind ``torchcopy-lint verify``."""

import json
import subprocess
import sys

import pytest

from torchcopy_lint import verify
from torchcopy_lint.verify import claims as claims_module
from torchcopy_lint.verify.core import Claim

torch = pytest.importorskip("torch", reason="torchcopy-lint verify needs torch")

pytestmark = pytest.mark.runtime


def _broken(device):
    raise AssertionError("expected [2, 4, 6], got [4, 6, 8]")


def test_all_claims_hold_on_this_torch(capsys):
    assert verify.main([]) == 0
    out = capsys.readouterr().out
    assert f"torch {torch.__version__}" in out
    header = out.splitlines()[2]
    assert [cell.strip() for cell in header.split("|")] == ["rule", "claim", "cpu", "cuda", "statement"]
    assert "DOES NOT HOLD" not in out
    if not torch.cuda.is_available():
        assert "skipped (no CUDA)" in out


def test_json_report_lists_every_claim_on_every_device(capsys):
    assert verify.main(["--json", "--rule", "TCL103"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["torch"] == torch.__version__
    tcl103 = [c for c in claims_module.CLAIMS if c.rule == "TCL103"]
    assert len(report["results"]) == 2 * len(tcl103)
    assert {r["status"] for r in report["results"]} <= {"holds", "no_device", "not_applicable"}


def test_a_claim_that_does_not_hold_fails_the_run(monkeypatch, capsys):
    fake = Claim("TCL104-fake", "TCL104", "a deliberately broken claim", _broken, ("cpu",), frozenset({"hazard"}))
    monkeypatch.setattr(claims_module, "CLAIMS", [*claims_module.CLAIMS, fake])
    assert verify.main(["--claim", "TCL104-fake"]) == 1
    out = capsys.readouterr().out
    assert "DOES NOT HOLD" in out
    assert "expected [2, 4, 6], got [4, 6, 8]" in out


def test_without_torch_it_explains_and_exits_2():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # makes `import torch` raise ImportError
        "from torchcopy_lint.verify import main; sys.exit(main([]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2
    assert "needs torch" in result.stderr


def test_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "torchcopy_lint.verify", "--claim", "TCL101-warns"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "TCL101-warns" in result.stdout
