"""The language server: documents in, diagnostics and code actions out (pygls 2 / lsprotocol).

Linting runs in a worker process (worker.py), scheduled per document by a
debouncer (scheduling.py); a result is published only if its document has not
changed since it was linted. Files, notebooks (LSP 3.17 notebook sync; each code
cell gets its own diagnostics) and cells are addressed by their URIs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..diagnostics import Diagnostic, failed_to_lint, over_budget
from ..output.ruledocs import doc_page
from . import worker as jobs
from .actions import FIX_ALL_KIND, ActionBuilder, fix_all_action, overlaps, wanted, workspace_edit
from .convert import split_lines, to_lsp, whole_text_edit
from .scheduling import Debouncer
from .settings import SECTION, ClientSettings, SettingsResolver

log = logging.getLogger(__name__)

DEFAULT_DELAY_S = 0.05
WATCHED = ("**/pyproject.toml", "**/*.py", "**/*.pyi", "**/*.ipynb")


@dataclass(frozen=True)
class Result:
    """The diagnostics of one document (a file or a notebook cell) at one version of its text."""

    version: Optional[int]
    text: str
    diagnostics: List[Diagnostic]


def _failure_diagnostic(path: str, failure: jobs.WorkerCrashed) -> Diagnostic:
    if isinstance(failure, jobs.WorkerTimeout):
        return over_budget(path, failure.seconds)
    return failed_to_lint(path, "the linting process crashed (the editor session goes on)")


def _path_of(uri: str) -> str:
    return to_fs_path(uri) or uri


class TorchcopyServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchcopy-lint", __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")])],
                save=True),
        )
        self.worker = jobs.LintWorker()
        self.resolver = SettingsResolver(self.warn)
        self.debouncer = Debouncer(self.lint, DEFAULT_DELAY_S)
        self.results: Dict[str, Result] = {}  # by document (file or cell) URI
        self.file_listeners: List[Callable[[Sequence[str]], None]] = []
        self._warned: set = set()

    # --- settings -------------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"torchcopy-lint: {message}"))

    def apply_client_settings(self, raw: object) -> None:
        settings, problems = ClientSettings.from_client(raw)
        for problem in problems:
            self.warn(problem)
        self.resolver.client = settings
        if settings.delay_ms is not None:
            self.debouncer.delay = max(settings.delay_ms, 0) / 1000

    def on_files_changed(self, listener: Callable[[Sequence[str]], None]) -> None:
        """Run ``listener(paths)`` in the server when the client reports files changed on disk.

        Caches inside the worker (the project index) register in ``worker.INVALIDATORS``."""
        self.file_listeners.append(listener)

    def relint_all(self) -> None:
        documents = list(self.workspace.text_documents.values()) + list(self.workspace.notebook_documents.values())
        for document in documents:
            if self._is_lintable(document.uri):
                self.debouncer.now(document.uri)

    # --- linting --------------------------------------------------------------------------------

    def _document(self, uri: str):
        return self.workspace.text_documents.get(unquote(uri))

    def _notebook(self, uri: str) -> Optional[lsp.NotebookDocument]:
        return self.workspace.notebook_documents.get(unquote(uri))

    def _is_lintable(self, uri: str) -> bool:
        if self._notebook(uri) is not None:
            return True
        document = self._document(uri)
        if document is None or self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return False  # cells are linted with their notebook
        return document.language_id == "python" or uri.endswith((".py", ".pyi"))

    def document_event(self, uri: str, debounce: bool) -> None:
        """A file was opened or saved (lint now) or changed (debounced)."""
        if not self._is_lintable(uri):
            return
        if debounce:
            self.debouncer.changed(uri)
        else:
            self.debouncer.now(uri)

    async def lint(self, key: str) -> None:
        if self._notebook(key) is not None:
            await self._lint_notebook(key)
        elif self._document(key) is not None:
            await self._lint_file(key)

    async def _run(self, fn, path: str, *args) -> List:
        """Lint in the worker; a crash or a hang becomes a diagnostic (TCL003 / TCL004)."""
        try:
            return await self.worker.run(fn, *args, timeout=self.resolver.timeout_for(path))
        except jobs.WorkerCrashed as failure:
            return [_failure_diagnostic(path, failure)]

    async def _lint_file(self, uri: str) -> None:
        document = self._document(uri)
        version, text, path = document.version, document.source, _path_of(uri)
        codes = self.resolver.codes_for(path)
        start = time.perf_counter()
        diagnostics = await self._run(jobs.lint_text, path, text, path, codes)
        log.info("linted %s version %s in %.1f ms (worker round trip)", uri, version,
                 (time.perf_counter() - start) * 1000)
        current = self._document(uri)
        if current is None or current.version != version:
            return  # stale: a newer lint is scheduled
        self._publish(uri, Result(version, text, diagnostics))

    async def _lint_notebook(self, uri: str) -> None:
        notebook = self._notebook(uri)
        version, path = notebook.version, _path_of(uri)
        cells = self._code_cells(notebook)
        texts = tuple(c.source for c in cells)
        found = await self._run(jobs.lint_cells, path, texts, path, self.resolver.codes_for(path))
        current = self._notebook(uri)
        if current is None or current.version != version:
            return
        by_cell: List[List[Diagnostic]] = [[] for _ in cells]
        for item in found:
            if isinstance(item, Diagnostic):  # the worker crashed: report it on the first cell
                by_cell[0:1] = [[item]] if by_cell else []
            else:
                by_cell[item[0]].append(item[1])
        for cell, text, diagnostics in zip(cells, texts, by_cell):
            self._publish(cell.uri, Result(cell.version, text, diagnostics))

    def _code_cells(self, notebook: lsp.NotebookDocument) -> list:
        """The notebook's Python code cells (their text documents), in notebook order."""
        cells = [self._document(cell.document) for cell in notebook.cells if cell.kind == lsp.NotebookCellKind.Code]
        return [c for c in cells if c is not None and c.language_id == "python"]

    def _publish(self, uri: str, result: Result) -> None:
        self.results[uri] = result
        lines = split_lines(result.text)
        codec = self.workspace.position_codec
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=result.version, diagnostics=[to_lsp(d, lines, codec) for d in result.diagnostics]))

    def clear(self, uri: str) -> None:
        self.results.pop(uri, None)
        self.debouncer.forget(uri)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    async def current_result(self, uri: str) -> Optional[Result]:
        """The diagnostics of the document as it is now, linting it first if the last result is stale."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        key = notebook.uri if notebook is not None else uri
        for _ in range(3):
            document = self._document(uri)
            if document is None:
                return None
            result = self.results.get(uri)
            if result is not None and result.version == document.version and result.text == document.source:
                return result
            await self.debouncer.now(key)
        return None

    # --- code actions and hover -----------------------------------------------------------------

    async def code_actions(self, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
        uri = params.text_document.uri
        result = await self.current_result(uri)
        if result is None:
            return []
        capabilities = self.client_capabilities.workspace
        document_changes = bool(capabilities and capabilities.workspace_edit
                                and capabilities.workspace_edit.document_changes)
        codec = self.workspace.position_codec
        builder = ActionBuilder(uri, result.version, result.text, codec, document_changes)
        only = params.context.only
        actions: List[lsp.CodeAction] = []
        for diagnostic in result.diagnostics:
            if overlaps(diagnostic, params.range, builder.lines, codec):
                actions.extend(builder.for_diagnostic(diagnostic, only))
        if wanted(only, FIX_ALL_KIND) and any(d.fix for d in result.diagnostics):
            notebook = self.workspace.get_notebook_document(cell_uri=uri)
            if notebook is not None:
                action = await self._fix_all_notebook(notebook, document_changes)
                action = action or builder.fix_all_cell(result.diagnostics)
            else:
                path = _path_of(uri)
                fixed = await self.worker.run(jobs.fix_text, result.text, path, self.resolver.codes_for(path),
                                              timeout=self.resolver.timeout_for(path))
                action = builder.fix_all([whole_text_edit(result.text, fixed, codec)]) if fixed else None
            if action is not None:
                actions.append(action)
        return actions

    async def _fix_all_notebook(self, notebook: lsp.NotebookDocument, document_changes: bool
                                ) -> Optional[lsp.CodeAction]:
        """``--fix`` on the whole notebook (one program): an edit per changed cell."""
        cells = self._code_cells(notebook)
        texts = tuple(c.source for c in cells)
        path = _path_of(notebook.uri)
        fixed = await self.worker.run(jobs.fix_cells, texts, path, self.resolver.codes_for(path),
                                      timeout=self.resolver.timeout_for(path))
        if not fixed:
            return None
        codec = self.workspace.position_codec
        edits = [(cell.uri, cell.version, [whole_text_edit(old, new, codec)])
                 for cell, old, new in zip(cells, texts, fixed) if old != new]
        return fix_all_action(workspace_edit(edits, document_changes)) if edits else None

    def hover(self, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        result = self.results.get(params.text_document.uri)
        if result is None:
            return None
        lines = split_lines(result.text)
        at = lsp.Range(params.position, params.position)
        codes = {d.code for d in result.diagnostics if overlaps(d, at, lines, self.workspace.position_codec)}
        pages = [page for page in (doc_page(code) for code in sorted(codes)) if page]
        if not pages:
            return None
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n---\n\n".join(pages)))

    def files_changed(self, paths: Sequence[str]) -> None:
        """Files changed on disk: tell the settings, every listener and the worker (the project index),
        then re-lint the open documents (their results may depend on the changed files)."""
        self.resolver.files_changed(paths)
        for listener in self.file_listeners:
            try:
                listener(paths)
            except Exception:
                log.exception("a file-change listener failed")
        asyncio.ensure_future(self._invalidate_worker(paths))

    async def _invalidate_worker(self, paths: Sequence[str]) -> None:
        try:
            await self.worker.run(jobs.files_changed, tuple(paths))
        except Exception:
            log.exception("worker cache invalidation failed")
        self.relint_all()


def create_server() -> TorchcopyServer:
    server = TorchcopyServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TorchcopyServer, params: lsp.InitializeParams) -> None:
        ls.apply_client_settings(params.initialization_options)
        ls.worker.warm_up()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: TorchcopyServer, params: lsp.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        watched = workspace and workspace.did_change_watched_files
        if watched and watched.dynamic_registration:
            options = lsp.DidChangeWatchedFilesRegistrationOptions(
                watchers=[lsp.FileSystemWatcher(glob_pattern=g) for g in WATCHED])
            try:
                await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
                    id="torchcopy-lint-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=options)]))
            except Exception:  # the client offered it and failed: files changed on disk go unnoticed
                log.warning("could not register for workspace/didChangeWatchedFiles", exc_info=True)
        if workspace and workspace.configuration:
            try:
                values = await ls.workspace_configuration_async(lsp.ConfigurationParams(
                    items=[lsp.ConfigurationItem(section=SECTION)]))
            except Exception:  # a client may advertise it and still fail: keep the defaults
                log.exception("workspace/configuration failed")
            else:
                if values and values[0]:
                    ls.apply_client_settings(values[0])
                    ls.relint_all()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TorchcopyServer, params: lsp.DidChangeConfigurationParams) -> None:
        if params.settings:
            ls.apply_client_settings(params.settings)
            ls.relint_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchcopyServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.document_event(params.text_document.uri, debounce=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchcopyServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.document_event(params.text_document.uri, debounce=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchcopyServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.document_event(params.text_document.uri, debounce=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchcopyServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.clear(params.text_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: TorchcopyServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.debouncer.now(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: TorchcopyServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells and params.change.cells.structure
        for cell in (structure and structure.did_close) or []:
            ls.clear(cell.uri)
        ls.debouncer.changed(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TorchcopyServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.debouncer.now(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TorchcopyServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.debouncer.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.clear(cell.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: TorchcopyServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.files_changed([os.path.abspath(_path_of(change.uri)) for change in params.changes])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False))
    async def code_action(ls: TorchcopyServer, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
        try:
            return await ls.code_actions(params)
        except Exception:
            log.exception("code actions failed for %s", params.text_document.uri)
            return []

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchcopyServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        return ls.hover(params)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: TorchcopyServer, params: None) -> None:
        ls.worker.close()

    return server
