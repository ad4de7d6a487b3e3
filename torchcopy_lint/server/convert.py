"""From the engine's values to LSP's: diagnostics, ranges and text edits.

The engine counts lines from 1 and columns from 1 in code points; LSP counts
both from 0, columns in the negotiated encoding (UTF-16 unless the client offers
another): pygls's position codec converts, given the document's lines.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from .. import codes
from ..diagnostics import Applicability, Diagnostic
from ..fixing.edits import apply_fixes
from ..output.ruledocs import doc_uri, rule_name

SOURCE = "torchcopy-lint"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """The document's lines as LSP counts them (``\\n``, ``\\r\\n`` and ``\\r`` end a line), without the ends."""
    return _LINE_BREAK.split(text)


def to_range(lines: Sequence[str], codec: PositionCodec, line: int, column: int,
             end_line: int, end_column: int) -> lsp.Range:
    """An LSP range from the engine's 1-based (line, column) points, clamped to the document."""
    def point(line: int, column: int) -> lsp.Position:
        index = min(max(line - 1, 0), max(len(lines) - 1, 0))
        return codec.position_to_client_units(lines, lsp.Position(index, max(column - 1, 0)))

    return lsp.Range(point(line, column), point(end_line, end_column))


def severity(code: str) -> lsp.DiagnosticSeverity:
    """The one severity every output format uses (``codes.severity``): meta codes errors, findings warnings.

    No rule flags dead code, so none carries the ``Unnecessary`` tag (clients fade such
    ranges out, which would hide a hazard rather than show it)."""
    return lsp.DiagnosticSeverity.Error if codes.severity(code) == "error" else lsp.DiagnosticSeverity.Warning


def to_lsp(diagnostic: Diagnostic, lines: Sequence[str], codec: PositionCodec) -> lsp.Diagnostic:
    name = rule_name(diagnostic.code)
    href = doc_uri(diagnostic.code)
    fix = diagnostic.fix
    return lsp.Diagnostic(
        range=to_range(lines, codec, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column),
        message=f"{diagnostic.message} ({name})" if name else diagnostic.message,
        severity=severity(diagnostic.code),
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"fix": fix.applicability.value if fix else None},
    )


def fix_edit(diagnostic: Diagnostic, text: str, codec: PositionCodec) -> Optional[lsp.TextEdit]:
    """The diagnostic's fix as one edit; a fix over several lines (TCL109 rewrites the module to add an
    import) as the smallest run of changed lines, so that the editor keeps the rest."""
    fix = diagnostic.fix
    if fix is None:
        return None
    if fix.start_line == fix.end_line:
        return lsp.TextEdit(to_range(split_lines(text), codec, fix.start_line, fix.start_column, fix.end_line,
                                     fix.end_column), fix.content)
    return whole_text_edit(text, apply_fixes(text, [fix]), codec)


def fix_title(diagnostic: Diagnostic) -> str:
    """``Fix TCL103: use `x.detach().clone()` (safe)``: what the edit writes, and how far to trust it."""
    assert diagnostic.fix is not None
    content = " ".join(diagnostic.fix.content.split())
    label = "safe" if diagnostic.fix.applicability is Applicability.SAFE else "unsafe: may change behaviour"
    if "\n" in diagnostic.fix.content.strip() or len(content) > 60:  # a whole block: name the rule instead
        return f"Fix {diagnostic.code} ({rule_name(diagnostic.code) or 'rewrite'}) ({label})"
    return f"Fix {diagnostic.code}: use `{content}` ({label})"


def whole_text_edit(before: str, after: str, codec: PositionCodec) -> lsp.TextEdit:
    """One edit turning ``before`` into ``after``: the changed lines only, so the editor keeps the rest."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    lines = split_lines(before)
    start = lsp.Position(head, 0)
    end_index = len(old) - tail
    if end_index < len(old) or before.endswith(("\n", "\r")):
        end = lsp.Position(end_index, 0)
    else:  # the change reaches the last line, which has no line break
        end = codec.position_to_client_units(lines, lsp.Position(end_index - 1, len(old[-1]))) if old else start
    return lsp.TextEdit(lsp.Range(start, end), "".join(new[head:len(new) - tail]))


# --- "disable TCLxxx for this line" ---------------------------------------------------------------

def noqa_edit(text: str, line: int, code: str, codec: PositionCodec) -> Optional[lsp.TextEdit]:
    """An edit adding ``code`` to the ``# noqa`` of ``line`` (1-based), or adding the comment, exactly as
    ``--add-noqa`` does (add_noqa.noqa_line). None where the line is already suppressed or a comment
    cannot be added without changing the program (the line ends inside a string or after a backslash)."""
    from ..fixing.add_noqa import noqa_line

    new = noqa_line(text, line, [code])
    if new is None:
        return None
    lines = split_lines(text)
    index = line - 1
    start = lsp.Position(index, 0)
    end = codec.position_to_client_units(lines, lsp.Position(index, len(lines[index])))
    return lsp.TextEdit(lsp.Range(start, end), new)
