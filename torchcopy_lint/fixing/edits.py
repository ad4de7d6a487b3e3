"""Diagnostics' fixes as text edits: which to apply together, and applying them.

A diagnostic's fix is a replacement of the text between two 1-based (line, column)
points, columns counted in characters of the decoded source, lines ended by ``\\n``,
``\\r\\n`` or ``\\r`` (what the parser counts). These are the edits the output shows
(JSON, SARIF, the editor's quick fix); ``--fix``, ``--diff``, notebooks' fix and the
editor's fix-all apply exactly them (fixer.py), so that what is shown is what is done.
LibCST-free: the editor and the runner's parent may use it without the engine.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

from ..diagnostics import Applicability, Diagnostic, Fix

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def applies(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Whether ``--fix`` (``--fix --unsafe-fixes`` when ``unsafe``) applies the diagnostic's fix."""
    fix = diagnostic.fix
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def _span(fix: Fix) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    return (fix.start_line, fix.start_column), (fix.end_line, fix.end_column)


def compatible(diagnostics: Iterable[Diagnostic], unsafe: bool) -> List[Diagnostic]:
    """The fixes to apply in one round: those ``applies`` admits, without overlaps, outermost first
    (in source order). A fix left out for an overlap is met again after the others are applied."""
    candidates = sorted((d for d in diagnostics if applies(d, unsafe)),
                        key=lambda d: (_span(d.fix)[0], tuple(-x for x in _span(d.fix)[1])))  # type: ignore[arg-type]
    chosen: List[Diagnostic] = []
    spans: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    for d in candidates:
        start, end = _span(d.fix)  # type: ignore[arg-type]
        if any(start < s_end and s_start < end for s_start, s_end in spans):
            continue
        spans.append((start, end))
        chosen.append(d)
    return chosen


def offsets(text: str) -> List[int]:
    """Where each line of ``text`` starts (one more entry after a final line break)."""
    return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]


def offset(starts: Sequence[int], line: int, column: int) -> int:
    """The index in the text of a 1-based (line, column) point; a line past the end is the end."""
    return starts[min(line, len(starts)) - 1] + column - 1


def apply_fixes(text: str, fixes: Sequence[Fix]) -> str:
    """``text`` with every fix of ``fixes`` (non-overlapping: see ``compatible``) applied."""
    starts = offsets(text)
    spans = sorted(((offset(starts, f.start_line, f.start_column), offset(starts, f.end_line, f.end_column), f.content)
                    for f in fixes), reverse=True)
    for start, end, content in spans:  # from the end, so that earlier offsets hold
        text = text[:start] + content + text[end:]
    return text


def fixed_counts(before: Iterable[Diagnostic], applied: Mapping[str, int], unsafe: bool) -> Dict[str, int]:
    """What ``--fix`` reports fixed, per code: the fixes applied (``applied``, per code), counted as ``before``
    advertised them (a fix that took rounds, or whose result the next round fixed again, counts once)."""
    advertised: Dict[str, int] = {}
    for d in before:
        if applies(d, unsafe):
            advertised[d.code] = advertised.get(d.code, 0) + 1
    counts = {code: min(n, applied.get(code, 0)) for code, n in sorted(advertised.items())}
    return {code: n for code, n in counts.items() if n > 0}
