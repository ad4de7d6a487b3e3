"""Apply fixes: the lint pass's own, as text edits, re-parsed, iterated to a fixed point, written atomically.

Fixing lints with the caller's lint function, the one its diagnostics came from (the file's
project index, its environment, the settings), and applies the fixes of those diagnostics as
they are shown (edits.py), so that ``--fix``, ``--diff``, notebooks and the editor apply what the
output advertised, never the result of a second, poorer analysis. Everything outside a fix's span
is kept byte for byte. Overlapping fixes are applied one per round; the file is linted again
between rounds until nothing applicable is left, which also makes ``--fix`` idempotent.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple, Type

from ..diagnostics import Diagnostic
from .edits import apply_fixes, compatible
from ..source.files import temp_prefix

MAX_ROUNDS = 20

Lint = Callable[[bytes], List[Diagnostic]]  # a source -> its diagnostics (fixes included), as the lint pass makes them


class FixError(Exception):
    """A fix produced code that does not parse: the file is left untouched."""


@dataclass
class FixResult:
    source: bytes
    applied: int
    diagnostics: List[Diagnostic] = field(default_factory=list)  # of ``source``, by the same lint: what is left
    applied_codes: Counter = field(default_factory=Counter)  # how many fixes of each code were applied


def fix_with(source: bytes, lint: Lint, unsafe: bool = False,
             diagnostics: Optional[List[Diagnostic]] = None) -> FixResult:
    """``source`` with the fixes of ``lint``'s diagnostics applied, round after round, until none applies.

    ``diagnostics``: ``lint(source)`` when the caller has it already (the lint pass's). Raises FixError
    if a round breaks the parse (nothing is changed then)."""
    if diagnostics is None:
        diagnostics = lint(source)
    applied: Counter = Counter()
    for _ in range(MAX_ROUNDS):
        source, chosen = fix_round(source, diagnostics, unsafe)
        if not chosen:
            break
        applied.update(d.code for d in chosen)
        diagnostics = lint(source)
    return FixResult(source, sum(applied.values()), diagnostics, applied)


def fix_round(source: bytes, diagnostics: Sequence[Diagnostic], unsafe: bool) -> Tuple[bytes, List[Diagnostic]]:
    """``source`` with the compatible applicable fixes of its ``diagnostics`` applied, and the diagnostics
    whose fixes those were; ``(source, [])`` when none applies. Raises FixError if the result does not parse."""
    chosen = compatible(diagnostics, unsafe)
    if not chosen:
        return source, []
    new_source = _edited(source, [d.fix for d in chosen])  # type: ignore[misc]
    if new_source == source:
        return source, []
    _check_parses(new_source)
    return new_source, chosen


def fix_source(source: bytes, rule_types: Sequence[Type], unsafe: bool = False, path: str = "",
               **options) -> FixResult:
    """``fix_with`` the engine's lint of ``path`` (its project index unless ``options`` give ``project``)."""
    from ..engine import lint_source

    return fix_with(source, lambda text: lint_source(text, path, rule_types, **options), unsafe)


def _encoding(source: bytes) -> str:
    """The encoding the parser decodes ``source`` with (its columns count characters of that text)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:  # an unknown encoding: the lint reported TCL001, which has no fix
        return "utf-8"


def _edited(source: bytes, fixes) -> bytes:
    encoding = _encoding(source)
    try:
        return apply_fixes(source.decode(encoding), fixes).encode(encoding)
    except (UnicodeError, LookupError) as error:
        raise FixError(f"a fix cannot be written in the file's encoding ({error}); file left unchanged") from error


def _check_parses(source: bytes) -> None:
    import libcst as cst

    try:
        cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise FixError(f"a fix produced code that does not parse ({error.message}); file left unchanged") from error


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
