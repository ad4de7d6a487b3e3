"""Code actions: a quick fix per diagnostic, "disable TCLxxx for this line", and fix-all-safe.

Fix-all is the kind ``source.fixAll.torchcopy-lint`` (so ``editor.codeActionsOnSave``
style settings can ask for it); it is ``--fix`` (safe fixes, iterated to a fixed
point) applied to the buffer, and is computed by the caller in the worker.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from ..diagnostics import Applicability, Diagnostic
from ..fixing.edits import compatible
from .convert import fix_edit, fix_title, noqa_edit, split_lines, to_lsp, to_range

FIX_ALL_KIND = "source.fixAll.torchcopy-lint"
QUICKFIX = lsp.CodeActionKind.QuickFix


def wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    """Whether the client's ``only`` filter admits ``kind`` (hierarchical: ``source`` admits ``source.fixAll.x``)."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def overlaps(diagnostic: Diagnostic, selection: lsp.Range, lines: Sequence[str], codec: PositionCodec) -> bool:
    r = to_range(lines, codec, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)
    before = (r.end.line, r.end.character) < (selection.start.line, selection.start.character)
    after = (r.start.line, r.start.character) > (selection.end.line, selection.end.character)
    return not (before or after)


def workspace_edit(edits: Sequence[Tuple[str, Optional[int], List[lsp.TextEdit]]],
                   document_changes: bool) -> lsp.WorkspaceEdit:
    """Edits of one or more documents (a notebook's cells), versioned when the client supports it."""
    if document_changes:
        return lsp.WorkspaceEdit(document_changes=[
            lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), changes)
            for uri, version, changes in edits])
    return lsp.WorkspaceEdit(changes={uri: changes for uri, _, changes in edits})


def fix_all_action(edit: lsp.WorkspaceEdit) -> lsp.CodeAction:
    return lsp.CodeAction(title="Fix all safe torchcopy-lint issues", kind=FIX_ALL_KIND, edit=edit)


class ActionBuilder:
    """Actions for one document (a file, or a notebook cell) at one version."""

    def __init__(self, uri: str, version: Optional[int], text: str, codec: PositionCodec,
                 document_changes: bool) -> None:
        self.uri = uri
        self.version = version
        self.text = text
        self.lines = split_lines(text)
        self.codec = codec
        self.document_changes = document_changes

    def _edit(self, edits: List[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        return workspace_edit([(self.uri, self.version, edits)], self.document_changes)

    def for_diagnostic(self, diagnostic: Diagnostic, only: Optional[Sequence[str]]) -> List[lsp.CodeAction]:
        if not wanted(only, QUICKFIX):
            return []
        out = []
        reported = [to_lsp(diagnostic, self.lines, self.codec)]
        edit = fix_edit(diagnostic, self.text, self.codec)
        if edit is not None:
            safe = diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE
            out.append(lsp.CodeAction(title=fix_title(diagnostic), kind=QUICKFIX, diagnostics=reported,
                                      edit=self._edit([edit]), is_preferred=safe))
        noqa = noqa_edit(self.text, diagnostic.line, diagnostic.code, self.codec)
        if noqa is not None:
            out.append(lsp.CodeAction(title=f"Disable {diagnostic.code} for this line", kind=QUICKFIX,
                                      diagnostics=reported, edit=self._edit([noqa])))
        return out

    def fix_all(self, edits: List[lsp.TextEdit]) -> lsp.CodeAction:
        return fix_all_action(self._edit(edits))

    def fix_all_cell(self, diagnostics: Sequence[Diagnostic]) -> Optional[lsp.CodeAction]:
        """Fix-all in a notebook cell: its safe fixes, one round, overlapping ones left out."""
        chosen = compatible(diagnostics, unsafe=False)
        edits = [fix_edit(d, self.text, self.codec) for d in chosen]
        return self.fix_all([e for e in edits if e is not None]) if edits else None
