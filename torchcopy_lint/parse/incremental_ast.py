"""CPython's tree of an editor's buffer, compiling again only the top-level statements an edit touched.

The structural prefilter (structure.py) and the reparser (reparse.py) read CPython's ``ast`` of the
buffer on every version; on the 1,000-line latency file that compile was ~9-12 of ~40 ms per edit.
Most edits (a keystroke inside a line) keep the number of lines, and then every top-level statement
away from the changed lines has the same text at the same place (on the latency benchmark's edits, a
site in the middle and the last line, 9 lines are compiled: 0.26 ms). :class:`IncrementalTree` keeps
the last version's lines and tree; for a new version with as many lines it compiles only the *regions*
of top-level statements (with the gaps after them) that hold changed lines, one per run of adjacent
such statements, shifts their nodes to their lines and puts the old statements around them. That is
the tree a whole compile gives:

- a region starts where an old top-level statement started (column 0, a fresh logical line: not
  after a line ending in a backslash), after text that parses as before, so CPython's tokenizer
  enters it as it enters a file;
- it ends just before an old top-level statement's first line (unchanged, code at column 0) or at
  the end of the file, and compiled alone it is complete (no open bracket, string or continuation:
  those fail at its end), so the statements after it start fresh as they did;
- the old statements' nodes are CPython's for the same text at the same lines and columns.

Anything else (another line count, carriage returns or form feeds, a ``__future__`` import in a
region, a file not in UTF-8, a region CPython rejects alone, regions over half the file: shifting
their nodes costs more than compiling) compiles the whole text as before, which also gives every
error its usual verdict. A text over ``KEEP_MAX`` bytes is compiled whole and its tree not kept (memory: the
server keeps one per open document). tests/test_incremental_ast.py compares with whole compiles on random edits
of real files.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import List, Optional, Tuple

from ..source.precheck import cpython_tree
from .prune import declares_utf8


#: Bytes of text above which a version's tree is not kept: CPython's tree takes ~80 bytes of memory per byte of
#: source (a 3 MB data file: ~235 MB), and the server keeps a tree per open document.
KEEP_MAX = 1_000_000


class IncrementalTree:
    """``cpython_tree`` of successive versions of one document (see the module docstring)."""

    def __init__(self) -> None:
        self._lines: Optional[List[bytes]] = None
        self._tree: Optional[ast.Module] = None
        self.compiled_lines = 0  # lines compiled for the last version (for tests and benchmarks)

    def tree(self, source: bytes) -> Optional[ast.Module]:
        """CPython's tree of ``source``, None when it rejects it (raises TooDeeplyNested as cpython_tree)."""
        lines = source.splitlines(keepends=True)
        found = self._incremental(source, lines)
        if found is None:
            self._lines = self._tree = None
            self.compiled_lines = len(lines)
            found = cpython_tree(source)
        if found is not None and len(source) <= KEEP_MAX:
            self._lines, self._tree = lines, found
        else:
            self._lines = self._tree = None
        return found

    def _incremental(self, source: bytes, lines: List[bytes]) -> Optional[ast.Module]:
        old_lines, old = self._lines, self._tree
        if old is None or old_lines is None or len(lines) != len(old_lines) or not old.body:
            return None
        if b"\r" in source or b"\x0c" in source or source.startswith(b"\xef\xbb\xbf") or not declares_utf8(source):
            return None
        changed = [i + 1 for i, (line, before) in enumerate(zip(lines, old_lines)) if line != before]  # 1-based
        if not changed:
            self.compiled_lines = 0
            return old  # the same text
        count = len(lines)
        starts, slots = _slots(old)
        # the slots holding a changed line (-1: the lines above the first statement), then runs of adjacent ones
        dirty = sorted({bisect_right(starts, line) - 1 for line in changed})
        runs: List[List[int]] = []
        for index in dirty:
            if runs and index == runs[-1][-1] + 1:
                runs[-1].append(index)
            else:
                runs.append([index])
        compiled_lines = 0
        regions = {}  # the first slot of a run -> the statements compiled for the run
        for run in runs:
            first, last = run[0], run[-1]
            begin = starts[first] if first >= 0 else 1
            end = starts[last + 1] - 1 if last + 1 < len(starts) else count  # 1-based, inclusive
            if begin > 1 and lines[begin - 2].rstrip(b"\r\n").endswith(b"\\"):
                return None  # `a = 1; \` before it: the region would not start a logical line
            compiled_lines += end - begin + 1
            if 2 * compiled_lines > count:
                return None  # shifting the nodes of most of the file costs more than compiling it whole
            region = b"".join(lines[begin - 1:end])
            if b"__future__" in region:
                return None
            try:
                compiled = cpython_tree(region)
            except SyntaxError:  # nested too deeply: the whole compile says so
                return None
            if compiled is None:
                return None
            if begin > 1:
                ast.increment_lineno(compiled, begin - 1)
            regions[first] = (last, compiled.body)
        self.compiled_lines = compiled_lines
        body: List[ast.stmt] = []
        index = -1
        while index < len(slots):
            if index in regions:
                last, statements = regions[index]
                body += statements
                index = last + 1
                continue
            if index >= 0:
                body += slots[index]
            index += 1
        return ast.Module(body=body, type_ignores=[])


def _slots(tree: ast.Module) -> Tuple[List[int], List[List[ast.stmt]]]:
    """The 1-based lines where the old top-level statements start a line (decorators included; a valid file's
    top-level statements start at column 0), ascending, and the statements from each such line to the next
    (``a = 1; b = 2`` share a line: one slot)."""
    starts: List[int] = []
    slots: List[List[ast.stmt]] = []
    previous_end = 0
    for statement in tree.body:
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        if first > previous_end or not slots:
            starts.append(first)
            slots.append([statement])
        else:
            slots[-1].append(statement)
        previous_end = max(previous_end, statement.end_lineno or statement.lineno)
    return starts, slots
