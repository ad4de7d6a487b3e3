"""The rule registry is consistent: codes, one module per rule, docs pages, fixtures."""

from __future__ import annotations

from _support import FIXTURES, ROOT

from torchcopy_lint.codes import RULE_CODES
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
