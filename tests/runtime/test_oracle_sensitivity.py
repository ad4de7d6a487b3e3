"""The oracle itself: it must catch every kind of non-equivalent fix, or its passes mean nothing."""

import textwrap

import pytest

from torchcopy_lint.verify.oracle import check_case, discover

pytest.importorskip("torch", reason="the fix-equivalence oracle runs fixtures on real torch")

pytestmark = pytest.mark.runtime

HEADER = "# oracle: runnable\nimport torch\n\nsource = torch.randn(3, 4, device=DEVICE, requires_grad=True)\n"


def _problems(tmp_path, original_body, fixed_body, expected="1:1: TCL000\n"):
    """Write a one-case fixture tree, run the oracle on CPU and return what it reports."""
    folder = tmp_path / "TCL101"
    folder.mkdir()
    (folder / "case.py").write_text(HEADER + textwrap.dedent(original_body))
    (folder / "case.fixed.py").write_text(HEADER + textwrap.dedent(fixed_body))
    (folder / "case.expected").write_text(expected)
    (case,) = discover(tmp_path)
    return check_case(case, "cpu")


@pytest.mark.parametrize(
    ("original", "fixed", "reported"),
    [
        pytest.param("copy = source.detach().clone()\n", "copy = source.detach()\n",
                     "copy and source: separate storage in the original, shared in the variant", id="aliasing"),
        pytest.param("copy = source.detach().clone()\n", "copy = source.clone()\n",
                     "requires_grad", id="requires-grad"),
        pytest.param("copy = source.detach().t().clone()\n", "copy = source.detach().t().contiguous().clone()\n",
                     "stride", id="strides"),
        pytest.param("copy = source.new_zeros(2, dtype=torch.int64).new_tensor(source[0, :2])\n",
                     "copy = source[0, :2].detach().clone()\n",  # the myth: new_tensor == clone().detach()
                     "dtype", id="dtype"),
        pytest.param("zero = torch.zeros(1, device=DEVICE)\n", "zero = -torch.zeros(1, device=DEVICE)\n",
                     "values", id="negative-zero"),
        pytest.param("copy = source.detach().clone()\n", "renamed = source.detach().clone()\n", "tensor names differ",
                     id="names"),
    ],
)
def test_detects_non_equivalent_variant(tmp_path, original, fixed, reported):
    problems = _problems(tmp_path, original, fixed)
    assert any(reported in p for p in problems), problems


def test_accepts_an_equivalent_variant(tmp_path):
    problems = _problems(tmp_path, "copy = torch.tensor(source)\n", "copy = source.detach().clone()\n",
                         expected="5:8: TCL101\n")
    assert problems == []


def test_requires_the_variant_to_stop_warning(tmp_path):
    body = "copy = torch.tensor(source)\n"
    problems = _problems(tmp_path, body, body, expected="5:8: TCL101\n")
    assert any("still emits the copy-construct warning on lines [5]" in p for p in problems), problems


def test_cross_checks_expected_lines_against_torch_warnings(tmp_path):
    problems = _problems(tmp_path, "copy = torch.tensor(source)\n", "copy = source.detach().clone()\n",
                         expected="4:10: TCL101\n")
    assert any("warnings on lines [5], but .expected flags TCL101/TCL102 on lines [4]" in p for p in problems), problems


def test_refuses_a_vacuous_fixture(tmp_path):
    folder = tmp_path / "TCL103"
    folder.mkdir()
    (folder / "case.py").write_text("# oracle: runnable\nvalue = 1\n")
    (folder / "case.fixed.py").write_text("# oracle: runnable\nvalue = 1\n")
    (case,) = discover(tmp_path)
    assert any("leaves no module-level tensor" in p for p in check_case(case, "cpu"))


def test_skips_fixtures_without_the_marker_and_variant_files(tmp_path):
    folder = tmp_path / "TCL101"
    folder.mkdir()
    (folder / "plain.py").write_text("import torch\n")
    (folder / "run.py").write_text("# oracle: runnable\n")
    (folder / "run.fixed.py").write_text("# oracle: runnable\n")
    (folder / "run.unsafe.py").write_text("# oracle: runnable\n")
    (case,) = discover(tmp_path)
    assert case.original.name == "run.py"
    assert sorted(case.variants) == ["fixed", "unsafe"]
