"""The language server, driven by a real LSP client over stdio (pytest-lsp): `torchcopy-lint server`.

One server serves the module's tests (each test opens its own documents); shutdown/exit
gets a server of its own.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Callable, List, Sequence

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")  # Python 3.10+ (the project supports 3.9 without the server)
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from torchcopy_lint.fixing.fixer import fix_source  # noqa: E402
from torchcopy_lint.rules import ALL_RULES  # noqa: E402

SERVER = [sys.executable, "-m", "torchcopy_lint", "server"]
HAZARD = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"
TIMEOUT = 20  # seconds; a loaded CI machine, not a target

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        lsp_client.registrations = params.registrations

    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=None))
    yield
    await lsp_client.shutdown_session()


# --- helpers ----------------------------------------------------------------------------------------

class Doc:
    """A document the test edits as the editor would: full-text changes with increasing versions."""

    def __init__(self, client: LanguageClient, path: Path, text: str) -> None:
        self.client, self.path, self.text, self.version = client, path, text, 1
        self.uri = path.as_uri()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))

    def change(self, text: str) -> None:
        self.text, self.version = text, self.version + 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def apply(self, edit: lsp.WorkspaceEdit) -> None:
        edits: List[lsp.TextEdit] = []
        for change in edit.document_changes or []:
            assert change.text_document.uri == self.uri
            edits.extend(change.edits)
        edits.extend((edit.changes or {}).get(self.uri, []))
        assert edits
        self.change(apply_edits(self.text, edits))

    async def actions(self, at: lsp.Range, only: Sequence[str] = ()) -> List[lsp.CodeAction]:
        return await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(self.uri), range=at,
            context=lsp.CodeActionContext(diagnostics=[], only=list(only) or None)))


def apply_edits(text: str, edits: Sequence[lsp.TextEdit]) -> str:
    """Apply LSP edits (ASCII text, so UTF-16 units are characters) from the last to the first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: lsp.Position) -> int:
        return starts[min(p.line, len(lines))] + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


async def diagnostics_where(client: LanguageClient, uri: str, ok: Callable[[list], bool]) -> list:
    """The diagnostics published for ``uri`` once they satisfy ``ok`` (fails after TIMEOUT)."""
    async def wait():
        while uri not in client.diagnostics or not ok(client.diagnostics[uri]):
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return client.diagnostics[uri]
    return await asyncio.wait_for(wait(), TIMEOUT)


def codes(diagnostics) -> List[str]:
    return sorted(d.code for d in diagnostics)


def whole(text: str) -> lsp.Range:
    return lsp.Range(lsp.Position(0, 0), lsp.Position(len(text.splitlines()), 0))


# --- tests ------------------------------------------------------------------------------------------

async def test_open_publishes_diagnostics_with_docs_link(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "a.py", HAZARD)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    assert found.code == "TCL103" and found.source == "torchcopy-lint"
    assert found.severity == lsp.DiagnosticSeverity.Warning
    assert "clone-then-detach" in found.message
    assert found.range == lsp.Range(lsp.Position(2, 4), lsp.Position(2, 22))
    href = found.code_description.href
    assert href.startswith("file://") and href.endswith("/rules/TCL103.md")
    assert Path(href[len("file://"):]).is_file()


async def test_change_relints_and_clears(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "b.py", HAZARD)
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL103"])
    doc.change("import torch\nx = torch.randn(3)\ny = x.detach().clone()\n")
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)
    doc.change(HAZARD + "z = torch.tensor(x)\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101", "TCL103"])


async def test_quick_fix_is_applied_and_relinted(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "c.py", HAZARD)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    actions = await doc.actions(found.range, only=[lsp.CodeActionKind.QuickFix])
    titles = [a.title for a in actions]
    assert titles == ["Fix TCL103: use `x.detach().clone()` (safe)", "Disable TCL103 for this line"]
    assert actions[0].kind == lsp.CodeActionKind.QuickFix and actions[0].is_preferred
    doc.apply(actions[0].edit)
    assert doc.text == "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.detach().clone()\n"
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)


async def test_unsafe_fix_is_labelled(client: LanguageClient, tmp_path):
    text = "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, p: torch.Tensor):\n        p.data.add_(1)\n"
    doc = Doc(client, tmp_path / "d.py", text)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    assert found.code == "TCL104"
    fixes = [a for a in await doc.actions(found.range) if a.title.startswith("Fix ")]
    assert len(fixes) == 1 and fixes[0].title.endswith("(unsafe: may change behaviour)")
    assert not fixes[0].is_preferred


async def test_fix_all_matches_the_cli_and_leaves_unsafe_sites(client: LanguageClient, tmp_path):
    text = ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, p: torch.Tensor):\n        # keep me\n"
            "        a = torch.tensor(p)  # and me\n        b = p.clone().detach()\n"
            "        c = p.clone().detach().clone().detach()\n        p.data.add_(1)\n        return a, b, c\n")
    doc = Doc(client, tmp_path / "e.py", text)
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 4)
    actions = await doc.actions(whole(text), only=[lsp.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.torchcopy-lint"]
    doc.apply(actions[0].edit)
    assert doc.text == fix_source(text.encode(), ALL_RULES).source.decode()
    assert "# keep me" in doc.text and "# and me" in doc.text
    remaining = await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104"])
    assert len(remaining) == 1
    # only=quickfix: no fix-all; only=source.fixAll: no quick fixes
    assert all(a.kind == "quickfix" for a in await doc.actions(whole(doc.text), only=["quickfix"]))


async def test_noqa_action_adds_and_merges(client: LanguageClient, tmp_path):
    text = HAZARD.replace("detach()\n", "detach(); z = torch.tensor(x)  # noqa: TCL101\n") + "w = torch.tensor(x)\n"
    doc = Doc(client, tmp_path / "f.py", text)
    found = await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101", "TCL103"])
    for diagnostic in found:
        (disable,) = [a for a in await doc.actions(diagnostic.range) if a.title.startswith("Disable")]
        assert disable.title == f"Disable {diagnostic.code} for this line"
        doc.apply(disable.edit)
    assert doc.text.splitlines()[2:] == [
        "y = x.clone().detach(); z = torch.tensor(x)  # noqa: TCL101, TCL103",
        "w = torch.tensor(x)  # noqa: TCL101",
    ]
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)


async def test_noqa_not_offered_where_a_comment_would_change_the_program(client: LanguageClient, tmp_path):
    text = 'import torch\nx = torch.randn(3, requires_grad=True)\ny = (x.clone().detach(), """\n""")\n'
    doc = Doc(client, tmp_path / "g.py", text)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    titles = [a.title for a in await doc.actions(found.range)]
    assert titles == ["Fix TCL103: use `x.detach().clone()` (safe)", "Fix all safe torchcopy-lint issues"]


async def test_reads_the_projects_configuration(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchcopy-lint]\nignore = ["TCL103"]\n')
    (tmp_path / "pkg").mkdir()
    doc = Doc(client, tmp_path / "pkg" / "h.py", HAZARD + "z = torch.tensor(x)\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101"])


async def test_a_file_that_crashes_the_parser_does_not_kill_the_server(client: LanguageClient, tmp_path):
    deep = "import torch\nx = torch.randn(3)\ny = torch.tensor(" + "(" * 3000 + "x" + ")" * 3000 + ")\n"
    bad = Doc(client, tmp_path / "deep.py", deep)
    found = await diagnostics_where(client, bad.uri, lambda ds: len(ds) > 0)
    assert codes(found) == ["TCL001"]  # the engine's CPython pre-check answers before LibCST's parser could crash
    assert found[0].severity == lsp.DiagnosticSeverity.Error
    good = Doc(client, tmp_path / "after.py", HAZARD)  # the server still answers
    await diagnostics_where(client, good.uri, lambda ds: codes(ds) == ["TCL103"])


async def test_syntax_error_is_reported(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "s.py", "import torch\nx = torch.tensor(y\n")
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    assert found.code == "TCL001" and found.severity == lsp.DiagnosticSeverity.Error


def open_notebook(client: LanguageClient, path: Path, sources: Sequence[str], kinds: Sequence) -> List[str]:
    """Open a notebook (notebook sync, as VS Code does); the cells' URIs."""
    cells = [f"vscode-notebook-cell:{path}#c{i}" for i in range(len(sources))]
    notebook = lsp.NotebookDocument(uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
                                    cells=[lsp.NotebookCell(kind=k, document=c) for k, c in zip(kinds, cells)])
    documents = [lsp.TextDocumentItem(uri=c, version=1, text=s, language_id="python" if k == CODE else "markdown")
                 for c, k, s in zip(cells, kinds, sources)]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(notebook, documents))
    return cells


def edit_cell(client: LanguageClient, path: Path, version: int, cell: str, text: str) -> None:
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
        notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=version, uri=path.as_uri()),
        change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
            lsp.NotebookDocumentCellContentChanges(
                document=lsp.VersionedTextDocumentIdentifier(uri=cell, version=version),
                changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)])]))))


CODE, MARKUP = lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup


async def test_notebook_cells_are_one_program(client: LanguageClient, tmp_path):
    path = tmp_path / "n.ipynb"
    sources = ["import torch\n%matplotlib inline\nx = torch.randn(3, requires_grad=True)", "# markdown",
               "y = x.clone().detach()\n"]
    cells = open_notebook(client, path, sources, [CODE, MARKUP, CODE])
    (found,) = await diagnostics_where(client, cells[2], lambda ds: len(ds) == 1)
    assert found.code == "TCL103" and found.range.start == lsp.Position(0, 4)
    assert len(await diagnostics_where(client, cells[0], lambda ds: True)) == 0
    # an edit in a cell re-lints the notebook
    edit_cell(client, path, 2, cells[2], "y = x.detach().clone()\n")
    await diagnostics_where(client, cells[2], lambda ds: len(ds) == 0)


async def test_notebook_fix_all_and_quick_fix(client: LanguageClient, tmp_path):
    path = tmp_path / "fix.ipynb"
    sources = ["import torch\nx = torch.randn(3, requires_grad=True)\n", "y = x.clone().detach()\nz = torch.tensor(x)\n"]
    cells = open_notebook(client, path, sources, [CODE, CODE])
    found = await diagnostics_where(client, cells[1], lambda ds: codes(ds) == ["TCL101", "TCL103"])
    fix_all = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(cells[1]), range=whole(sources[1]),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll])))
    (change,) = fix_all[0].edit.document_changes  # only the cell with hazards changes
    assert change.text_document.uri == cells[1]
    fixed = apply_edits(sources[1], change.edits)
    assert fixed == "y = x.detach().clone()\nz = x.detach().clone()\n"
    edit_cell(client, path, 2, cells[1], fixed)
    await diagnostics_where(client, cells[1], lambda ds: len(ds) == 0)
    assert {d.code: d.range.start.line for d in found} == {"TCL103": 0, "TCL101": 1}  # the cell's own lines


async def test_close_clears(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "k.py", HAZARD)
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(doc.uri)))
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)


async def test_hover_shows_the_rules_docs(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "hover.py", HAZARD)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(doc.uri), found.range.start))
    assert hover.contents.value.startswith("# clone-then-detach (TCL103)")
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(doc.uri), lsp.Position(0, 0)))
    assert nothing is None


async def test_watched_pyproject_change_relints(client: LanguageClient, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.torchcopy-lint]\nignore = ["TCL101"]\n')
    doc = Doc(client, tmp_path / "w.py", HAZARD + "z = torch.tensor(x)\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL103"])
    pyproject.write_text('[tool.torchcopy-lint]\nignore = ["TCL103"]\n')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri=pyproject.as_uri(), type=lsp.FileChangeType.Changed)]))
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101"])
    (registration,) = client.registrations  # the client offered dynamic registration: the server asked
    assert registration.register_options["watchers"][0] == {"globPattern": "**/pyproject.toml"}


async def test_client_settings_override_select_and_ignore(client: LanguageClient, tmp_path):
    doc = Doc(client, tmp_path / "o.py", HAZARD + "z = torch.tensor(x)\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101", "TCL103"])
    try:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"torchcopy-lint": {"select": ["TCL1"], "ignore": ["TCL103"]}}))
        await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101"])
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"torchcopy-lint": {"select": ["TCL103", "TCL999"]}}))
        await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL103"])
        assert any("unknown rule selector 'TCL999'" in m.message for m in client.messages)  # sent before
    finally:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"torchcopy-lint": {}}))
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101", "TCL103"])


async def test_opt_in_rule_follows_the_selection(client: LanguageClient, tmp_path):
    """TCL119 is off by default, on with the editor setting `select: ["ALL"]`, off again with a prefix (as the CLI)."""
    text = ("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(2, 2)\n        self.fc.weight.data.zero_()\n\n    def forward(self, x):\n"
            "        y = self.fc(x)\n        self.fc.weight.data.add_(1)\n        return y\n")
    doc = Doc(client, tmp_path / "net.py", text)
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104"])
    try:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"torchcopy-lint": {"select": ["ALL"]}}))
        await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104", "TCL119"])
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"torchcopy-lint": {"select": ["TCL1"]}}))
        await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104"])
    finally:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"torchcopy-lint": {}}))
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104"])


async def test_shutdown_and_exit():
    own = await ClientServerConfig(server_command=SERVER).start()
    try:
        await own.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
        await own.shutdown_session()  # shutdown, then exit, then wait for the process
        assert own._server.returncode == 0
    finally:
        await own.stop()


async def test_notebook_broken_cell_does_not_hide_the_others(client: LanguageClient, tmp_path):
    path = tmp_path / "broken.ipynb"
    sources = ["import torch\nx = torch.randn(3, requires_grad=True)\n", "y = (\n", "!pip list\nz = x.clone().detach()\n"]
    cells = open_notebook(client, path, sources, [CODE, CODE, CODE])
    assert codes(await diagnostics_where(client, cells[1], lambda ds: len(ds) == 1)) == ["TCL001"]
    (found,) = await diagnostics_where(client, cells[2], lambda ds: len(ds) == 1)
    assert found.code == "TCL103" and found.range.start == lsp.Position(1, 4)


async def test_a_file_over_its_time_budget_is_reported_and_the_worker_replaced(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchcopy-lint]\nfile-timeout = 0.001\n")
    big = HAZARD + "".join(f"def f{i}(t: torch.Tensor):\n    return t.clone().detach()\n" for i in range(500))
    slow = Doc(client, tmp_path / "slow.py", big)  # a small file can lint in under a millisecond
    (found,) = await diagnostics_where(client, slow.uri, lambda ds: len(ds) == 1)
    assert found.code == "TCL004" and found.severity == lsp.DiagnosticSeverity.Error
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text("[tool.torchcopy-lint]\nfile-timeout = 0\n")
    good = Doc(client, tmp_path / "other" / "fine.py", HAZARD)
    await diagnostics_where(client, good.uri, lambda ds: codes(ds) == ["TCL103"])


async def test_positions_are_utf16_and_partial_changes_apply(client: LanguageClient, tmp_path):
    text = 'import torch\nx = torch.randn(3, requires_grad=True)\ns = "😋é"; y = x.clone().detach()\n'
    doc = Doc(client, tmp_path / "u.py", text)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 1)
    # 14 code points before the call; the emoji is 2 UTF-16 units (4 UTF-8 bytes): character 15
    assert found.range == lsp.Range(lsp.Position(2, 15), lsp.Position(2, 33))
    (fix,) = [a for a in await doc.actions(found.range, only=["quickfix"]) if a.title.startswith("Fix")]
    assert fix.edit.document_changes[0].edits[0].range == found.range
    # an incremental edit (as editors send them): swap the two calls in place
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=2),
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(2, 17), lsp.Position(2, 33)),
                                              text="detach().clone()")]))
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)


async def test_project_index_follows_other_files_changing_on_disk(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    helpers = tmp_path / "helpers.py"
    helpers.write_text("import torch\n\ndef make() -> torch.Tensor:\n    return torch.randn(3)\n")
    doc = Doc(client, tmp_path / "main.py", "import torch\nfrom helpers import make\n\ny = torch.tensor(make())\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101"])  # known from helpers.py
    helpers.write_text("def make():\n    return [1, 2]\n")
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri=helpers.as_uri(), type=lsp.FileChangeType.Changed)]))
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)
    # without a file watcher: the next lint of main.py sees helpers.py changed (the index stats its files)
    helpers.write_text("import torch\n\ndef make() -> torch.Tensor:\n    return torch.zeros(2)\n")
    doc.change(doc.text + "z = 1\n")
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101"])


async def test_a_fix_that_rewrites_the_module_edits_only_the_changed_lines(client: LanguageClient, tmp_path):
    text = ("import torch\n\nmodel = torch.nn.Linear(2, 2)\nbest = model.state_dict()\n"
            "loss = model(torch.ones(2)).sum()\nloss.backward()\nmodel.load_state_dict(best)\n")
    doc = Doc(client, tmp_path / "snap.py", text)
    (found,) = await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL109"])
    (fix,) = [a for a in await doc.actions(found.range, only=["quickfix"]) if a.title.startswith("Fix")]
    assert fix.title == "Fix TCL109 (live-state-dict) (unsafe: may change behaviour)"
    (edit,) = fix.edit.document_changes[0].edits
    assert (edit.range.start.line, edit.range.end.line) == (0, 4)  # not the whole file: lines 1-4 change
    doc.apply(fix.edit)
    snapshot = "best = copy.deepcopy(model.state_dict())"
    assert doc.text == "import copy\n" + text.replace("best = model.state_dict()", snapshot)
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)


async def test_fixes_that_need_the_project_index_are_the_ones_shown(client: LanguageClient, tmp_path):
    """Issue 30: the quick fix and fix-all apply what the diagnostics show, with the file's project index
    (a module class of the same file, a function of another module), not a poorer second analysis."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "helpers.py").write_text("import torch\n\ndef make():\n    return torch.zeros(3)\n")
    text = ("import torch\nimport torch.nn as nn\nfrom helpers import make\n\n\nclass DummyModel(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
            "    def forward(self, x):\n        return self.fc(x)\n\n\nmodel = DummyModel()\n"
            "for _ in range(3):\n    out = model(torch.randn(2, 4))\n    model.fc.weight.data.zero_()\n"
            "    out.sum().backward()\nx = torch.tensor(make())\n")
    path = tmp_path / "loop.py"
    path.write_text(text)  # saved: the project index reads the file's own classes from disk
    doc = Doc(client, path, text)
    found = await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL101", "TCL104"])
    (write,) = [d for d in found if d.code == "TCL104"]
    (fix,) = [a for a in await doc.actions(write.range, only=["quickfix"]) if a.title.startswith("Fix")]
    assert fix.title == "Fix TCL104: use `model.fc.weight.detach()` (unsafe: may change behaviour)"
    actions = await doc.actions(whole(text), only=[lsp.CodeActionKind.SourceFixAll])
    doc.apply(actions[0].edit)  # the safe fix, TCL101's (make() returns a tensor: known from helpers.py)
    assert doc.text == text.replace("torch.tensor(make())", "make().detach().clone()")
    assert doc.text == fix_source(text.encode(), ALL_RULES, path=str(path)).source.decode()
    await diagnostics_where(client, doc.uri, lambda ds: codes(ds) == ["TCL104"])
    doc.apply(fix.edit.__class__(changes={doc.uri: [e for c in fix.edit.document_changes for e in c.edits]}))
    assert "model.fc.weight.detach().zero_()" in doc.text
    await diagnostics_where(client, doc.uri, lambda ds: len(ds) == 0)
