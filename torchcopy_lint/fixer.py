"""Apply fixes: re-parsed, iterated to a fixed point, written atomically.

Fixes are node replacements on the CST, so everything outside the replaced
expression (comments, formatting, encoding) is kept byte for byte. Overlapping
fixes are applied one per round; the file is re-parsed and re-linted between
rounds until nothing applicable is left, which also makes ``--fix`` idempotent.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Sequence, Type

import libcst as cst

from .diagnostics import Applicability
from .engine import ParsedFile, Rule, Violation, effective_applicability, parse
from .files import temp_prefix

MAX_ROUNDS = 20


class FixError(Exception):
    """A fix produced code that does not parse: the file is left untouched."""


@dataclass
class FixResult:
    source: bytes
    applied: int


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: Dict[int, cst.CSTNode]) -> None:
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.replacements.get(id(original_node), updated_node)


def _applicable(parsed: ParsedFile, unsafe: bool) -> List[Violation]:
    """Unsuppressed fixable violations, without overlaps (outermost-first, in source order)."""
    chosen: List[Violation] = []
    spans = []
    candidates = []
    for v in parsed.unsuppressed():
        if v.fix is None:
            continue
        if effective_applicability(parsed, v.fix) is Applicability.UNSAFE and not unsafe:
            continue
        pos = parsed.position(v.fix.target)
        candidates.append(((pos.start.line, pos.start.column), (pos.end.line, pos.end.column), v))
    candidates.sort(key=lambda c: (c[0], (-c[1][0], -c[1][1])))
    for start, end, v in candidates:
        if any(start < s_end and s_start < end for s_start, s_end in spans):
            continue
        spans.append((start, end))
        chosen.append(v)
    return chosen


def fix_source(source: bytes, rule_types: Sequence[Type[Rule]], unsafe: bool = False) -> FixResult:
    """The source with every applicable fix applied. Raises FixError if a round breaks the parse."""
    applied = 0
    for _ in range(MAX_ROUNDS):
        parsed = parse(source, rule_types)
        if parsed is None:
            break
        chosen = _applicable(parsed, unsafe)
        if not chosen:
            break
        new_module = parsed.module.visit(_Replacer({id(v.fix.target): v.fix.replacement for v in chosen}))  # type: ignore[union-attr]
        new_source = new_module.bytes
        try:
            cst.parse_module(new_source)
        except cst.ParserSyntaxError as error:
            raise FixError(f"a fix produced code that does not parse ({error.message}); file left unchanged") from error
        if new_source == source:
            break
        source = new_source
        applied += len(chosen)
    return FixResult(source, applied)


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` by ``data`` so that a crash leaves either the old or the new file, never half."""
    path = os.path.realpath(path)  # write through a symlink, don't replace the link by a file
    directory = os.path.dirname(path)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(os.getpid()), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
