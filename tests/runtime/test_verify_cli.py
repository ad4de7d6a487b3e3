"""``torchcopy_lint.verify.main``: the report behind ``torchcopy-lint verify``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchcopy_lint import verify
from torchcopy_lint.verify import claims as claims_module
from torchcopy_lint.verify.core import Claim, available_devices

ROOT = Path(__file__).resolve().parents[2]

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
        assert "skipped (CUDA not available)" in out


def test_json_report_lists_every_claim_on_every_device(capsys):
    assert verify.main(["--json", "--rule", "TCL103"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["torch"] == torch.__version__
    tcl103 = [c for c in claims_module.CLAIMS if c.rule == "TCL103"]
    assert len(report["results"]) == 2 * len(tcl103)
    assert {r["status"] for r in report["results"]} <= {"holds", "skipped", "not_applicable"}


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


def _without_numpy(tmp_path) -> dict:
    """An environment whose Python cannot import numpy (torch still can be imported)."""
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['numpy'] = None\n")
    path = os.pathsep.join(p for p in (str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_without_numpy_the_numpy_claims_are_skipped_not_failed(tmp_path):
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "verify", "--rule", "TCL113"],
                            capture_output=True, text=True, env=_without_numpy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DOES NOT HOLD" not in result.stdout
    here = set(available_devices())
    numpy_checks = [(c, d) for c in claims_module.CLAIMS if c.rule == "TCL113" and "numpy" in c.requires
                    for d in c.devices if d in here]
    assert numpy_checks
    rows = {line.split("|")[1].strip(): line for line in result.stdout.splitlines() if line.startswith("TCL113 ")}
    for claim, _ in numpy_checks:
        assert "skipped (numpy not installed)" in rows[claim.id], rows[claim.id]
    assert f"numpy not installed: {len(numpy_checks)}" in result.stdout
    assert "0 do not hold" in result.stdout


def _raises_import_error(device):
    raise ModuleNotFoundError("No module named 'numpy'")


def test_a_claim_that_fails_still_fails_beside_skipped_ones(monkeypatch, capsys):
    """Only a declared prerequisite skips a claim: an undeclared import error or a false statement fails."""
    monkeypatch.setitem(sys.modules, "numpy", None)
    fakes = [
        Claim("TCL113-fake-declared", "TCL113", "needs numpy, declared", _raises_import_error, ("cpu",),
              frozenset({"hazard"}), ("numpy",)),
        Claim("TCL113-fake-undeclared", "TCL113", "needs numpy, undeclared", _raises_import_error, ("cpu",),
              frozenset({"hazard"})),
        Claim("TCL104-fake", "TCL104", "a deliberately false claim", _broken, ("cpu",), frozenset({"hazard"})),
    ]
    monkeypatch.setattr(claims_module, "CLAIMS", fakes)
    assert verify.main([]) == 1
    out = capsys.readouterr().out
    assert "TCL113-fake-declared on" not in out
    assert "TCL113-fake-undeclared on cpu DOES NOT HOLD: check raised ModuleNotFoundError" in out
    assert "TCL104-fake on cpu DOES NOT HOLD: expected [2, 4, 6], got [4, 6, 8]" in out
    assert "0 hold, 2 do not hold, 1 skipped (numpy not installed: 1)" in out


def test_a_false_claim_that_declares_numpy_fails_where_numpy_is_installed(monkeypatch, capsys):
    pytest.importorskip("numpy", reason="the claim must run")
    fake = Claim("TCL113-fake", "TCL113", "a deliberately false claim", _broken, ("cpu",), frozenset({"hazard"}),
                 ("numpy",))
    monkeypatch.setattr(claims_module, "CLAIMS", [fake])
    assert verify.main(["--json"]) == 1
    (result,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["device"] == "cpu"]
    assert (result["status"], result["requires"]) == ("fails", ["numpy"])
