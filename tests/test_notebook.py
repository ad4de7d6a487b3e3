""".ipynb files end to end: discovery, cell positions in every format, noqa, cache, --fix and --diff.

The notebooks are built with nbformat (outputs, execution counts, ids, metadata, magics,
markdown cells) and every fixed notebook is checked with ``nbformat.validate``.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from torchcopy_lint.settings.config import Settings
from torchcopy_lint.diagnostics import Diagnostic
from torchcopy_lint.notebook import NotebookError, read_notebook
from torchcopy_lint.run.runner import run

CELLS = [
    ("code", "import torch\n%matplotlib inline\nx = torch.randn(3, requires_grad=True)"),
    ("markdown", "# Training\n`y = x.clone().detach()` in markdown is not code"),
    ("code", "!pip install einops\nfiles = !ls\nx?\ny = x.clone().detach()  # é\nz = torch.tensor(x)"),
    ("code", "def broken(:\n    pass\n"),
    ("code", "%%bash\necho $HOME\n"),
    ("code", "%%time\nfor i in range(2):\n    !echo $i\n    w = x.clone().detach()  # noqa: TCL103\n"
             "v = x.clone().detach()"),
]


def notebook(cells=CELLS, language="python"):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": language}
    for number, (kind, source) in enumerate(cells, 1):
        if kind == "markdown":
            nb.cells.append(new_markdown_cell(source))
        else:
            nb.cells.append(new_code_cell(source, execution_count=number, metadata={"tags": ["t"]}, outputs=[
                new_output("stream", name="stdout", text=f"out {number}\n"),
                new_output("execute_result", data={"text/plain": "tensor([1.])"}, execution_count=number),
            ]))
    return nb


def write(path: Path, nb=None, **dump) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if dump:
        path.write_bytes(json.dumps(nbformat.from_dict(nb or notebook()), **dump).encode("utf-8"))
    else:
        nbformat.write(nb or notebook(), str(path))
    return path


def positions(report):
    return [(d.cell, d.line, d.column, d.code) for d in report.diagnostics]


EXPECTED = [(3, 4, 5, "TCL103"), (3, 5, 5, "TCL101"), (4, 1, 11, "TCL001"), (6, 5, 5, "TCL103")]


def test_cells_are_linted_as_one_program(tmp_path):
    path = write(tmp_path / "nb.ipynb")
    assert positions(run([str(path)], Settings())) == EXPECTED


def test_text_output_names_the_cell(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb")
    result = cli("--isolated", "--no-cache", str(path))
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 1
    assert lines[0] == (f"{path}:cell 3:4:5: TCL103 [*] `.clone().detach()` records a throwaway autograd node "
                        "first; use `.detach().clone()`")
    assert [line.split(": ")[0] for line in lines] == [f"{path}:cell {c}:{l}:{k}" for c, l, k, _ in EXPECTED]


def test_json_and_sarif_carry_the_cell(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb")
    data = json.loads(cli("--isolated", "--no-cache", "--output-format", "json", str(path)).stdout)
    assert [(d["cell"], d["line"], d["column"], d["code"]) for d in data] == EXPECTED
    assert data[0]["fix"]["start_line"] == 4 and data[0]["fix"]["content"] == "x.detach().clone()"
    assert Diagnostic.from_json(data[0]).to_json() == {k: v for k, v in data[0].items() if k != "severity"}
    sarif = json.loads(cli("--isolated", "--no-cache", "--output-format", "sarif", str(path)).stdout)
    results = sarif["runs"][0]["results"]
    assert [r["properties"]["cell"] for r in results] == [3, 3, 4, 6]
    assert results[0]["message"]["text"].startswith("cell 3:4:5: ")
    assert "region" not in results[0]["locations"][0]["physicalLocation"]  # cell lines are not the file's
    github = cli("--isolated", "--no-cache", "--output-format", "github", str(path)).stdout.decode()
    assert f"file={path}::cell 3:4:5: TCL103" in github and "line=" not in github


def test_discovery_and_excludes(tmp_path):
    write(tmp_path / "a" / "nb.ipynb")
    write(tmp_path / ".venv" / "lib" / "nb.ipynb")
    write(tmp_path / "a" / ".ipynb_checkpoints" / "nb-checkpoint.ipynb")
    write(tmp_path / "drafts" / "nb.ipynb")
    (tmp_path / "a" / "notes.json").write_text("{}")
    found = {d.path for d in run([str(tmp_path)], Settings()).diagnostics}
    assert found == {str(tmp_path / "a" / "nb.ipynb"), str(tmp_path / "drafts" / "nb.ipynb")}
    settings = Settings(extend_exclude=("drafts",), project_root=str(tmp_path))
    assert {d.path for d in run([str(tmp_path)], settings).diagnostics} == {str(tmp_path / "a" / "nb.ipynb")}
    assert run([str(tmp_path)], Settings(extend_exclude=("*.ipynb",))).diagnostics == []


def test_parallel_workers_give_the_same_report(tmp_path):
    for name in ("a", "b", "c"):
        write(tmp_path / f"{name}.ipynb")
    (tmp_path / "d.py").write_text("import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n")
    serial, parallel = (run([str(tmp_path)], Settings(), jobs=jobs).diagnostics for jobs in (1, 2))
    assert serial == parallel and len(serial) == 3 * len(EXPECTED) + 1


def test_fix_changes_only_code_cell_sources(tmp_path):
    path = write(tmp_path / "nb.ipynb")
    before = nbformat.read(str(path), as_version=4)
    report = run([str(path)], Settings(), mode="fix")
    assert report.fixed == 3
    assert positions(report) == [(4, 1, 11, "TCL001")]
    after = nbformat.read(str(path), as_version=4)
    nbformat.validate(after)
    sources = {3: "!pip install einops\nfiles = !ls\nx?\ny = x.detach().clone()  # é\nz = x.detach().clone()",
               6: "%%time\nfor i in range(2):\n    !echo $i\n    w = x.clone().detach()  # noqa: TCL103\n"
                  "v = x.detach().clone()"}
    for number, (old, new) in enumerate(zip(before.cells, after.cells), 1):
        assert new.source == sources.get(number, old.source)
        assert {k: v for k, v in new.items() if k != "source"} == {k: v for k, v in old.items() if k != "source"}
    assert after.metadata == before.metadata
    # The file is nbformat's own writing of the fixed notebook: the layout is kept.
    assert path.read_text(encoding="utf-8") == nbformat.writes(after) + "\n"
    unchanged = path.read_bytes()
    assert run([str(path)], Settings(), mode="fix").fixed == 0
    assert path.read_bytes() == unchanged


@pytest.mark.parametrize("dump", [
    {"indent": 2, "ensure_ascii": True},
    {"indent": "\t", "sort_keys": True, "ensure_ascii": False},
    {"indent": None, "separators": (",", ":")},
    {"indent": 1, "separators": (", ", ": ")},
])
def test_fix_keeps_the_json_layout(tmp_path, dump):
    source = write(tmp_path / "nb.ipynb", **dump)
    for crlf in (False, True):
        text = source.read_text(encoding="utf-8")
        path = tmp_path / "copy.ipynb"
        path.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode("utf-8"))
        run([str(path)], Settings(), mode="fix")
        fixed = path.read_bytes().decode("utf-8")
        data = json.loads(fixed)
        nbformat.validate(nbformat.from_dict(data))
        expected = json.loads(text)
        for cell, new in zip(expected["cells"], data["cells"]):
            cell["source"] = new["source"]
        dumped = json.dumps(expected, **dump)
        assert fixed == (dumped.replace("\n", "\r\n") if crlf else dumped)
        assert list(data["cells"][2]) == list(expected["cells"][2])  # key order


def test_source_as_string_or_list_keeps_its_form(tmp_path):
    nb = notebook()
    nb.cells[2].source = "y = x.clone().detach()\nz = 1\n"  # nbformat writes lists; make one a string
    path = tmp_path / "nb.ipynb"
    data = json.loads(nbformat.writes(nb))
    data["cells"][2]["source"] = "y = x.clone().detach()\nz = 1\n"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    run([str(path)], Settings(), mode="fix")
    fixed = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert fixed[2]["source"] == "y = x.detach().clone()\nz = 1\n"
    assert fixed[5]["source"][-1] == "v = x.detach().clone()"


def test_a_layout_that_cannot_be_reproduced_is_not_rewritten(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb")
    text = path.read_text(encoding="utf-8").replace('"nbformat": 4', '"nbformat":   4')
    path.write_text(text, encoding="utf-8")
    result = cli("--isolated", "--no-cache", "--fix", str(path))
    assert result.returncode == 2 and b"JSON layout could not be reproduced" in result.stderr
    assert path.read_text(encoding="utf-8") == text


def test_diff_shows_cell_sources(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb")
    before = path.read_bytes()
    diff = cli("--isolated", "--no-cache", "--diff", str(path)).stdout.decode()
    assert path.read_bytes() == before
    assert diff.startswith(f"--- {path}:cell 3\n+++ {path}:cell 3\n@@ -1,5 +1,5 @@\n !pip install einops\n")
    assert "-y = x.clone().detach()  # é\n-z = torch.tensor(x)\n\\ No newline at end of cell\n" in diff
    assert f"--- {path}:cell 6\n" in diff and '"outputs"' not in diff


def test_cache_keeps_cells(tmp_path):
    path = write(tmp_path / "nb.ipynb")
    cache = str(tmp_path / "cache")
    first = run([str(path)], Settings(), cache_dir=cache)
    index = next((tmp_path / "cache").glob("*/index.json")).read_text()
    assert '"cell":3' in index
    second = run([str(path)], Settings(), cache_dir=cache)
    assert second.diagnostics == first.diagnostics and positions(second) == EXPECTED
    # The same bytes as a .py file are another program: not answered from the notebook's entry.
    as_python = tmp_path / "nb.py"
    as_python.write_bytes(path.read_bytes())
    assert [d for d in run([str(as_python)], Settings(), cache_dir=cache).diagnostics if d.cell is not None] == []


def test_stdin_notebook(cli):
    content = nbformat.writes(notebook()).encode("utf-8") + b"\n"
    result = cli("--isolated", "--stdin-filename", "nb.ipynb", "-", input_bytes=content)
    assert result.stdout.decode().startswith("nb.ipynb:cell 3:4:5: TCL103")
    fixed = cli("--isolated", "--fix", "--stdin-filename", "nb.ipynb", "-", input_bytes=content)
    nbformat.validate(nbformat.reads(fixed.stdout.decode("utf-8"), as_version=4))
    assert b"x.detach().clone()" in fixed.stdout and b"out 3" in fixed.stdout


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not valid JSON"),
    (b'{"cells": 3}', "no `cells` list"),
    (b'{"worksheets": [], "nbformat": 3}', "nbformat 3"),
    (b'{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1 has no valid `source`"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_bad_notebooks_are_reported(tmp_path, content, message):
    bad = tmp_path / "bad.ipynb"
    bad.write_bytes(content)
    good = write(tmp_path / "good.ipynb")
    report = run([str(tmp_path)], Settings())
    first = report.diagnostics[0]
    assert (first.path, first.code, first.cell) == (str(bad), "TCL001", None) and message in first.message
    assert positions(report)[1:] == EXPECTED and report.diagnostics[1].path == str(good)
    with pytest.raises(NotebookError):
        read_notebook(content)


def test_other_kernel_languages_are_skipped(tmp_path):
    r_notebook = notebook([("code", "y = x.clone().detach()")], language="R")
    assert run([str(write(tmp_path / "r.ipynb", r_notebook))], Settings()).diagnostics == []


def test_a_cell_that_is_not_utf8_is_reported_and_kept(tmp_path):
    """JSON can hold a lone surrogate (``\\ud800``); that cell is TCL001 and --fix leaves it as it was."""
    nb = notebook([("code", "import torch\nx = torch.randn(3, requires_grad=True)"), ("code", "s = 'X'\ny = x.clone().detach()"),
                   ("code", "z = x.clone().detach()")])
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(nb).replace("'X'", "'\\ud800'") + "\n", encoding="utf-8")
    assert positions(run([str(path)], Settings(), mode="fix")) == [(2, 1, 6, "TCL001")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert "".join(cells[1]["source"]) == "s = '\ud800'\ny = x.clone().detach()"
    assert "".join(cells[2]["source"]) == "z = x.detach().clone()"
    assert "\\ud800" in path.read_text(encoding="utf-8")


def test_example_notebook(cli):
    from _support import ROOT

    result = cli("--isolated", "--no-cache", "-q", str(ROOT / "examples" / "exploration.ipynb"))
    assert result.stdout.decode().startswith(f"{ROOT / 'examples' / 'exploration.ipynb'}:cell 5:2:12: TCL101 [*]")


def test_sarif_with_notebook_cells_validates(tmp_path, cli):
    from test_output import _validator

    write(tmp_path / "nb.ipynb")
    log = json.loads(cli("--isolated", "--no-cache", "--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    errors = sorted(_validator().iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert len(log["runs"][0]["results"]) == len(EXPECTED)


def test_trigger_text_split_by_json_is_still_found(tmp_path):
    """In the file, `tensor(` is followed by `\\n",` (JSON), so the raw bytes hide TCL101's trigger; the cells do not."""
    from torchcopy_lint.codes import may_match

    nb = notebook([("code", "import torch\nx = torch.randn(3)"), ("code", "y = torch.tensor(\n    x)")])
    path = write(tmp_path / "nb.ipynb", nb)
    assert not may_match("TCL101", path.read_bytes())
    assert positions(run([str(path)], Settings(), cache_dir=str(tmp_path / "cache"))) == [(2, 1, 5, "TCL101")]


def test_project_modules_are_known_and_the_cache_follows_them(tmp_path, cli):
    """A notebook uses the project index like a .py file: a tensor returned by a project module is known,
    and a cached result is dropped when that module changes."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    util = tmp_path / "mypkg" / "util.py"
    util.write_text("import torch\n\ndef make() -> torch.Tensor:\n    return torch.randn(3)\n")
    path = write(tmp_path / "nb.ipynb", notebook([("code", "import torch\nfrom mypkg.util import make\nx = make()"),
                                                  ("code", "y = torch.tensor(x)")]))
    lint = lambda: cli("-q", "--cache-dir", str(tmp_path / "cache"), str(path)).stdout.decode()  # noqa: E731
    assert lint().startswith(f"{path}:cell 2:1:5: TCL101")
    assert lint().startswith(f"{path}:cell 2:1:5: TCL101")  # from the cache
    assert (tmp_path / "cache").is_dir()
    util.write_text("def make() -> list:\n    return [1.0]\n")
    assert lint() == ""


def test_a_cells_displayed_last_expression_is_not_a_discarded_conversion(tmp_path):
    """TCL111: IPython displays a cell's last expression (`x.float()` to look at it); one in the middle of a
    cell, or ended by `;`, is discarded."""
    cells = [("code", "import torch\nx = torch.zeros(2)\nx.float()"), ("code", "x.cuda()\ny = 1"),
             ("code", "x.cpu();"), ("code", "x.half()\n# a comment after it")]
    path = write(tmp_path / "nb.ipynb", notebook(cells))
    found = [p for p in positions(run([str(path)], Settings())) if p[3] == "TCL111"]
    assert found == [(2, 1, 1, "TCL111"), (3, 1, 1, "TCL111")]
