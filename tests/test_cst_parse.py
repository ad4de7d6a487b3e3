"""cst_parse.parse_module: LibCST's tree and exceptions, without re-validation, and validation back after it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchcopy_lint.parse import cst_parse

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_same_tree_as_libcst(path):
    source = path.read_bytes()
    try:
        expected = cst.parse_module(source)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            cst_parse.parse_module(source)
        return
    found = cst_parse.parse_module(source)
    assert found.deep_equals(expected)
    assert found.code == expected.code


def test_the_same_syntax_errors():
    with pytest.raises(cst.ParserSyntaxError):
        cst_parse.parse_module("def f(:\n    pass\n")


def test_nodes_built_by_hand_are_validated_after_a_parse_and_after_a_failed_one():
    cst_parse.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # a name with spaces: its own validation rejects it
    with pytest.raises(cst.ParserSyntaxError):
        cst_parse.parse_module("(\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    assert cst.CSTNode.__post_init__ is cst_parse._VALIDATE
