"""Every fixture: expected diagnostics, expected --fix output, idempotence, re-parse."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import libcst as cst
import pytest

from torchcopy_lint.fixing.edits import applies
from torchcopy_lint.engine import lint_source
from torchcopy_lint.fixing.fixer import fix_source
from torchcopy_lint.rules import ALL_RULES

from _support import fixture_inputs

CASES = fixture_inputs()
IDS = [f"{p.parent.name}/{p.name}" for p in CASES]


def _expected(path: Path):
    expected = path.with_suffix(".expected")
    assert expected.exists(), f"{expected} is missing"
    return [line.strip() for line in expected.read_text().splitlines() if line.strip()]


def _observed(path: Path):
    return [f"{d.line}:{d.column}: {d.code}" for d in lint_source(path.read_bytes(), str(path), ALL_RULES)]


def test_fixture_set_covers_every_rule():
    for rule in ALL_RULES:
        cases = [p for p in CASES if p.parent.name == rule.code]
        flagged = [p for p in cases if _expected(p)]
        silent = [p for p in cases if not _expected(p)]
        assert flagged, f"{rule.code}: no fixture that must be flagged"
        assert silent, f"{rule.code}: no near-miss fixture that must stay silent"


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_diagnostics(path: Path):
    assert _observed(path) == _expected(path)


@pytest.mark.parametrize("path", CASES, ids=IDS)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fix_output_and_idempotence(path: Path, unsafe: bool):
    source = path.read_bytes()
    expected_path = path.with_suffix(".fixed.py")
    if unsafe and path.with_suffix(".unsafe.py").exists():
        expected_path = path.with_suffix(".unsafe.py")
    expected = expected_path.read_bytes() if expected_path.exists() else source
    result = fix_source(source, ALL_RULES, unsafe=unsafe, path=str(path))  # the lint's project index, as the CLI
    fixed = result.source
    assert fixed.decode() == expected.decode()
    # Fixed output parses (both parsers) and a second pass changes nothing.
    cst.parse_module(fixed)
    ast.parse(fixed)
    again = fix_source(fixed, ALL_RULES, unsafe=unsafe, path=str(path))
    assert again.source == fixed and again.applied == 0
    # the diagnostics fixed are those that advertised a fix, and no fix is advertised afterwards
    before = lint_source(source, str(path), ALL_RULES)
    assert len(before) - len(result.diagnostics) == len([d for d in before if applies(d, unsafe)])
    assert not [d for d in result.diagnostics if applies(d, unsafe)]


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_cli_fix_writes_expected_file(path: Path, tmp_path: Path, cli):
    target = tmp_path / path.name
    shutil.copy(path, target)
    first = cli("--fix", "--isolated", "--no-cache", "-q", "--select", "ALL", str(target))  # opt-in rules too
    assert first.returncode in (0, 1), first.stderr
    expected_path = path.with_suffix(".fixed.py")
    expected = expected_path.read_bytes() if expected_path.exists() else path.read_bytes()
    assert target.read_bytes() == expected
    second = cli("--fix", "--isolated", "--no-cache", "-q", "--select", "ALL", str(target))
    assert target.read_bytes() == expected
    assert second.returncode == first.returncode


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_examples(rule):
    """The VALID/INVALID examples in each rule's docstring block are true."""
    assert rule.VALID and rule.INVALID
    for example in rule.VALID:
        assert [d for d in lint_source(example, "x.py", [rule])] == [], example
    for example in rule.INVALID:
        assert [d.code for d in lint_source(example, "x.py", [rule])] == [rule.code], example


def test_rule_triggers_cover_invalid_examples():
    """The prefilter may only skip files the rule could never flag."""
    for rule in ALL_RULES:
        for example in rule.INVALID:
            assert rule.may_match(example) and rule.may_match(example.encode()), (rule.code, example)


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_prefilter_never_changes_results(path: Path, monkeypatch):
    """Linting with the text prefilter disabled gives the same diagnostics."""
    source = path.read_bytes()
    filtered = lint_source(source, str(path), ALL_RULES)
    for rule in ALL_RULES:
        monkeypatch.setattr(rule, "may_match", classmethod(lambda cls, src: True))
    assert lint_source(source, str(path), ALL_RULES) == filtered
