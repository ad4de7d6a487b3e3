"""Opt-in rules (TCL119): outside the default selection, enabled by ALL or their full code, never by a prefix;
the same in every front end (CLI, stdin, show-settings, flake8, the pre-commit hooks' command line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchcopy_lint.codes import DEFAULT_CODES, OPT_IN_CODES, RULE_CODES
from torchcopy_lint.settings.config import Selection, Settings

from _support import ROOT, run_cli

# One write in a forward (TCL104) and one in __init__ (TCL119).
SOURCE = b"""import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.fc.weight.data.zero_()

    def forward(self, x):
        y = self.fc(x)
        self.fc.weight.data.add_(1)
        return y
"""


def _enabled(*layers: Selection):
    return sorted(Settings(selections=list(layers)).enabled(RULE_CODES))


def test_default_selection_is_every_rule_but_the_opt_in_ones():
    assert OPT_IN_CODES == ("TCL119",) and "TCL119" in RULE_CODES
    assert list(DEFAULT_CODES) == [c for c in RULE_CODES if c != "TCL119"]
    assert _enabled() == sorted(DEFAULT_CODES)


@pytest.mark.parametrize(("selection", "on"), [
    (Selection(("ALL",)), True),
    (Selection(("TCL119",)), True),
    (Selection(None, ("TCL119",)), True),
    (Selection(("TCL1",)), False),  # a prefix never selects an opt-in rule (ruff's explicit-preview-rules)
    (Selection(("TCL11",)), False),
    (Selection(None, ("TCL",)), False),
    (Selection(("TCL104",)), False),  # selecting TCL104 does not bring its graph-free half back
    (Selection(None, (), ("TCL104",)), False),  # ignoring TCL104 leaves TCL119 as it was (off)
    (Selection(("ALL",), (), ("TCL104",)), True),
    (Selection(("ALL",), (), ("TCL1",)), False),  # a prefix does ignore it
    (Selection(None, ("TCL119",), ("TCL1",)), True),  # the more specific selector wins, as for any rule
])
def test_what_selects_the_opt_in_rule(selection, on):
    assert ("TCL119" in _enabled(selection)) is on


def test_prefix_select_keeps_the_default_rules_of_the_family():
    assert _enabled(Selection(("TCL1",))) == sorted(DEFAULT_CODES)
    assert _enabled(Selection(None, (), ("TCL104",))) == sorted(set(DEFAULT_CODES) - {"TCL104"})


def _codes(result: subprocess.CompletedProcess) -> list:
    assert result.returncode in (0, 1), result.stderr
    return sorted(d["code"] for d in json.loads(result.stdout))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "net.py").write_bytes(SOURCE)
    return tmp_path


@pytest.mark.parametrize(("args", "expected"), [
    ((), ["TCL104"]),
    (("--extend-select", "TCL119"), ["TCL104", "TCL119"]),
    (("--select", "ALL"), ["TCL104", "TCL119"]),
    (("--select", "TCL1"), ["TCL104"]),
    (("--select", "TCL119"), ["TCL119"]),
    (("--ignore", "TCL104"), []),
])
def test_cli_and_stdin(tree, args, expected):
    json_out = ("--no-cache", "--output-format", "json")
    assert _codes(run_cli(*json_out, *args, "net.py", cwd=tree)) == expected
    stdin = run_cli(*json_out, *args, "--stdin-filename", "net.py", "-", cwd=tree, input_bytes=SOURCE)
    assert _codes(stdin) == expected


@pytest.mark.parametrize(("table", "expected"), [
    ("", ["TCL104"]),
    ('extend-select = ["TCL119"]', ["TCL104", "TCL119"]),
    ('select = ["TCL"]', ["TCL104"]),
    ('select = ["ALL"]\nignore = ["TCL104"]', ["TCL119"]),
    ('select = ["TCL104"]', ["TCL104"]),
])
def test_configuration_flake8_and_pre_commit_agree(tree, table, expected):
    (tree / "pyproject.toml").write_text(f"[tool.torchcopy-lint]\nfile-timeout = 0\n{table}\n")
    assert _codes(run_cli("--no-cache", "--output-format", "json", "net.py", cwd=tree)) == expected
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TCL", "--format", "%(code)s", "net.py"],
                            capture_output=True, text=True, cwd=tree)
    assert "Traceback" not in flake8.stderr and sorted(flake8.stdout.split()) == expected
    # The pre-commit hook's own command line (.pre-commit-hooks.yaml) with the file name pre-commit passes.
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entry = hook.split("entry: torchcopy-lint ", 1)[1].splitlines()[0].split()
    args = hook.split("args: [", 1)[1].split("]")[0].split(", ")
    result = run_cli(*entry, *args, "--no-cache", "--output-format", "json", "net.py", cwd=tree)
    assert _codes(result) == expected


def test_show_settings_names_the_default_selection(tree):
    result = run_cli("--show-settings", "net.py", cwd=tree)
    rows = dict(line.split(" = ", 1) for line in result.stdout.decode().splitlines()[1:])
    assert json.loads(rows["default-selection"]) == list(DEFAULT_CODES)
    assert json.loads(rows["opt-in"]) == ["TCL119"]
    assert json.loads(rows["enabled"]) == list(DEFAULT_CODES)
    extended = run_cli("--show-settings", "--extend-select", "TCL119", "net.py", cwd=tree)
    rows = dict(line.split(" = ", 1) for line in extended.stdout.decode().splitlines()[1:])
    assert json.loads(rows["enabled"]) == list(RULE_CODES)
