"""Fuzzing: generated programs and hazards in awkward syntax never break linting or fixing.

For every program: linting never raises (and reports no TCL003); ``--fix`` output
re-parses; safe fixes keep every comment; a second ``--fix`` changes nothing; and a
program that ran still runs after its fixes (checked with real torch, in one
subprocess). Hypothesis runs derandomized and bounded, so CI is repeatable.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tokenize
from typing import Dict, List

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.fixing.fixer import fix_source
from torchcopy_lint.source.precheck import call_with_deep_stack
from torchcopy_lint.rules import ALL_RULES

HAZARDS = b"\nimport torch\nt = torch.zeros(3, requires_grad=True)\nu = t.clone().detach()\nv = torch.tensor(t)\n"

# Hazard patterns inside awkward syntax; each is a whole program that runs with real torch.
CASES: Dict[str, str] = {
    "comment_in_call": "t = torch.zeros(3, requires_grad=True)\nu = torch.tensor(  # keep me\n    t  # and me\n)\n",
    "lambda": "t = torch.zeros(3, requires_grad=True)\nf = lambda: t.clone().detach()  # lam\nv = f()\n",
    "walrus": "t = torch.zeros(3, requires_grad=True)\nif (u := t.clone().detach()) is not None:\n    w = torch.tensor(u)\n",
    "match": "t = torch.zeros(3, requires_grad=True)\nmatch 1:\n    case 1:\n        u = t.clone().detach()  # in case\n    case _:\n        pass\n",
    "except_star": "t = torch.zeros(3, requires_grad=True)\ntry:\n    raise ExceptionGroup('g', [ValueError()])\n"
                   "except* ValueError:\n    u = t.clone().detach()\n",
    "fstring": "t = torch.zeros(3, requires_grad=True)\ns = f\"{t.clone().detach().sum():.1f} {torch.tensor(t).shape}\"\n",
    "decorator": "import functools\nt = torch.zeros(3, requires_grad=True)\n@functools.lru_cache(maxsize=None)\n"
                 "def f():\n    return t.clone().detach()  # cached\nf()\n",
    "data_add": "model = torch.nn.Linear(2, 2)\nfor p in model.parameters():\n    p.data.add_(1)  # bump\n",
    "data_subscript": "model = torch.nn.Linear(2, 2)\nwith torch.no_grad():\n    model.weight.data[0] = 1.0\n",
    "deepcopy_training": "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                         "for _ in range(2):\n    loss = model(torch.ones(1, 2)).sum()\n    loss.backward()\n"
                         "    opt.step()\n    best = copy.deepcopy(model)  # snapshot\n",
    "nested_calls": "t = torch.zeros(3, requires_grad=True)\nu = torch.tensor(torch.tensor(t).clone().detach())\n",
    "new_tensor": "t = torch.zeros(3, requires_grad=True)\nu = t.new_tensor(t)  # copy\n",
    "class_body": "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                  "        self.w = torch.nn.Parameter(torch.zeros(2))\n    def reset(self):\n"
                  "        self.w.data.zero_()  # reset\nM().reset()\n",
    "backslash": "t = torch.zeros(3, requires_grad=True)\nu = t.clone() \\\n    .detach()\n",
    "semicolons": "t = torch.zeros(3, requires_grad=True); u = t.clone().detach(); v = torch.tensor(t)\n",
    "comprehension": "ts = [torch.zeros(2) for _ in range(2)]\nus = [t.clone().detach() for t in ts if t is not None]\n",
    "async": "import asyncio\nt = torch.zeros(3, requires_grad=True)\nasync def f():\n    return t.clone().detach()\nasyncio.run(f())\n",
    "comments_between": "t = torch.zeros(3, requires_grad=True)\nu = (t  # a\n     .clone()  # b\n     .detach())  # c\n",
}
PRELUDE = "import copy\nimport torch\n"


def _tabs(source: str) -> str:
    out = []
    for line in source.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        out.append("\t" * ((len(line) - len(stripped)) // 4) + stripped)
    return "".join(out)


TRANSFORMS = {
    "plain": lambda s: s,
    "crlf": lambda s: s.replace("\n", "\r\n"),
    "tabs": _tabs,
    "cookie": lambda s: "# -*- coding: utf-8 -*-\n# header comment\n" + s,
}


def _programs() -> Dict[str, bytes]:
    out = {}
    for case, body in CASES.items():
        for name, transform in TRANSFORMS.items():
            source = transform(PRELUDE + body).encode()
            try:
                compile(source, case, "exec")
            except SyntaxError:  # syntax newer than this Python (match, except*)
                continue
            out[f"{case}-{name}"] = source
    return out


def _comments(source: bytes) -> List[str]:
    tokens = tokenize.tokenize(io.BytesIO(source).readline)
    return [tok.string for tok in tokens if tok.type == tokenize.COMMENT]


def _check_fixes(source: bytes) -> Dict[str, bytes]:
    """The invariants of linting and fixing ``source``; returns the safe and unsafe fixed sources."""
    diagnostics = lint_source(source, "f.py", ALL_RULES)
    assert not [d for d in diagnostics if d.code in ("TCL003", "TCL004")], diagnostics
    fixed = {}
    for unsafe in (False, True):
        result = call_with_deep_stack(fix_source, source, ALL_RULES, unsafe)  # as the runner calls it
        compile(result.source, "fixed.py", "exec")  # re-parses (and CPython agrees)
        again = call_with_deep_stack(fix_source, result.source, ALL_RULES, unsafe)
        assert again.source == result.source and again.applied == 0, "a second --fix changed something"
        if not unsafe:
            assert sorted(_comments(result.source)) == sorted(_comments(source)), "a safe fix lost a comment"
        fixed["unsafe" if unsafe else "safe"] = result.source
    return fixed


def _comments_in_order(source: bytes, fixed: bytes) -> bool:
    return _comments(fixed) == _comments(source)


PROGRAMS = _programs()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hazards_in_awkward_syntax(name):
    source = PROGRAMS[name]
    safe = _check_fixes(source)["safe"]
    assert _comments_in_order(source, safe), "a safe fix moved a comment"
    assert lint_source(source, "f.py", ALL_RULES), "every case holds at least one finding"


_RUNNER = """
import json, sys, traceback
results = {}
for name, source in json.load(sys.stdin).items():
    try:
        exec(compile(source.encode('latin-1'), name, 'exec'), {'__name__': '__main__'})
        results[name] = 'ok'
    except BaseException as error:
        results[name] = type(error).__name__ + ': ' + str(error)
print(json.dumps(results))
"""


def test_a_program_that_ran_still_runs_after_its_fixes():
    pytest.importorskip("torch")
    programs = {}
    for name, source in PROGRAMS.items():
        programs[name] = source
        for kind, fixed in _check_fixes(source).items():
            if fixed != source:
                programs[f"{name}/{kind}"] = fixed
    payload = json.dumps({k: v.decode("latin-1") for k, v in programs.items()})
    result = subprocess.run([sys.executable, "-c", _RUNNER], input=payload, capture_output=True, text=True,
                            timeout=300)
    outcomes = json.loads(result.stdout)
    assert outcomes["comment_in_call-plain"] == "ok"
    broken = {name: why for name, why in outcomes.items()
              if "/" in name and why != "ok" and outcomes[name.split("/")[0]] == "ok"}
    assert not broken, broken
    assert sum(1 for name in outcomes if "/" in name) >= len(CASES), "fixes were applied and run"


hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")


@hypothesis.settings(max_examples=25, derandomize=True, deadline=None, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(code=hypothesmith.from_grammar())
def test_generated_programs(code):
    """Grammar-generated programs, with hazards appended so that the parse and the fixer really run."""
    source = code.encode("utf-8", "surrogatepass")
    try:
        compile(source, "gen.py", "exec")
    except (SyntaxError, ValueError):
        hypothesis.assume(False)
    if not source.endswith(b"\n"):
        source += b"\n"
    for candidate in (source, source + HAZARDS):
        try:
            compile(candidate, "gen.py", "exec")
        except SyntaxError:  # e.g. a trailing backslash continuation
            continue
        _check_fixes(candidate)
