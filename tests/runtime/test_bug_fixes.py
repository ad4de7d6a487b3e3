"""Unsafe fixes that change behaviour on purpose: each ``# oracle: bug-fix`` fixture and its variant differ in
exactly the declared ways (the bug is gone) and in nothing else (see fixtures/README.md)."""

from pathlib import Path

import pytest

from torchcopy_lint.verify.oracle import BUG_FIX_MARKER, discover, undeclared_changes

pytest.importorskip("torch", reason="the bug-fix oracle runs fixtures on real torch")

pytestmark = pytest.mark.runtime

FIXTURES_ROOT = Path(__file__).resolve().parents[2] / "fixtures"
CASES = discover(FIXTURES_ROOT, BUG_FIX_MARKER)


def test_bug_fix_fixtures_exist():
    assert CASES, f"no '{BUG_FIX_MARKER}' fixture under {FIXTURES_ROOT}"


@pytest.mark.parametrize(
    ("case", "mode"),
    [pytest.param(case, mode, id=f"{case.name}.{mode}") for case in CASES for mode in case.variants],
)
def test_fix_changes_exactly_what_it_declares(case, mode, device):
    problems = undeclared_changes(case, device, mode)
    assert not problems, "\n".join(problems)


def test_undeclared_difference_is_caught(tmp_path):
    folder = tmp_path / "TCL108"
    folder.mkdir()
    header = f"{BUG_FIX_MARKER}\n# changes: copy and source: shared storage\nimport copy\nimport torch\n"
    (folder / "case.py").write_text(header + "source = torch.arange(3.0, device=DEVICE)\ncopy = source\n")
    (folder / "case.unsafe.py").write_text(header + "source = torch.arange(3.0, device=DEVICE)\ncopy = -source\n")
    (case,) = discover(tmp_path, BUG_FIX_MARKER)
    problems = undeclared_changes(case, "cpu", "unsafe")
    assert any(p.startswith("undeclared: copy: values") for p in problems), problems
