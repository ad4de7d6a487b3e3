"""The rule registry is consistent: codes, one module per rule, docs pages, fixtures."""

from __future__ import annotations

from _support import FIXTURES, ROOT

from torchcopy_lint.codes import RULE_CODES, TRIGGERS
from torchcopy_lint.rules import ALL_RULES


def test_static_code_list_matches_registry():
    assert RULE_CODES == tuple(rule.code for rule in ALL_RULES)


def test_every_rule_has_module_docs_and_fixtures():
    for rule in ALL_RULES:
        module = rule.__module__.rsplit(".", 1)[-1]
        assert module.startswith(rule.code.lower() + "_"), (rule.code, module)
        assert rule.__doc__ and rule.message and rule.triggers
        assert (ROOT / "docs" / "rules" / f"{rule.code}.md").is_file()
        assert (FIXTURES / rule.code).is_dir()


def test_rules_take_their_triggers_from_the_table():
    for rule in ALL_RULES:
        assert rule.triggers == TRIGGERS[rule.code]


def test_flake8_plugin_skips_libcst_for_files_no_rule_can_match():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from torchcopy_lint.flake8_plugin import TorchCopyLintPlugin\n"
        "plugin = TorchCopyLintPlugin(None, ['import os\\n', 'x = [1, 2]\\n'], 'a.py')\n"
        "assert list(plugin.run()) == []\n"
        "print('libcst' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_rule_command_prints_every_rules_page(capsys):
    from torchcopy_lint.cli import main

    for rule in ALL_RULES:
        page = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert main(["rule", rule.code]) == 0
        out = capsys.readouterr().out
        assert f"({rule.code})" in out and "## Why is this bad?" in out, rule.code
        assert page.splitlines()[-1] in out, f"`rule {rule.code}` does not print docs/rules/{rule.code}.md"
