"""Fix-equivalence oracle: each runnable fixture and its fixed variants leave identical tensors.

Discovers every ``fixtures/TCL*/<case>.py`` whose first line is ``# oracle: runnable`` and runs
it next to its ``.fixed.py`` / ``.unsafe.py`` on each device (see fixtures/README.md).
"""

from pathlib import Path

import pytest

from torchcopy_lint.verify.oracle import check_case, discover

pytest.importorskip("torch", reason="the fix-equivalence oracle runs fixtures on real torch")

pytestmark = pytest.mark.runtime

FIXTURES_ROOT = Path(__file__).resolve().parents[2] / "fixtures"
CASES = discover(FIXTURES_ROOT)


def test_runnable_fixtures_exist():
    assert CASES, f"no '# oracle: runnable' fixture under {FIXTURES_ROOT}"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_runnable_fixture_has_a_variant(case):
    assert case.variants, f"{case.name} is runnable but has no .fixed.py or .unsafe.py to compare"


@pytest.mark.parametrize(
    ("case", "mode"),
    [pytest.param(case, mode, id=f"{case.name}.{mode}") for case in CASES for mode in case.variants],
)
def test_fix_is_equivalent(case, mode, device):
    problems = check_case(case, device, mode)
    assert not problems, "\n".join(problems)
