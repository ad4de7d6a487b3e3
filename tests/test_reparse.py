"""An editor document's re-parse (reparse.py) gives exactly the tree of a full parse."""

from __future__ import annotations

import random
from pathlib import Path
from typing import List

import libcst as cst
import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.source.precheck import cpython_tree
from torchcopy_lint import walk
from torchcopy_lint.parse.reparse import Reparser
from torchcopy_lint.rules import ALL_RULES

from _support import ROOT, real_files



def _same_tree(reparser: Reparser, source: bytes) -> bool:
    """The reparser's module is node for node the full parse's, and prints back ``source``."""
    try:
        expected = cst.parse_module(source)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            reparser.parse(source, cpython_tree(source))
        return False
    got = reparser.parse(source, cpython_tree(source))
    assert got.deep_equals(expected)
    assert got.bytes == source
    return True


def _edits(source: bytes, rng: random.Random, count: int) -> List[bytes]:
    """Successive versions of ``source``, each one small edit away from the one before, as typed."""
    versions, lines = [], source.splitlines(keepends=True)
    kinds = ["comment", "blank", "rename", "delete", "insert_def", "indent_comment", "join"]
    for _ in range(count):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.choice(kinds)
        if kind == "comment":
            lines.insert(i, b"# edited\n")
        elif kind == "blank":
            lines.insert(i, b"\n")
        elif kind == "rename":
            lines[i] = lines[i].replace(b"x", b"xx", 1)
        elif kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "insert_def":
            lines.insert(i, b"def _added(t):\n    return t.clone().detach()\n")
        elif kind == "indent_comment":
            lines.insert(i, b"    # indented\n")
        elif kind == "join":
            lines[i] = lines[i].rstrip(b"\n") + b"  \n"
        versions.append(b"".join(lines))
    return versions


def _real_files() -> List[Path]:
    return real_files(sorted((ROOT / "examples").glob("*.py")))


def test_first_parse_and_random_edits_give_the_full_parse():
    rng = random.Random(20261123)
    reused = compared = 0
    for path in _real_files():
        source = path.read_bytes()
        reparser = Reparser()
        _same_tree(reparser, source)
        for version in _edits(source, rng, 6):
            compared += _same_tree(reparser, version)
            reused += reparser.reused
    assert compared > 200
    assert reused > 1000, "the reparser hardly re-used anything"


@pytest.mark.parametrize("remembering", [False, True])
def test_lint_results_with_and_without_the_reparser_are_the_same(monkeypatch, remembering):
    """``remembering``: as in the editor's worker, answers per unchanged statement are kept across versions
    (walk.nodes_of_type, positions.py)."""
    monkeypatch.setattr(walk, "_remembering", remembering)
    rng = random.Random(7)
    versions = _edits(b"import torch\n" + b"".join(
        b"def f%d(x, t):\n    a = t.clone().detach()\n    b = torch.tensor(t)\n    return a, b\n\n\n" % i
        for i in range(40)), rng, 30)
    # lines inserted above and removed again: the unchanged statements move (positions.py's cache of positions
    # in statements generated before counts from each statement's first line)
    versions += [b"import os\n\n" + versions[-1], b"import os\n\n\n\n" + versions[-1], versions[-1]]
    reparser = Reparser()
    for version in versions:
        plain = lint_source(version, "doc.py", ALL_RULES, prune=False)
        assert lint_source(version, "doc.py", ALL_RULES, prune=False, reparser=reparser) == plain
    assert reparser.reused > 0


@pytest.mark.parametrize("source", [
    b"\xef\xbb\xbfimport torch\nx = 1\ny = 2\nz = 3\nw = 4\n",  # a BOM: parsed whole
    b"import torch\r\nx = 1\r\ny = 2\r\nz = 3\r\nw = 4\r\n",  # CRLF: parsed whole
    b"def f():\n\tpass\n\n\ndef g():\n    pass\n\n\ndef h():\n  pass\n\n\nx = 1\n",  # indents disagree
    b"x = 1\ny = 2\\\n  + 3\nz = 4\nw = 5\nv = 6",  # a continuation, no final newline
    b"# header\n\n# more\nimport torch\n\n# lead\nx = 1\n\n\n# lead 2\ny = 2\nz = 3\n# footer\n",
    b"x = (\n1)\ny = 2\nz = 3\nw = 4\nv = 5\n",
    b"if x:\n    pass\n# col 0 comment\n    # indented one\ny = 1\nz = 2\nw = 3\n",
])
def test_layouts_that_chunking_must_get_right_or_refuse(source):
    reparser = Reparser()
    assert _same_tree(reparser, source)
    assert _same_tree(reparser, source + (b"" if source.endswith(b"\n") else b"\n") + b"q = 9\n")
