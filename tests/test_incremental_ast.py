"""An editor buffer's CPython tree, compiled again only where an edit changed it (incremental_ast.py), is the
whole compile's tree: the same nodes, lines and columns, and the same verdict on a text CPython rejects."""

from __future__ import annotations

import ast
import random
from pathlib import Path
from typing import List, Optional

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.parse.incremental_ast import IncrementalTree
from torchcopy_lint.source.precheck import TooDeeplyNested, cpython_tree
from torchcopy_lint.parse.reparse import Reparser
from torchcopy_lint.rules import ALL_RULES

from _support import ROOT, real_files


def _dump(tree: Optional[ast.Module]) -> Optional[str]:
    return None if tree is None else ast.dump(tree, include_attributes=True)


def _whole(source: bytes) -> Optional[str]:
    try:
        return _dump(cpython_tree(source))
    except TooDeeplyNested:
        return "too deep"


def _incremental(trees: IncrementalTree, source: bytes) -> Optional[str]:
    try:
        return _dump(trees.tree(source))
    except TooDeeplyNested:
        return "too deep"


def _files() -> List[Path]:
    return real_files(sorted((ROOT / "torchcopy_lint").rglob("*.py")), optim=20, modules=12)


_LETTERS, _OTHERS = b"abcdefghijklmnop", b"qrstuvwxyz"


def _edit(line: bytes, rng: random.Random) -> bytes:
    """One edit that keeps the line count: mostly a letter typed over another (a rename, still valid), else a
    bracket, a quote, a colon or a backslash typed, an indent added or taken away, the line emptied."""
    kind = rng.random()
    letters = [i for i, c in enumerate(line) if c in _LETTERS]
    if kind < 0.55 and letters:
        i = rng.choice(letters)
        return line[:i] + bytes([rng.choice(_OTHERS)]) + line[i + 1:]
    if kind < 0.7 and len(line) > 1:
        i = rng.randrange(len(line) - 1)
        return line[:i] + bytes([rng.choice(b"()[]:#\\'\"=+@")]) + line[i + 1:]
    if kind < 0.8:
        return b"    " + line
    if kind < 0.9:
        return line.lstrip()
    return b"\n" if line.endswith(b"\n") else b""


def test_random_edits_of_real_files_give_the_whole_compile():
    rng = random.Random(20261126)
    compared = incremental = 0
    for path in _files():
        source = path.read_bytes()
        trees = IncrementalTree()
        assert _incremental(trees, source) == _whole(source)
        lines = source.splitlines(keepends=True)
        for _ in range(10):
            if not lines:
                break
            at = rng.randrange(len(lines))
            edited = _edit(lines[at], rng)
            if edited.count(b"\n") != lines[at].count(b"\n"):
                continue
            lines[at] = edited
            version = b"".join(lines)
            assert _incremental(trees, version) == _whole(version), (path, at, edited)
            compared += 1
            incremental += trees.compiled_lines < len(lines)
            if rng.random() < 0.3:  # and back: the next version compiles again from a valid tree
                lines = source.splitlines(keepends=True)
                assert _incremental(trees, source) == _whole(source)
    assert compared > 300
    assert incremental > 100, "hardly any version was compiled incrementally"


HEAD = b"import torch\n\n\ndef f(t):\n    return t.clone()\n\n\n# a comment\nx = 1\n\n\ndef g(t):\n    return t\n"


def test_an_edit_inside_a_line_compiles_only_its_statement():
    trees = IncrementalTree()
    old = trees.tree(HEAD)
    edited = HEAD.replace(b"return t.clone()", b"return t.detach()")
    new = trees.tree(edited)
    assert _dump(new) == _whole(edited)
    assert trees.compiled_lines == 5  # `def f` and the lines after it up to `x = 1`
    assert new.body[0] is old.body[0] and new.body[-1] is old.body[-1] and new.body[1] is not old.body[1]
    assert trees.tree(edited) is new and trees.compiled_lines == 0  # the same text again


@pytest.mark.parametrize("edited", [
    HEAD.replace(b"x = 1\n", b"x = (1\n"),  # a bracket left open: the rest of the file is inside it
    HEAD.replace(b"x = 1\n", b"    x = 1\n"),  # indented under the comment: an error for the whole compile
    HEAD.replace(b"# a comment\n", b"    y = 2\n"),  # indented after `def f`: in f's body for the whole compile
    HEAD.replace(b"# a comment\n", b"'''doc\n").replace(b"\n\n\ndef g", b"\n\n'''\ndef g"),  # a string over lines
    HEAD.replace(b"x = 1\n", b"x = 1; \\\n").replace(b"\n\n\ndef g", b"\nif x: pass\n\ndef g"),  # `; \` then an if
    HEAD.replace(b"# a comment\n", b"else:\n"),  # a dangling else
    HEAD.replace(b"x = 1\n", b"from __future__ import annotations\n"),  # a future import not at the top
])
def test_edits_that_reach_beyond_their_statement_agree_with_the_whole_compile(edited):
    trees = IncrementalTree()
    trees.tree(HEAD)
    assert edited.count(b"\n") == HEAD.count(b"\n")
    assert _incremental(trees, edited) == _whole(edited)
    assert _incremental(trees, HEAD) == _whole(HEAD)


def test_lines_added_or_removed_compile_the_whole_text():
    trees = IncrementalTree()
    trees.tree(HEAD)
    longer = HEAD + b"z = 2\n"
    assert _dump(trees.tree(longer)) == _whole(longer) and trees.compiled_lines == len(longer.splitlines())


def test_the_engine_with_a_document_reparser_reports_as_without():
    source = b"import torch\n" + b"".join(
        b"def f%d(x, t):\n    a = t.clone().detach()\n    b = torch.tensor(t)\n    return a, b\n\n\n" % i
        for i in range(30))
    reparser = Reparser()
    lines = source.splitlines(keepends=True)
    rng = random.Random(3)
    for _ in range(25):
        at = rng.randrange(len(lines))
        lines[at] = lines[at].replace(b"clone().detach()", b"detach().clone()") if rng.random() < 0.5 \
            else lines[at].replace(b"detach().clone()", b"clone().detach()")
        version = b"".join(lines)
        assert lint_source(version, "doc.py", ALL_RULES, prune=False, reparser=reparser) == \
            lint_source(version, "doc.py", ALL_RULES, prune=False)
    assert reparser.trees.compiled_lines < len(lines)


def test_a_big_text_is_compiled_whole_and_its_tree_not_kept(monkeypatch):
    import torchcopy_lint.parse.incremental_ast as incremental

    monkeypatch.setattr(incremental, "KEEP_MAX", len(HEAD) - 1)
    trees = IncrementalTree()
    trees.tree(HEAD)
    assert trees._tree is None
    edited = HEAD.replace(b"return t.clone()", b"return t.detach()")
    assert _dump(trees.tree(edited)) == _whole(edited) and trees.compiled_lines == len(edited.splitlines())
