"""The structural prefilter (structure.py) never changes a diagnostic or a fix: linting with it and
without it agrees, on the fixtures, on real files of the corpus and torch, and on big literals."""

from __future__ import annotations

import ast
import importlib.util
import os
import zlib
from pathlib import Path

import pytest

from torchcopy_lint.parse import prune as prune_module
from torchcopy_lint.plan import structure
from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

from _support import ROOT, fixture_inputs

TORCH = importlib.util.find_spec("torch")
CORPUS = Path(os.environ.get("TORCHCOPY_CORPUS") or Path.home() / ".cache" / "torchcopy-lint" / "corpus")


def _agree(source: bytes, path: str) -> int:
    """With and without the structural prefilter (pruned, as the CLI lints, and unpruned, as the
    editor does): the same diagnostics, fixes included."""
    reference = lint_source(source, path, ALL_RULES, prune=False, structural=False)
    assert lint_source(source, path, ALL_RULES, prune=True) == reference, path
    assert lint_source(source, path, ALL_RULES, prune=False) == reference, path
    return len(reference)


@pytest.fixture
def aggressive(monkeypatch):
    """Drop every inert statement that may be dropped, however small, and prune small files."""
    monkeypatch.setattr(structure, "DROP_MIN", 0)
    monkeypatch.setattr(prune_module, "MIN_FILE_SIZE", 0)
    monkeypatch.setattr(prune_module, "LARGE_CLASS", 40)


def test_fixtures_agree(aggressive):
    paths = fixture_inputs() + sorted((ROOT / "examples").glob("*.py"))
    assert sum(_agree(p.read_bytes(), str(p)) for p in paths) > 40


def test_rule_examples_agree(aggressive):
    """Each rule's INVALID examples: the plan keeps the rule, and linting with and without the prefilter agrees
    (the corpus holds no TCL112-TCL115 finding yet: their shapes are checked here and by the fixtures)."""
    codes = [r.code for r in ALL_RULES]
    for rule in ALL_RULES:
        for example in rule.INVALID:
            source = example.encode()
            assert rule.code in _plan(source, codes).codes, (rule.code, example)
            assert _agree(source, f"{rule.code}.py") > 0, (rule.code, example)
        for example in rule.VALID:
            _agree(example.encode(), f"{rule.code}.py")


def _sample(paths, share: int):
    """A fixed sample: the files whose path hashes to 0 modulo ``share``."""
    return [p for p in paths if zlib.crc32(str(p.relative_to(CORPUS)).encode()) % share == 0]


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present under {CORPUS}: run benchmarks/corpus.py")
def test_corpus_sample_agrees(aggressive):
    """Real code: a fixed sample of the corpus (benchmarks/structure_check.py compares all of it)."""
    paths = _sample(sorted(CORPUS.rglob("*.py")), 30)
    assert len(paths) > 250
    found = sum(_agree(p.read_bytes(), str(p)) for p in paths)
    assert found > 0


@pytest.mark.skipif(TORCH is None, reason="torch is not installed: no real-world sources to compare on")
def test_torch_optim_agrees(aggressive):
    base = Path(TORCH.submodule_search_locations[0])
    paths = sorted((base / "optim").rglob("*.py"))
    assert len(paths) > 20
    for path in paths:
        _agree(path.read_bytes(), str(path))


HEAD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x)\n"


def _plan(source: bytes, codes=("TCL101", "TCL103", "TCL104", "TCL110")):
    return structure.plan(ast.parse(source), source, codes)


def test_a_big_literal_never_reaches_libcst_and_positions_hold():
    table = b"T = [\n" + b"    i,\n" * 5000 + b"]\n"
    source = HEAD + table + b"z = x.clone().detach()\n"
    plan = _plan(source)
    assert plan.dropped == {3} and plan.codes == {"TCL101", "TCL103"}
    pruned = prune_module.prune_file(source, None, ast.parse(source), plan.dropped)
    assert pruned is not None and b"i," not in pruned.text
    assert pruned.original_line(4) == 5006 and pruned.pruned_line(5006) == 4 and pruned.original_line(3) == 3
    found = lint_source(source, "t.py", ALL_RULES)
    assert [(d.line, d.column, d.code) for d in found] == [(3, 5, "TCL101"), (5006, 5, "TCL103")]
    assert _agree(source, "t.py") == 2


def test_what_other_statements_read_is_kept():
    table = b"[\n" + b"    1.5,\n" * 400 + b"]\n"
    used = HEAD + b"T = " + table + b"w = torch.tensor(T)\n"  # the model reads what T holds
    assert _plan(used).dropped == frozenset()
    rebound = HEAD + b"y = " + table  # dropping it would leave y a tensor below
    assert _plan(rebound + b"z = y.clone().detach()\n").dropped == frozenset()
    called = HEAD + b"T = " + table.replace(b"1.5", b"f(1)")  # a call: side effects
    assert _plan(called).dropped == frozenset()
    assert _plan(HEAD + b"T = " + table).dropped == {3}


def test_a_statement_a_rule_can_fire_in_is_kept():
    table = b"T = p.data = [\n" + b"    1.5,\n" * 400 + b"]\n"  # TCL104 reports rebinding .data
    assert _plan(HEAD + table, ("TCL101", "TCL104")).dropped == frozenset()
    assert _plan(HEAD + table, ("TCL101",)).dropped == {3}


def test_a_rule_without_needs_is_conservative(monkeypatch):
    """A rule that declares no structural needs (a new one) stays active and keeps every statement."""
    monkeypatch.delitem(structure.NEEDS, "TCL103")
    source = HEAD + b"T = [\n" + b"    i,\n" * 500 + b"]\n"
    plan = _plan(source)
    assert "TCL103" in plan.codes and plan.dropped == frozenset()


def test_files_no_rule_can_fire_in():
    """Trigger words in comments and strings, or the wrong call shape: no rule can fire."""
    words = b'"""Call .clone().detach() on a tensor, not torch.tensor(x)."""\nimport copy\n# p.data.add_(1)\n' \
            b"def f(detach, clone):\n    return detach, clone\ncopy.deepcopy\n"
    declared = [r for r in ALL_RULES if r.code in structure.NEEDS]  # a rule without NEEDS is always active
    assert len(declared) >= 10
    assert _plan(words, [r.code for r in declared]).codes == frozenset()
    assert lint_source(words, "w.py", declared) == []


def test_import_aliases_resolve():
    assert _plan(b"from torch import tensor as T\ny = T(x)\n", ["TCL101"]).codes == {"TCL101"}
    assert _plan(b"from copy import deepcopy as dc\nfor x in data:\n    m2 = dc(m)\n", ["TCL105"]).codes == {"TCL105"}
    assert _plan(b"from copy import deepcopy as dc\nm2 = dc(m)\n", ["TCL105"]).codes == frozenset()  # in no loop
    assert _plan(b"y = T(x)\n", ["TCL101"]).codes == frozenset()


def test_call_shapes():
    codes = [r.code for r in ALL_RULES if r.code <= "TCL110"]  # the shapes of TCL101-TCL110 (below: the others)
    assert _plan(b"import torch\ny = torch.tensor([1, 2])\nz = torch.tensor(data=3)\n", codes).codes == frozenset()
    assert _plan(b"import torch\ny = torch.tensor(data=t)\n", codes).codes == {"TCL101", "TCL107"}
    assert _plan(b"import torch\ny = torch.as_tensor([a, b])\n", codes).codes == {"TCL107"}
    # the rules read the first argument only, and none that is `*args`/`**kwargs` (arguments.first_argument)
    assert _plan(b"import torch\ny = torch.tensor(*args)\n", codes).codes == frozenset()
    assert _plan(b"import torch\ny = torch.tensor(**kw)\n", codes).codes == frozenset()
    assert _plan(b"import torch\ny = torch.tensor(t, **kw)\n", codes).codes == {"TCL101", "TCL107"}
    assert _plan(b"y = x.clone()\nz = y.detach()\n", codes).codes == frozenset()
    assert _plan(b"from torch import clone as c\nz = c(y).detach()\n", codes).codes == {"TCL103"}
    assert _plan(b"a = p.data\nb = p.data.sum()\nd = dict.copy()\n", codes).codes == frozenset()
    for write in (b"p.data.add_(1)", b"p.data = t", b"p.data[0] += 1", b"init.zeros_(p.data)"):
        assert _plan(write + b"\n", codes).codes == {"TCL104"}, write
    assert _plan(b"import copy as c\nu = c.copy(t)\n", codes).codes == {"TCL108"}


def test_accumulation_needs_backward():
    source = b"for x in data:\n    loss = model(x)\n    total += loss\n"
    assert _plan(source, ["TCL110"]).codes == frozenset()
    assert _plan(source + b"    loss.backward()\n", ["TCL110"]).codes == {"TCL110"}


def test_remembered_shapes_agree_with_fresh_ones(aggressive):
    """The editor's plans re-use the shapes of statements seen before (by text): the same answers."""
    sources = [p.read_bytes() for p in fixture_inputs()[:80]]
    sources.append(b"import torch\nt = torch.randn(2); y = torch.tensor(t)\n@d(x.clone().detach())\ndef f(): pass\n"
                   + b"T = [\n" + b"    i,\n" * 30 + b"]\n")
    codes = [r.code for r in ALL_RULES]
    for source in sources + sources:  # the second round from what the first remembered
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        fresh, remembered = structure.plan(tree, source, codes), structure.plan(tree, source, codes, remember=True)
        assert (remembered.codes, remembered.dropped, remembered.aliases) == (fresh.codes, fresh.dropped, fresh.aliases)
        assert {k: v[1].tokens for k, v in remembered.shapes.items()} == {k: v[1].tokens for k, v in fresh.shapes.items()}


def test_shapes_of_the_aliasing_and_conversion_rules():
    codes = [r.code for r in ALL_RULES]
    assert _plan(b"y = x + 1\nprint(y)\n", codes).codes == frozenset()
    assert _plan(b"x.to(d)\n", codes).codes == {"TCL111"}
    assert _plan(b"y = x.to(d)\nx.to(d).add_(1)\n", codes).codes == frozenset()  # not a statement of a conversion
    assert _plan(b"xs = [t] * 3\n", codes).codes == frozenset()  # no element written in place: no hazard
    for made in (b"xs = [t] * 3\n", b"xs = 3 * [t]\n"):
        for write in (b"xs[0].add_(1)\n", b"xs[0][1] = 2\n", b"xs[1] += 1\n"):
            assert _plan(made + write, codes).codes == {"TCL112"}, made + write
        assert _plan(made + b"ys[0].add_(1)\n", codes).codes == frozenset()  # another list written
    for constant in (b"xs = [0] * 3\n", b"xs = [None] * 3\n", b"xs = [1, 2] + [t]\n", b"xs = [a, b] * 2\n"):
        assert _plan(constant + b"xs[0] += 1\n", codes).codes == frozenset(), constant
    assert "TCL113" in _plan(b"from torch import from_numpy as f\nt = f(a)\nt.add_(1)\n", codes).codes
    assert "TCL113" in _plan(b"import torch\nt = torch.from_numpy(a)\na[0] = 1\n", codes).codes
    assert "TCL113" in _plan(b"a = t.detach().numpy()\na += 1\n", codes).codes
    assert "TCL113" in _plan(b"import torch\nt = torch.FloatTensor(a)\na[0] = 1\n", codes).codes  # legacy
    assert "TCL113" not in _plan(b"import torch\nt = torch.FloatTensor(a)\nb[0] = 1\n", codes).codes
    assert "TCL113" not in _plan(b"from torch import from_numpy as f\nt = f(a)\nprint(t)\n", codes).codes
    assert "TCL113" not in _plan(b"import torch\nt = torch.from_numpy(a)\nb[0] = 1\n", codes).codes
    assert _plan(b"y = x.detach()\nprint(y)\n", codes).codes == frozenset()
    for alias in (b"y = x.detach()\n", b"y = x.data\n", b"y = x.detach().view(-1)\n", b"y = x.data[0]\n"):
        for write in (b"y.zero_()\n", b"y[0] = 1\n", b"y += 1\n", b"torch.add(a, b, out=y)\n"):
            assert _plan(alias + write, codes).codes == {"TCL115"}, alias + write
        assert _plan(alias + b"z.zero_()\n", codes).codes == frozenset(), alias
    assert "TCL115" not in _plan(b"y = x.detach()\ny.requires_grad_()\n", codes).codes
    # TCL114: a store with intent, and a write of the kept storage by its name (or a step), anywhere in the file
    for store, key in ((b"best = w\n", b"w"), (b"old = p.data\n", b"p"), (b"w_init = self.w.detach()\n", b"self.w"),
                       (b"hist.append(x[0])\n", b"x"), (b"self.loss_log.append(x)\n", b"x"), (b"records[k] = x\n", b"x"),
                       (b"if acc > best_acc:\n    best_acc = acc\n    for i in r:\n        best_w = w.view(-1)\n", b"w")):
        for write in (key + b".add_(1)\n", key + b"[0] = 1\n", key + b".data += 1\n", b"zeros_(" + key + b")\n"):
            found = _plan(store + write, codes).codes - {"TCL104", "TCL119"}  # .data += 1: a .data write too
            assert found - {"TCL115"} == {"TCL114"}, store + write  # old = p.data: both
        assert _plan(store + b"opt.step()\n", codes).codes - {"TCL115"} == {"TCL114"}, store
        assert "TCL114" not in _plan(store + key + b" = " + key + b" + 1\n", codes).codes, store
        assert "TCL114" not in _plan(store + b"other.add_(1)\n", codes).codes, store
    for no_intent in (b"y = w\n", b"best = w + 1\n", b"outputs.append(w)\n", b"if acc > thr:\n    y = w\n"):
        assert "TCL114" not in _plan(no_intent + b"w.add_(1)\n", codes).codes, no_intent
    # ... in one flow scope (storage.hazard walks one): a def, a method, or the module with what it evaluates
    for alias, write in ((b"y = x.detach()\n", b"y.zero_()\n"), (b"a = t.numpy()\n", b"a += 1\n"),
                         (b"xs = [t] * 3\n", b"xs[0].add_(1)\n"), (b"best = w\n", b"w.add_(1)\n")):
        code = {b"y": "TCL115", b"a": "TCL113", b"x": "TCL112", b"b": "TCL114"}[alias[:1]]
        apart = b"def f(x, t, w):\n    " + alias + b"def g(x, t, w):\n    " + write
        assert code not in _plan(apart, codes).codes, apart
        methods = b"class C:\n    def f(self):\n        " + alias + b"    def g(self):\n        " + write
        assert code not in _plan(methods, codes).codes, methods
        module_and_def = alias + b"def g(x, t, w):\n    " + write
        assert code not in _plan(module_and_def, codes).codes, module_and_def
        together = b"def f(x, t, w):\n    " + alias + b"    def g():\n        pass\n    " + write
        assert code in _plan(together, codes).codes, together
        nested = b"def f(x, t, w):\n    " + alias + b"    def g():\n        " + write
        assert code in _plan(nested, codes).codes, nested  # a group may join scopes: the nested def's with f's
        written = {"TCL115": b"y", "TCL113": b"a", "TCL112": b"xs[0]", "TCL114": b"w"}[code]
        header = alias + b"@wrap(" + written + b".add_(1))\ndef g():\n    pass\n"
        assert code in _plan(header, codes).codes, header  # a decorator runs at module level
        body = alias + b"class C:\n    " + write + b"    def m(self):\n        pass\n"
        assert code in _plan(body, codes).codes, body  # a class body: with the module
        for source in (apart, methods, module_and_def, together, nested, header, body):
            _agree(b"import torch\n" + source, "scopes.py")
    assert "TCL116" in _plan(b"import torch\nz = torch.zeros(3).cuda()\n", codes).codes
    assert "TCL116" in _plan(b"from torch import ones as o\nz = o(3).float()\n", codes).codes
    assert "TCL116" not in _plan(b"import torch\nz = torch.randn(3).cuda()\n", codes).codes
    assert "TCL116" not in _plan(b"import torch\nz = torch.zeros(3)\nw = x.cuda()\n", codes).codes
    assert "TCL117" in _plan(b"y = x.cpu().detach()\n", codes).codes
    assert "TCL117" not in _plan(b"y = x.detach().cpu()\n", codes).codes
    assert "TCL118" in _plan(b"y = x.clone().float()\n", codes).codes
    assert "TCL118" not in _plan(b"y = x.clone()\nz = y.float()\n", codes).codes
    assert "TCL119" in _plan(b"init.zeros_(p.data)\n", codes).codes
    # TCL120: an in-place call on a subscript, as a statement, one index not plainly basic
    assert _plan(b"h[idx].zero_()\n", codes).codes == {"TCL120"}
    for write in (b"h.data[idx].zero_()\n", b"h[idx].data.zero_()\n", b"h[idx][0].add_(1).mul_(2)\n",
                  b"h[:, [0, 2]].fill_(1)\n", b"h[True].zero_()\n", b"(h[m]).zero_()\n",
                  b"h[idx].detach().zero_()\n", b"import torch\ntorch.zero_(h[idx])\n",
                  b"from torch.nn.init import zeros_\nzeros_(w.data[idx])\n",
                  b"from torch import nn\nnn.init.normal_(w[idx].detach(), std=1)\n",
                  b"from torch.nn.init import *\nzeros_(w[idx])\n",  # a star import may bring it
                  b"flat.add_(idx[d])\nh[i].add_(1)\n"):
        assert "TCL120" in _plan(write, codes).codes, write
    for near in (b"h[0].zero_()\n", b"h[1:, -1].add_(1)\n", b"h[None, ...].mul_(2)\n", b"y = h[idx].zero_()\n",
                 b"h[idx] = 0\n", b"h[idx] += 1\n", b"h.index_fill_(0, idx, 0)\n", b"h[idx].sum()\n",
                 b"torch.zero_(h[0:2])\n", b"zeros_(w)\n", b"h[idx].detach()\n",
                 # the function form needs the function's qualified name, which only an import gives: a local
                 # tensor's method reads its argument (`flat.add_(idx[d])` writes `flat`, not `idx[d]`)
                 b"flat.add_(idx[d])\n", b"import numpy as np\nflat.add_(idx[d])\n", b"zeros_(w[idx])\n",
                 b"f().zero_(h[idx])\n"):
        assert "TCL120" not in _plan(near, codes).codes, near
    # a name index the def never assigns (a loop's target, a parameter, an unpacking's part) holds no evidence of
    # advanced indexing: TCL120 needs every binding reaching it to assign evidence (rules/_advanced_index.py)
    for proven in (b"def f(h, n):\n    for i in range(n):\n        h[i].zero_()\n",
                   b"def f(h, idx):\n    h[idx].zero_()\n",
                   b"class A:\n    def f(self, h, xs):\n        for k, (i, j) in enumerate(xs):\n            h[i, j].add_(1)\n",
                   b"def f(h, n):\n    for i in range(n):\n        h[i][:, 0].data.mul_(2)\n",
                   b"def f(h, n):\n    for i in range(n):\n        del i\n"):
        assert "TCL120" not in _plan(proven, codes).codes, proven
    for kept in (b"def f(h):\n    idx = torch.arange(3)\n    h[idx].zero_()\n",
                 b"def f(h, idx):\n    idx = idx.nonzero()\n    h[idx].zero_()\n",  # the parameter rebound
                 b"def f(h):\n    h[idx].zero_()\n",  # the module's `idx` reaches it
                 b"def f(h):\n    ys = [i for i in range(2)]\n    h[i].zero_()\n",  # the comprehension's own `i`
                 b"def f(h):\n    global i\n    for i in range(3):\n        h[i].zero_()\n",
                 b"def f(h, n):\n    for i in range(n):\n        i += 1\n        h[i].zero_()\n",
                 b"def f(h):\n    if (i := g()):\n        h[i].zero_()\n",
                 b"def f(h, n):\n    for i in range(n):\n        h[i, mask].zero_()\n",  # another name
                 b"for i in range(3):\n    h[i].zero_()\n",  # module level
                 b"class A:\n    for i in range(3):\n        h[i].zero_()\n",  # a class body
                 b"def f(h):\n    def g():\n        h[i].zero_()\n    for i in range(3):\n        g()\n",
                 b"def f(h, n):\n    for i in range(n):\n        h[i].zero_()\n    h[torch.arange(2)].zero_()\n",
                 b"def f(h, s):\n    s = sorted(s, key=lambda i: -i)\n    for i in s:\n        h[i].zero_()\n"):
        assert "TCL120" in _plan(kept, codes).codes, kept
