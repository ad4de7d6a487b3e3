"""TCL118 says "copies twice" outright only where the code proves the conversion changes the dtype or device;
elsewhere it says when. The fixture marks each flagged line with `# when:` or `# twice:`."""

from __future__ import annotations

from _support import FIXTURES

from torchcopy_lint.engine import lint_source
from torchcopy_lint.rules import ALL_RULES

CASE = FIXTURES / "TCL118" / "conditional_message.py"


def _messages():
    lines = CASE.read_text().splitlines()
    found = [d for d in lint_source(CASE.read_bytes(), str(CASE), ALL_RULES) if d.code == "TCL118"]
    return [(lines[d.line - 1], d.message) for d in found]


def test_every_flagged_line_says_which_message_it_gets():
    messages = _messages()
    assert len(messages) == 12
    for line, message in messages:
        assert "# when:" in line or "# twice:" in line, line
        if "# when:" in line:
            assert " copies twice when " in message and "copies once either way" in message, (line, message)
        else:
            assert " copies twice; " in message and " when " not in message, (line, message)


def test_the_condition_names_the_target_as_written():
    conditions = [message.split(" when ", 1)[1].split(";")[0] for _, message in _messages() if " when " in message]
    assert conditions == [
        "`device` is not already the tensor's device",
        "`para.device` is not already the tensor's device",
        "`kpts0.dtype` is not already the tensor's dtype",
        "the tensor is not already on the CPU",
        "the tensor is not already float32",
        "`para` differs from the tensor in dtype or device",
    ]
