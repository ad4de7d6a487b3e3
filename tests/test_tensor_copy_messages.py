"""TCL101's advice is the form its fix writes, the call's dtype/device/requires_grad kept: the fixture marks each
flagged line with `# advice: <the form the message must name>`."""

from __future__ import annotations

from _support import FIXTURES

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

CASE = FIXTURES / "TCL101" / "advice_keeps_arguments.py"


def test_every_flagged_line_names_the_form_its_fix_writes():
    lines = CASE.read_text().splitlines()
    found = [d for d in lint_source(CASE.read_bytes(), str(CASE), ALL_RULES) if d.code == "TCL101"]
    assert len(found) == 5
    for d in found:
        advice = lines[d.line - 1].split("# advice: ", 1)[1]
        assert d.message.endswith("; use " + advice), (advice, d.message)
