"""Pruning (prune.py) must never change a diagnostic: pruned and full parses agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import libcst
import pytest

from torchcopy_lint.parse import prune as prune_module
from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

from _support import ROOT, fixture_inputs


def _agree(source: bytes, path: str) -> int:
    """Pruned and full parses report the same; the pruned text itself is valid Python."""
    active = [r for r in ALL_RULES if r.may_match(source)]
    pruned = prune_module.prune(source, lambda seg: any(r.may_match_segment(seg) for r in active))
    if pruned is not None:
        libcst.parse_module(pruned)  # the engine would silently fall back to a full parse
        cut = prune_module.prune_file(source, lambda seg, node: any(r.may_match_segment(seg) for r in active))
        assert cut is not None
        libcst.parse_module(cut.text)  # with the blanked spans' lines cut out, as the engine parses
        _maps_back(source, cut)
    full = lint_source(source, path, ALL_RULES, prune=False)
    assert lint_source(source, path, ALL_RULES, prune=True) == full, path
    return len(full)


@pytest.fixture
def aggressive(monkeypatch):
    """Prune even tiny files and tiny statements, to exercise every pruning path on the fixtures."""
    monkeypatch.setattr(prune_module, "MIN_FILE_SIZE", 0)
    monkeypatch.setattr(prune_module, "LARGE_NODE", 40)
    monkeypatch.setattr(prune_module, "LARGE_CLASS", 40)


def test_fixtures_agree_when_pruned_aggressively(aggressive):
    paths = fixture_inputs() + sorted((ROOT / "examples").glob("*.py"))
    found = sum(_agree(p.read_bytes(), str(p)) for p in paths)
    assert found > 40


def test_pruning_really_blanks_and_keeps_positions(aggressive):
    source = (b"import torch\n\n\ndef unrelated(a,\n               b):\n    x = [1, 2]\n    return x\n\n\n"
              b"def hazard(t: torch.Tensor):\n    return t.clone().detach()\n")
    pruned = prune_module.prune(source, lambda seg: any(r.may_match_segment(seg) for r in ALL_RULES))
    assert pruned is not None and b"x = [1, 2]" not in pruned
    assert pruned.count(b"\n") == source.count(b"\n")
    assert pruned.splitlines()[10] == source.splitlines()[10]
    [diag] = lint_source(source, "x.py", ALL_RULES)
    assert (diag.line, diag.column, diag.code) == (11, 12, "TCL103")


def _maps_back(source: bytes, pruned: "prune_module.Pruned") -> None:
    """Every line of the pruned text that was not blanked is the original line ``Pruned`` maps it to."""
    original = source.splitlines()
    for number, line in enumerate(pruned.text.splitlines(), 1):
        at = pruned.original_line(number)
        assert not pruned.is_removed(at)
        assert pruned.pruned_line(at) == number
        kept = original[at - 1]
        # each character is the original's in the same column, but for a blanked span's `0` and its padding
        assert all(char in (kept[c:c + 1], b"0", b" ") for c, char in enumerate(line[i:i + 1] for i in range(len(line)))), \
            (number, at, line, kept)


def test_blanked_lines_are_cut_out_and_mapped_back(aggressive):
    source = (b"import torch\n\n\ndef unrelated(a,\n               b):\n    x = [1, 2]\n    y = x\n    return y\n\n\n"
              b"def hazard(t: torch.Tensor):\n    return t.clone().detach()  # noqa: E501\n")
    pruned = prune_module.prune_file(source, lambda seg, node: any(r.may_match_segment(seg) for r in ALL_RULES))
    assert pruned is not None and b"x = [1, 2]" not in pruned.text
    assert pruned.removed == [(7, 8)]  # the body's first line holds `0`; the two after it are gone
    assert pruned.text.count(b"\n") == source.count(b"\n") - 2
    assert pruned.original_line(10) == 12 and pruned.pruned_line(12) == 10 and pruned.is_removed(8)
    _maps_back(source, pruned)
    [diag] = lint_source(source, "x.py", ALL_RULES)
    assert (diag.line, diag.column, diag.code) == (12, 12, "TCL103")


def test_a_blanked_span_keeps_its_last_line_when_code_follows_it(aggressive):
    rows = "".join(f"        ({i},\n         {i + 1},\n         {i + 2}),\n" for i in range(6))
    source = ("import torch\nTABLE = [\n" + rows + "    ]; y = torch.tensor(TABLE).clone().detach()\n").encode()
    pruned = prune_module.prune_file(source, lambda seg, node: any(r.may_match_segment(seg) for r in ALL_RULES))
    assert pruned is not None  # each row's first line holds `0`, its second is cut, its third (`),`: the comma follows the span) is kept
    assert pruned.removed == [(4 + 3 * i, 4 + 3 * i) for i in range(6)], pruned.removed
    assert pruned.text.count(b"\n           ,\n") == 6  # the tuple ends before the comma: its line stays
    libcst.parse_module(pruned.text)
    _maps_back(source, pruned)
    assert _agree(source, "t.py") == len(lint_source(source, "t.py", ALL_RULES, prune=False))


def test_self_attribute_writers_are_kept(aggressive):
    source = (b"import torch\nclass M(torch.nn.Module):\n    def setup(self):\n        self.w = [1.0]\n"
              b"    def __init__(self):\n        self.w = torch.zeros(2)\n"
              b"    def f(self):\n        return torch.tensor(self.w)\n")
    assert _agree(source, "m.py") == 0  # self.w is a list in one method: unknown, silent


TORCH = importlib.util.find_spec("torch")


@pytest.mark.skipif(TORCH is None, reason="torch is not installed: no real-world sources to compare on")
def test_torch_sources_agree():
    """Real code: torch's own nn/ and optim/ give identical diagnostics pruned and unpruned."""
    base = Path(TORCH.submodule_search_locations[0])
    paths = sorted(p for sub in ("nn", "optim", "testing/_internal/distributed") for p in (base / sub).rglob("*.py"))
    assert len(paths) > 100
    for path in paths:
        _agree(path.read_bytes(), str(path))


def test_decorated_first_statement_of_a_stubbed_class(aggressive):
    source = (b"import torch\n\n\nclass Helper:\n    @classmethod\n    def make(cls):\n        return 1\n\n\n"
              b"def hazard(t: torch.Tensor):\n    return t.clone().detach()\n")
    pruned = prune_module.prune(source, lambda seg: any(r.may_match_segment(seg) for r in ALL_RULES))
    assert pruned is not None and b"@classmethod" not in pruned
    libcst.parse_module(pruned)
    assert _agree(source, "x.py") == 1


def test_callers_that_decide_the_autograd_context_are_kept(aggressive):
    """`reset` is graph-free only if every `self.reset()` is: the training step that also calls it has no
    trigger of its own, and stubbing it made `reset` look called from `__init__` alone (TCL119 saying "no graph
    can be live", where the unknown caller leaves it saying the condition). The same happened in transformers'
    modeling_utils.py (`_adjust_bias`)."""
    source = (b"import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
              b"        super().__init__()\n        self.w = nn.Parameter(torch.zeros(2))\n        self.reset()\n\n"
              b"    def reset(self):\n        self.w.data.zero_()\n\n    def step_once(self, x):\n"
              b"        y = (self.w * x).sum()\n        self.reset()\n        return y\n")
    full = lint_source(source, "m.py", ALL_RULES, prune=False)
    assert [d.code for d in full] == ["TCL119"] and "nothing here shows a graph is live" in full[0].message
    assert lint_source(source, "m.py", ALL_RULES, prune=True) == full
    assert _agree(source, "m.py") == 1


def test_a_datasets_getitem_is_kept_for_its_loaders_batches():
    """What a DataLoader yields is read from its Dataset's `__getitem__` (semantic/evaluate.py): stubbing that
    class (no trigger in it) lost the three TCL101 findings on the loader's batches in a file over
    MIN_FILE_SIZE (the fixture is small: it was never pruned)."""
    fixture = (ROOT / "fixtures" / "TCL101" / "dataloader_batches.py").read_bytes()
    source = fixture.replace(b"from torch import from_numpy, tensor\n", b"from torch import from_numpy\n") \
        .replace(b"tensor(inputs)", b"torch.tensor(inputs)")
    source += b"\n" + b"".join(b"def pad%d(a):\n    return [a + %d for _ in range(3)]\n\n\n" % (i, i) for i in range(300))
    assert len(source) > prune_module.MIN_FILE_SIZE
    full = lint_source(source, "d.py", ALL_RULES, prune=False)
    assert [d.code for d in full] == ["TCL101"] * 3
    assert lint_source(source, "d.py", ALL_RULES, prune=True) == full


def test_the_callers_kept_for_the_autograd_context():
    """callers.py: the methods that write `.data`, and (to a fixed point) those that call one on `self`."""
    import ast

    from torchcopy_lint.parse.callers import context_callers

    source = (b"class M:\n    def reset(self):\n        self.w.data.zero_()\n\n    def tie(self):\n        self.reset()\n\n"
              b"    def post_init(self):\n        self.tie()\n\n    def other(self):\n        self.forward(1)\n\n"
              b"def reset_all(m):\n    m.reset()\n")
    pattern = context_callers(ast.parse(source), source)
    assert pattern is not None
    for kept in (b"self.reset()", b"self . tie ()", b"self.post_init()"):
        assert pattern.search(kept), kept
    for dropped in (b"self.forward(1)", b"self.other()", b"m.reset_all()", b"self.resets()"):
        assert not pattern.search(dropped), dropped
    plain = b"class M:\n    def f(self):\n        self.g()\n"
    assert context_callers(ast.parse(plain), plain) is None


def test_the_methods_a_writer_calls_are_kept(aggressive):
    """training_order.py reads the forwards that `self.compute_forward(batch)` runs before the write (speechbrain's
    MetricGAN recipe): pruning blanked `compute_forward` (no trigger of its own), and the finding between its forward
    and the backward was lost in the pruned parse only. callers.py keeps the methods a writer calls on `self`."""
    import ast

    from torchcopy_lint.parse.callers import context_callers

    source = (ROOT / "fixtures" / "TCL104" / "forward_in_own_method.py").read_bytes()
    pattern = context_callers(ast.parse(source), source)
    assert pattern is not None and pattern.search(b"    def compute_forward(self, batch, stage):")
    assert not pattern.search(b"    def on_stage_end(self, stage):")  # no writer calls it
    full = lint_source(source, "train.py", ALL_RULES, prune=False)
    assert [d.line for d in full if d.code == "TCL104"] == [25, 26, 38]
    assert lint_source(source, "train.py", ALL_RULES, prune=True) == full


def test_a_function_annotated_tensor_is_kept_only_where_it_may_be_called():
    """A `-> Tensor` function whose returns contradict its annotation makes its callers' values UNKNOWN
    (semantic/classes.py returns): pruning keeps such a function whole where the file names it elsewhere
    (`sizes`, called below), and stubs it where no other statement holds its name as a name or an attribute
    (`unused_*`; a string is not a call)."""
    from torchcopy_lint.plan import structure

    source = (b"import torch\n__all__ = ['unused_3']  # a string names it, no code calls it\n\n"
              b"def sizes(n: int) -> torch.Tensor:\n    out = []\n    out.append(n)\n    return out\n\n\n"
              b"def use(n):\n    return torch.tensor(sizes(n))\n\n\n"
              + b"".join(b"def unused_%d(a) -> torch.Tensor:\n    b = a + 1\n    return [b] * %d\n\n\n" % (i, i)
                         for i in range(300)))
    assert len(source) > prune_module.MIN_FILE_SIZE
    full = lint_source(source, "s.py", ALL_RULES, prune=False)
    assert full == [] and lint_source(source, "s.py", ALL_RULES, prune=True) == full  # `sizes` kept: no TCL101
    plan = structure.plan(__import__("ast").parse(source), source, ["TCL101"])
    from torchcopy_lint.rulepass.parsing import _segment_matcher
    from torchcopy_lint.rules import RULES_BY_CODE
    pruned = prune_module.prune_file(source, _segment_matcher([RULES_BY_CODE["TCL101"]], plan), plan.tree)
    assert pruned is not None and b"out.append(n)" in pruned.text and b"b = a + 1" not in pruned.text


def test_a_fix_over_a_blanked_table_is_built_from_the_whole_file():
    """`torch.tensor([<a big table>]).half()` (TCL116): pruning blanks the table's rows, which the fix's
    target holds; the fix must print the rows, not the blanks (the file is parsed whole for it)."""
    rows = ",\n".join(f"    [{i}.0, {i + 1}.0,\n     {i + 2}.0]" for i in range(1500))
    source = f"import torch\n\ndevice = 'cuda'\nTABLE = torch.tensor([\n{rows}\n]).half()\n".encode()
    pruned = prune_module.prune_file(source, lambda seg, node: any(r.may_match_segment(seg) for r in ALL_RULES))
    assert pruned is not None and pruned.blanked and pruned.reaches_blanked(4, 3004)
    assert not pruned.reaches_blanked(1, 3) and not pruned.reaches_blanked(3005, 3005)
    [diag] = lint_source(source, "t.py", ALL_RULES)
    assert diag.code == "TCL116" and diag.fix is not None
    assert [diag] == lint_source(source, "t.py", ALL_RULES, prune=False)
    assert "[1499.0, 1500.0,\n     1501.0]" in diag.fix.content and "\n    0\n" not in diag.fix.content
