"""The prefilter's triggers see through comments, line breaks and continuations between tokens,
stay silent on near-misses, and cannot backtrack for long on hostile text."""

from __future__ import annotations

import re

import pytest

from _support import ROOT, fixture_inputs
from torchcopy_lint.codes import IN_PLACE_CALL, TRIGGERS, alternatives, compile_trigger, is_in_place, may_match
from torchcopy_lint.engine import lint_source
from torchcopy_lint.trigger_syntax import required_literal
from torchcopy_lint.rules import ALL_RULES

# Code (with `import torch`, `t` a tensor, `p` a parameter) the rule reports, written with gaps between tokens.
SPLIT = {
    "TCL101": [
        "u = torch.tensor(  # a copy\n    t\n)",
        "u = torch.tensor(\n    # the argument\n    t)",
        "u = torch.tensor \\\n    (t)",
        "u = f(torch.tensor  # odd\n      (t))",
    ],
    "TCL102": ["u = t.new_tensor(  # copy\n    t)", "u = t.new_tensor \\\n    (t)"],
    "TCL103": ["u = t.clone(  # a copy\n).detach()", "u = (t.clone()  # c\n     ).detach()",
               "u = torch.clone(t) \\\n    .detach()", "from torch import clone as c\nu = c(t).detach(  # x\n)"],
    "TCL104": [
        "p.data.add_(  # bump\n    1)",
        "(p.data  # the storage\n .zero_())",
        "p.data \\\n    .mul_(2)",
        "p.data **= 2",
        "torch.clamp_(  # clip\n    p.data, 0, 1)",
    ],
    "TCL106": ["u = torch.empty_like(  # same shape\n    t).copy_(t)",
               "u = (torch.empty_like(t)  # storage\n     .copy_(  # the values\n         t))",
               "u = torch.empty_like(t) \\\n    .copy_(t)"],
    "TCL107": ["u = torch.tensor(  # two tensors\n    [t, t])", "u = torch.tensor(\n    # both\n    [t,\n     t])"],
    "TCL108": ["import copy\nu = copy.copy(  # shallow\n    t)", "import copy\nu = copy  \\\n    .copy(t)"],
    "TCL109": ["best = model.state_dict(  # live view\n)\nloss.backward(  # step\n)\nmodel.load_state_dict(best)"],
    "TCL110": ["total = 0\nfor x in data:\n    loss = model(x)\n    loss.backward(  # grads\n    )\n    total += loss",
               # once missed by the text prefilter: a non-ASCII name, a parenthesised operand of `+`, a long name
               "total = 0\nfor x in data:\n    потеря = model(x)\n    потеря.backward()\n    total += потеря",
               "total = 0\nfor x in data:\n    the_loss_of_this_very_batch = model(x)\n"
               "    the_loss_of_this_very_batch.backward()\n    total = total + (the_loss_of_this_very_batch)",
               "total = 0\nfor x in data:\n    loss = model(x)\n    (loss  # the sum\n     ).backward()\n    total += loss"],
    "TCL111": ["t.to(  # no effect\n    'cpu')", "t.\\\n    float()"],
    "TCL112": ["xs = [t]  \\\n    * 3\nxs[0].add_(  # all\n    1)\nprint(xs)", "xs = [  # all\n    t] * 3\nxs[0].add_(1)\nprint(xs)",
               "xs = 3 * (  # rows\n    [t])\nxs[1] += 1\nprint(xs)"],
    "TCL113": ["a = t.numpy(  # shared\n)\na[0] = 5\nprint(t)", "a = t \\\n    .numpy()\na *= 2\nprint(t)",
               "import numpy as np\na = np.zeros(3, dtype=np.float32)\nu = torch.FloatTensor  (  # shared\n    a)\n"
               "u.add_(1)\nprint(a)",
               # once missed by the text prefilter: a legacy constructor under another name
               "import numpy as np\nfrom torch import FloatTensor as FT\na = np.zeros(3, dtype=np.float32)\nu = FT(a)\n"
               "u.add_(1)\nprint(a)"],
    "TCL114": ["best = t\nt.add_(  # moves best\n    1)\nprint(best)", "old = p.data\np.data.mul_ \\\n    (2)\nprint(old)",
               # once missed by the text prefilter: a "best so far" test whose name is rebound to a non-reference,
               # a snapshot-named container stored into or appended to
               "best_acc = 0.0\nfor i in range(3):\n    if float(i) > best_acc:\n        best_acc = float(i)\n"
               "        snap = t\n    t.add_(1)\nprint(snap)",
               "old_params = {}\nold_params[  # by name\n    'w'] = t\nt.add_(1)\nprint(old_params)",
               "saved = []\nsaved \\\n    .append(t)\nt.add_(1)\nprint(saved)"],
    "TCL115": ["y = t.detach(  # no copy\n)\ny.zero_(  # zeroes t\n)\nprint(t)",
               "y = (t).detach()\ny.zero_()\nprint(t)",  # once missed by the text prefilter: a parenthesised name
               "y = t \\\n    .data\ny[0] = 1\nprint(t)"],
    # TCL119 has TCL104's triggers: the same split writes, where no graph can be live
    "TCL119": ["torch.nn.init.normal_(  # init\n    p.data)", "with torch.no_grad():\n    p.data \\\n        .mul_(2)"],
    "TCL120": ["t[[0, 2]]  \\\n    .zero_()", "(t[t > 0]  # a mask\n ).fill_(  # a copy\n    1)",
               "t[[0, 2]].data \\\n    .add_(1)", "t[[0, 2]].detach(  # still the copy\n).zero_()",
               "torch.nn.init.zeros_(  # init\n    t[[0, 2]])", "torch.clamp_((  # rows\n    t)[[0, 2]], 0, 1)",
               "torch.zero_(  # rows\n    t\n    [[0, 2]])", "torch.nn.init.normal_(t[[0, 2]])"],
}
PRELUDE = "import torch\nt = torch.zeros(3)\np = torch.nn.Parameter(torch.zeros(3))\n"

NEAR_MISSES = {
    # an in-place call on a call's result or a name, not on a subscript; a subscript assignment
    "TCL120": ["t.index_select(0, i).zero_()\n", "t[i] = 0\n", "t[i].sum()\n", "x = a[0]\nx.zero_()\n",
               "t[i].detach()\n", "torch.zero_(t.index_select(0, i))\n", "torch.zero_(t, [0, 1])\n",
               # a dunder is no in-place name, nor NOT_WRITES; the first argument is a dotted name's subscript or
               # nothing the rule reports (a keyword, a call's result), and ends at the call's parenthesis
               "super().__init__(self.sizes[0])\n", "t[i].__iadd__(1)\n", "t[i].requires_grad_()\n",
               "class M:\n    def __init__(self):\n        self.layers = [0]\n", "torch.zero_(t.detach()[i])\n",
               "torch.nn.init.normal_(tensor=w[i])\n", "torch.zero_(t)\nxs = ys[0]\n", "torch.foo__(t[i])\n"],
    # no write: a dunder call, a NOT_WRITES method
    "TCL115": ["y = t.detach()\nsuper().__init__(y)\n", "y = t.detach()\ny.requires_grad_()\nprint(t)\n"],
    # the bridge is a call (or an alias import) of a whole name: not prose, an annotation or another class
    "TCL113": ["# t.numpy is shared; from_numpy too\nx[0] = 1\n", "def f(x: Tensor) -> Tensor:\n    x += 1\n",
               "y = FakeTensor(a)\ny += 1\n"],
    # `.backward(` of an attribute, a call's result, a subscript, or in prose
    "TCL110": ["self.loss.backward()\ntotal += loss\n", "x.sum().backward()\ntotal += x\n",
               "xs[0].backward()\ntotal += x\n", "# then call ``.backward()``\ntotal += x\n",
               "torch.autograd.backward(y)\ntotal += x\n"],
    # a constant, a keyword argument and a history read are not references kept with intent
    "TCL114": ["initialized = True\nx.add_(1)\n", "f(init=x)\nx.add_(1)\n", "y = trace[0]\nx.add_(1)\n",
               "saved = (None)\nx.add_(1)\n", "y = f(lowest=x)\nx.add_(1)\n",
               # a history word that does not start the name, or a part of it
               "catalog.append(x)\nx.add_(1)\n", "backlogs[k] = x\nx.add_(1)\n", "old = 0\nx.add_(1)\n"],
    "TCL103": ["u = t.detach()\nv = t.clone()\n", "u = t.detach().clone()\n"],
    "TCL101": ["x = torch.tensor(  # a list\n    [1, 2])", "s = 'tensor(  # not a call'\n"],
    "TCL104": ["# The end of a sentence.\ndata = {}\n", "x = p.data  # read only\n"],
    # a constant alone, however spaced or commented, is never a tensor (most `[x] * n` in torch)
    "TCL112": ["xs = [None] * 3\nxs[0].add_(1)\n", "xs = [  # slots\n    0 ] * n\nxs[0] += 1\n",
               "xs = n * [ 'a' ]\nxs[0] += 'b'\n", "xs = [-1] * n\nxs[1] += 1\n", "xs = [1.5]*n\nxs[0] += 1\n",
               # an unpacking is no product
               "x_()\nys = f(*[a])\n", "x_()\nys = g(a, *[b, c])\n", "x_()\nys = [a, *[b] ]\n"],
}


@pytest.mark.parametrize("code,snippet", [(c, s) for c, ss in SPLIT.items() for s in ss])
def test_split_hazards_pass_the_prefilter_and_are_reported(code, snippet):
    source = PRELUDE + snippet + "\n"
    if code == "TCL103":  # clone().detach() records a node only where `t` requires grad
        source = PRELUDE + "t = torch.zeros(3, requires_grad=True)\n" + snippet + "\n"
    if code == "TCL104":  # a .data write is TCL104's between a forward of its module and the backward
        source = PRELUDE + "net = torch.nn.Linear(3, 3)\np = net.weight\nloss = net(t).sum()\n" + snippet + \
            "\nloss.backward()\n"
    assert may_match(code, source) and may_match(code, source.encode())
    assert code in [d.code for d in lint_source(source.encode(), "f.py", ALL_RULES)]


@pytest.mark.parametrize("code,snippet", [(c, s) for c, ss in NEAR_MISSES.items() for s in ss])
def test_near_misses_stay_out(code, snippet):
    assert not may_match(code, snippet)


#: Shapes each rule may report (the index, a name's kind unknown here): the prefilter must pass them.
MAY_REPORT = {
    "TCL120": ["torch.zero_(h[idx])\n", "nn.init.normal_(w[idx])\n", "nn.init.normal_(self.w[idx], 0, 1)\n",
               "zero_(h[idx])\n", "torch.zero_(h.data[idx])\n", "torch.zero_((self).w[idx])\n",
               "torch.zero_(((w))[idx])\n", "h[idx].zero_()\n", "h[idx].data.add_(1)\n", "h[idx][0].mul_(2)\n",
               "torch.nn.init.normal_(\n    self  # c\n    .w\n    [idx])\n", "h[idx].ñ_()\n"],
    "TCL113": ["a = t.numpy()\na[0] = 1\n", "u = torch.from_numpy(a)\nu += 1\n", "u = torch.Tensor(a)\nu += 1\n",
               "from torch import as_tensor as at\nu = at(a)\nu += 1\n", "u = np.asarray (t)\nu.add_(1)\n"],
    "TCL115": ["y = t.detach()\ny.add_(1)\n", "y = t.data\ntorch.nn.init.zeros_(y)\n", "y = вес.detach()\ny.add_(1)\n",
               "y = (\n    self  # the module\n    .w).data\ny += 1\n"],
    "TCL112": ["xs = [t] * n\nxs[0].add_(1)\n", "xs = n * [t]\nxs[0] += 1\n", "xs = (n)*[t]\nxs[0] += 1\n",
               "xs = f(n) *  [t]\nxs[0] += 1\n"],
    "TCL114": ["old_вес = вес\nвес.add_(1)\n", "best_w = w.detach()\nw.add_(1)\n", "if acc > self.best_acc:\n    x += 1\n",
               "my_history.append(x)\nx.add_(1)\n", "self.log[k] = x\nx.add_(1)\n", "trajectories.append(x)\nx += 1\n"],
    "TCL110": ["loss.backward()\ntotal += loss\n", "(loss).backward()\ntotal += loss\n",
               "loss \\\n    .backward()\ntotal += loss\n", "loss. backward()\ntotal += loss\n",
               "xs.append(loss)\nloss.backward()\n"],
}


@pytest.mark.parametrize("code,snippet", [(c, s) for c, ss in MAY_REPORT.items() for s in ss])
def test_shapes_a_rule_may_report_pass_the_prefilter(code, snippet):
    assert may_match(code, snippet) and may_match(code, snippet.encode())


@pytest.mark.parametrize("code,hostile", [
    ("TCL101", "torch.tensor(" + "# ( # ( #\n" * 20_000 + "[1]"),
    ("TCL101", "from torch import (" + "a,  # # , #\n" * 20_000 + ")"),
    ("TCL104", "x.copy_(" + "a  # #\n" * 20_000 + "b.dat)"),
    ("TCL104", "p.data" + " \\\n)" * 20_000 + ";"),
    ("TCL106", "torch.empty_like(x)" + ")  # )\n" * 20_000 + ".copy"),
    ("TCL107", "torch.tensor(" + "  # [\n" * 20_000 + "1"),
    ("TCL110", "loss" + "  # )\n" * 20_000 + ") . backward"),
    ("TCL115", "x.data\n" + "y =" + " " * 100_000 + "(" + " " * 100_000 + "z"),
    ("TCL112", "x_(\nxs = [" + " " * 100_000 + "None ]" + " " * 100_000 + "*"),
    ("TCL112", "x_(\nxs = n * [" + "  # c\n" * 20_000 + "'a' ]"),
    ("TCL115", "x.detach\ny = " + "a." * 50_000 + "b"),
    ("TCL114", "best" + " " * 100_000 + "==\nhistory" + " " * 100_000 + ". pop"),
    ("TCL114", "x.add_(1)\n" + "history[" * 50_000 + "\nlog[" + "a[b" * 50_000 + "\n< " + "a." * 50_000),
    # once quadratic: 38 s for a 100,000-space line, from `\s*\(?\s*` (two ways to split every run)
    ("TCL110", " " * 100_000 + "x)\n(y).backward("),
    ("TCL120", "x_(" + "(  " * 50_000 + "a"),
    ("TCL120", "x_(" + "a  # [\n" * 20_000 + ")"),
    ("TCL120", "x]" + ".detach()  " * 20_000 + ".x"),
    ("TCL120", "x_(" + "a . (  # c\n" * 20_000 + ")"),
    ("TCL120", "x_(" + "a" * 100_000 + " " * 100_000 + "!"),
    ("TCL110", "x" * 100_000 + ".backward" + " " * 100_000),
    # non-ASCII whitespace (`\s` in a str regex) is a name's character to a trigger, never a gap's
    ("TCL115", "x.data\ny = (" + "\u00a0" * 20_000 + ")" + "\u00a0" * 20_000 + "!"),
    ("TCL114", "x.add_(1)\nif y < " + "\u00a0" * 20_000 + "!"),
    ("TCL120", "x_(" + "\u00a0" * 20_000 + "!"),
])
def test_hostile_text_fails_to_match_without_runaway_backtracking(code, hostile):
    # Each gap is matched one way only, so these fail in milliseconds (an ambiguous gap would not finish).
    assert not may_match(code, hostile) and not may_match(code, hostile.encode())


def test_alternatives_split_only_at_the_top_level():
    assert alternatives(r"a[|(]b|(c|d)|\|e") == [r"a[|(]b", "(c|d)", r"\|e"]
    assert alternatives(r"[]|]x|[^]|]y|z") == ["[]|]x", "[^]|]y", "z"]
    assert alternatives(r"(?m)^a|b") == ["(?m)^a", "(?m)b"]
    assert alternatives("abc") == ["abc"]


def _patterns():
    found = [t for triggers in TRIGGERS.values() for t in triggers]
    for rule in ALL_RULES:
        found += list(rule.segment_triggers or ()) + ([rule.unprunable] if rule.unprunable else [])
    return found


def test_a_trigger_searched_by_its_alternatives_finds_what_the_whole_regex_finds():
    texts = [p.read_bytes() for p in fixture_inputs() + sorted((ROOT / "examples").glob("*.py"))]
    texts += [s.encode() for ss in list(SPLIT.values()) + list(NEAR_MISSES.values()) for s in ss]
    for pattern in _patterns():
        parts = alternatives(pattern)
        if not pattern.startswith("(?"):
            assert "|".join(parts) == pattern
        whole, split = re.compile(pattern.encode()), compile_trigger(pattern, True)
        assert len(split.alternatives) == len(parts)
        for text in texts:
            assert bool(whole.search(text)) == split.search(text), (pattern, text[:200])
            assert bool(re.search(pattern, text.decode())) == compile_trigger(pattern, False).search(text.decode())


@pytest.mark.parametrize("name", ["add_", "zero_", "a_", "ñ_", "normal_", "myrequires_grad_", "foo__", "__iadd__",
                                  "requires_grad_", "share_memory_", "_private_", "add", "x_y", "_"])
def test_in_place_calls_are_found_where_is_in_place_says_so(name):
    # the trigger's superset: a private name ending in one `_` (no lookbehind sees a name's start)
    found = compile_trigger(IN_PLACE_CALL, False).search(f"x.{name}(1)")
    assert found == compile_trigger(IN_PLACE_CALL, True).search(f"x.{name}(1)".encode())
    assert found == (is_in_place(name) or name.startswith("_") and not name.endswith("__") and name != "_")


@pytest.mark.parametrize("pattern, gate", [
    (r"\)\s*\.detach(?<!\wdetach)\s*\(", ".detach"),  # a lookbehind is zero-width: the run goes on through it
    (r"copy\s*\.\s*copy_", "copy_"),  # the longest run
    (r"(?:to|cuda)\(", None),  # a branch: no character is required
    (r"ab[cd]ef", None),  # runs shorter than MIN_GATE
    (r"(?i)detach", None),  # case ignored: `in` could not answer
])
def test_required_literal_is_what_every_match_holds(pattern, gate):
    assert required_literal(pattern) == gate
    if gate is not None:
        assert required_literal(pattern.encode()) == gate.encode()


def test_every_gate_occurs_in_every_match_of_its_alternative():
    texts = [p.read_bytes() for p in fixture_inputs()] + [s.encode() for ss in SPLIT.values() for s in ss]
    for pattern in _patterns():
        for alternative in compile_trigger(pattern, True).alternatives:
            if alternative.gate is None:
                continue
            for text in texts:
                for found in alternative.regex.finditer(text):
                    assert alternative.gate in found.group(), (alternative.regex.pattern, found.group())


@pytest.mark.parametrize("text, live", [
    ("p.data.add_(1)", False),  # no forward, hook or backward anywhere: no graph the model can call live
    ("def init(m):\n    m.weight.data.zero_()\n", False),
    ("class M(nn.Module):\n    def forward(self, x):\n        self.w.data.add_(1)\n", True),
    ("out = model(x)\np.data.add_(1)\nloss.backward()\n", True),
    ("def my_pre_Hook(m, i):\n    m.w.data.mul_(0.5)\n", True),  # the word `hook` in any case
    ("def scale(m, i):\n    m.w.data.mul_(0.5)\nmodel.register_forward_pre_hook(scale)\n", True),
])
def test_tcl104_needs_a_word_of_live_graph_evidence_and_tcl119_does_not(text, live):
    assert may_match("TCL104", text) is live
    assert may_match("TCL104", text.encode()) is live
    assert may_match("TCL119", text)  # the graph-free twin reports the same writes anywhere
