"""The command line as a user drives it: formats, exit codes, bad input, fixing, config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _support import ROOT

HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_text_output_and_exit_code(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD)
    result = cli("--isolated", "--no-cache", str(path))
    assert result.returncode == 1
    assert result.stdout.decode() == (
        f"{path}:3:5: TCL103 [*] `.clone().detach()` records a throwaway autograd node first; "
        "use `.detach().clone()`\n"
    )
    assert b"Found 1 diagnostic" in result.stderr


def test_clean_file_exits_zero(tmp_path, cli):
    path = write(tmp_path, "clean.py", b"import torch\nx = torch.randn(3).detach().clone()\n")
    result = cli("--isolated", "--no-cache", str(path))
    assert result.returncode == 0 and result.stdout == b""


def test_json_output(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD)
    result = cli("--isolated", "--no-cache", "--output-format", "json", str(path))
    data = json.loads(result.stdout)
    assert [(d["line"], d["column"], d["end_line"], d["end_column"], d["code"]) for d in data] == [
        (3, 5, 3, 23, "TCL103")
    ]
    assert data[0]["path"] == str(path)
    assert data[0]["fix"]["applicability"] == "safe"
    assert data[0]["fix"]["content"] == "x.detach().clone()"


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_other_formats(tmp_path, cli, fmt):
    path = write(tmp_path, "a.py", HAZARD)
    result = cli("--isolated", "--no-cache", "--output-format", fmt, str(path))
    assert result.returncode == 1
    text = result.stdout.decode()
    if fmt == "github":
        assert text.startswith(f"::warning title=torchcopy-lint (TCL103),file={path},line=3,col=5")
    else:
        sarif = json.loads(text)
        assert sarif["runs"][0]["results"][0]["ruleId"] == "TCL103"


def test_directory_recursion_and_deterministic_order(tmp_path, cli):
    write(tmp_path, "pkg/b.py", HAZARD)
    write(tmp_path, "pkg/a.py", HAZARD + b"z = x.clone().detach()\n")
    write(tmp_path, "pkg/notes.txt", HAZARD)
    write(tmp_path, ".venv/lib/c.py", HAZARD)  # excluded by default
    results = [cli("--isolated", "--no-cache", "--jobs", str(j), "-q", str(tmp_path)) for j in (1, 2)]
    assert results[0].stdout == results[1].stdout
    lines = results[0].stdout.decode().splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        f"{tmp_path}/pkg/a.py:3:5", f"{tmp_path}/pkg/a.py:4:5", f"{tmp_path}/pkg/b.py:3:5"]


def test_syntax_error_is_reported_and_run_goes_on(tmp_path, cli):
    write(tmp_path, "bad.py", b"import torch\ndef f(:\n    return x.clone().detach()\n")
    write(tmp_path, "good.py", HAZARD)
    result = cli("--isolated", "--no-cache", "-q", str(tmp_path))
    out = result.stdout.decode()
    assert result.returncode == 1
    assert f"{tmp_path}/bad.py:2:" in out and "TCL001 syntax error" in out
    assert f"{tmp_path}/good.py:3:5: TCL103" in out


def test_odd_encodings(tmp_path, cli):
    latin = write(tmp_path, "latin.py", b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9'\n"
                  b"x = torch.randn(2, requires_grad=True)\ny = x.clone().detach()\n")
    broken = write(tmp_path, "broken.py", b"import torch\nname = '\xff\xfe'\ny = x.clone().detach()\n")
    bom = write(tmp_path, "bom.py", b"\xef\xbb\xbfimport torch\ny = x.clone().detach()\n")
    result = cli("--isolated", "--no-cache", "-q", str(latin), str(broken), str(bom))
    out = result.stdout.decode()
    assert f"{latin}:5:5: TCL103" in out
    assert f"{broken}:" in out and "TCL001" in out
    assert f"{bom}:2:5: TCL103" in out
    # Fixing the latin-1 file keeps its encoding.
    cli("--isolated", "--no-cache", "--fix", str(latin))
    assert latin.read_bytes().endswith(b"name = '\xe9'\nx = torch.randn(2, requires_grad=True)\ny = x.detach().clone()\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read unreadable files")
def test_unreadable_file(tmp_path, cli):
    path = write(tmp_path, "secret.py", HAZARD)
    path.chmod(0)
    result = cli("--isolated", "--no-cache", str(path))
    assert b"TCL002 cannot read file" in result.stdout


def test_dangling_symlink_is_reported_not_fatal(tmp_path, cli):
    """A file that cannot be opened is reported as TCL002; the other files are still linted."""
    (tmp_path / "gone.py").symlink_to(tmp_path / "does-not-exist.py")
    good = write(tmp_path, "good.py", HAZARD)
    result = cli("--isolated", "--no-cache", "-q", str(tmp_path))
    out = result.stdout.decode()
    assert result.returncode == 1
    assert f"{tmp_path}/gone.py:1:1: TCL002 cannot read file" in out
    assert f"{good}:3:5: TCL103" in out


def test_missing_path_is_a_usage_error(tmp_path, cli):
    result = cli("--isolated", str(tmp_path / "nope.py"))
    assert result.returncode == 2 and b"no such file" in result.stderr


def test_fix_diff_and_unsafe(tmp_path, cli):
    source = HAZARD + (b"model = torch.nn.Linear(3, 3)\nout = model(x)\nfor p in model.parameters():\n"
                       b"    p.data.add_(1)\nout.sum().backward()\n")  # between a forward and its backward: TCL104
    path = write(tmp_path, "a.py", source)
    diff = cli("--isolated", "--no-cache", "--diff", str(path))
    assert path.read_bytes() == source, "--diff must not write"
    assert b"-y = x.clone().detach()\n+y = x.detach().clone()\n" in diff.stdout
    assert b"p.detach()" not in diff.stdout, "unsafe fixes need --unsafe-fixes"
    fixed = cli("--isolated", "--no-cache", "--fix", str(path))
    assert fixed.returncode == 1  # the unsafe TCL104 fix is left
    assert path.read_bytes() == source.replace(b"x.clone().detach()", b"x.detach().clone()")
    assert b"1 more fix available with `--fix --unsafe-fixes`" not in fixed.stderr
    cli("--isolated", "--no-cache", "--fix", "--unsafe-fixes", str(path))
    assert path.read_bytes().endswith(b"    p.detach().add_(1)\nout.sum().backward()\n")


def test_fix_keeps_file_mode(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD)
    path.chmod(0o750)
    cli("--isolated", "--no-cache", "--fix", str(path))
    assert oct(path.stat().st_mode & 0o777) == oct(0o750)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".torchcopy-lint-")]


def test_stdin(cli):
    result = cli("--isolated", "--stdin-filename", "snippet.py", "-", input_bytes=HAZARD)
    assert result.stdout.decode().startswith("snippet.py:3:5: TCL103")
    fixed = cli("--isolated", "--fix", "-", input_bytes=HAZARD)
    assert fixed.stdout == HAZARD.replace(b"x.clone().detach()", b"x.detach().clone()")


def test_select_and_ignore(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD + b"z = torch.tensor(x)\n")
    codes = lambda r: sorted({line.split()[1] for line in r.stdout.decode().splitlines()})  # noqa: E731
    assert codes(cli("--isolated", "--no-cache", str(path))) == ["TCL101", "TCL103"]
    assert codes(cli("--isolated", "--no-cache", "--select", "TCL101", str(path))) == ["TCL101"]
    assert codes(cli("--isolated", "--no-cache", "--ignore", "TCL10", str(path))) == []
    assert codes(cli("--isolated", "--no-cache", "--ignore", "TCL1", "--select", "TCL103", str(path))) == ["TCL103"]
    bad = cli("--isolated", "--select", "XYZ1", str(path))
    assert bad.returncode == 2 and b"unknown rule selector" in bad.stderr


def test_noqa(tmp_path, cli):
    path = write(tmp_path, "a.py", b"import torch\nx = torch.randn(3, requires_grad=True)\n"
                 b"a = x.clone().detach()  # noqa\n"
                 b"b = x.clone().detach()  # noqa: TCL103\n"
                 b"c = x.clone().detach()  # noqa:TCL1\n"
                 b"d = x.clone().detach()  # noqa: TCL101\n"
                 b"e = x.clone().detach()  # NOQA: E501, TCL103\n")
    result = cli("--isolated", "--no-cache", "-q", str(path))
    assert [line.split(": ")[0] for line in result.stdout.decode().splitlines()] == [f"{path}:6:5"]
    # --fix leaves suppressed sites alone.
    cli("--isolated", "--no-cache", "--fix", str(path))
    assert path.read_bytes().count(b"clone().detach()") == 4


def test_pyproject_config(tmp_path, cli):
    write(tmp_path, "pyproject.toml", b'[tool.torchcopy-lint]\nignore = ["TCL101"]\n'
          b'per-file-ignores = { "tests/*" = ["TCL103"] }\nextend-exclude = ["generated"]\n')
    write(tmp_path, "src/a.py", HAZARD + b"z = torch.tensor(x)\n")
    write(tmp_path, "tests/test_a.py", HAZARD)
    write(tmp_path, "generated/g.py", HAZARD)
    result = cli("--no-cache", "-q", ".", cwd=tmp_path)
    assert result.stdout.decode().splitlines() == [
        "./src/a.py:3:5: TCL103 [*] `.clone().detach()` records a throwaway autograd node first; "
        "use `.detach().clone()`"]
    broken = write(tmp_path, "pyproject.toml", b'[tool.torchcopy-lint]\nselct = ["TCL1"]\n')
    result = cli("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2 and b"unknown option" in result.stderr and broken.exists()


def test_cache_gives_identical_results(tmp_path, cli):
    for i in range(5):
        write(tmp_path, f"src/m{i}.py", HAZARD * (i + 1))
    cache = tmp_path / "cache"
    cold = cli("--isolated", "--cache-dir", str(cache), "-q", str(tmp_path / "src"))
    assert (cache / ".gitignore").exists()
    warm = cli("--isolated", "--cache-dir", str(cache), "-q", str(tmp_path / "src"))
    uncached = cli("--isolated", "--no-cache", "-q", str(tmp_path / "src"))
    assert cold.stdout == warm.stdout == uncached.stdout and cold.stdout
    # A corrupt cache is ignored, not fatal.
    for index in cache.rglob("index.json"):
        index.write_text("{not json")
    again = cli("--isolated", "--cache-dir", str(cache), "-q", str(tmp_path / "src"))
    assert again.stdout == cold.stdout


def test_rule_explainer(cli):
    result = cli("rule", "TCL104")
    assert result.returncode == 0 and b"TCL104" in result.stdout and b".data" in result.stdout
    listing = cli("rule", "--all")
    assert listing.stdout.decode().count("TCL10") >= 5
    assert cli("rule", "TCL999").returncode == 2


def test_linting_never_imports_torch(tmp_path):
    path = write(tmp_path, "a.py", HAZARD + b"import copy\nfor x in d:\n    copy.deepcopy(model)\n")
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['torchcopy-lint', '--no-cache', '--jobs', '1', {str(path)!r}]\n"
        "try:\n    runpy.run_module('torchcopy_lint', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('IMPORTED' if 'torch' in sys.modules else 'CLEAN')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "CLEAN", result.stdout + result.stderr


def test_help_does_not_import_torch():
    code = ("import sys\nfrom torchcopy_lint.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('IMPORTED' if 'torch' in sys.modules else 'CLEAN')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "CLEAN"


def test_example_tree_is_linted(cli):
    result = cli("--isolated", "--no-cache", "-q", str(ROOT / "examples"))
    assert result.returncode == 1
    codes = {line.split(": ")[1].split()[0] for line in result.stdout.decode().splitlines()}  # `nb.ipynb:cell 5:...`
    assert codes == {"TCL101", "TCL102", "TCL103", "TCL104", "TCL105", "TCL111", "TCL112", "TCL113", "TCL114", "TCL115"}
    everything = cli("--isolated", "--no-cache", "-q", "--select", "ALL", str(ROOT / "examples"))
    assert {line.split(": ")[1].split()[0] for line in everything.stdout.decode().splitlines()} == codes | {"TCL119"}


def test_fix_through_symlink_keeps_the_link(tmp_path, cli):
    real = write(tmp_path, "real.py", HAZARD)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    cli("--isolated", "--no-cache", "--fix", str(link))
    assert link.is_symlink()
    assert real.read_bytes() == HAZARD.replace(b"x.clone().detach()", b"x.detach().clone()")


def test_cache_follows_edits_and_settings(tmp_path, cli):
    """The cache is keyed by content and enabled rules: an edit or a new selection is never stale."""
    path = write(tmp_path, "a.py", HAZARD)
    cache = tmp_path / "cache"
    first = cli("--isolated", "--cache-dir", str(cache), "-q", str(path))
    assert first.stdout.decode().count("TCL103") == 1
    path.write_bytes(HAZARD + b"z = torch.tensor(x)\n")
    edited = cli("--isolated", "--cache-dir", str(cache), "-q", str(path))
    assert sorted(line.split()[1] for line in edited.stdout.decode().splitlines()) == ["TCL101", "TCL103"]
    selected = cli("--isolated", "--cache-dir", str(cache), "-q", "--select", "TCL101", str(path))
    assert [line.split()[1] for line in selected.stdout.decode().splitlines()] == ["TCL101"]
    path.write_bytes(HAZARD)
    reverted = cli("--isolated", "--cache-dir", str(cache), "-q", str(path))
    assert reverted.stdout == first.stdout


def _modules_after_cli(args, cwd) -> set:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['torchcopy-lint', *{list(args)!r}]\n"
        "try:\n    runpy.run_module('torchcopy_lint', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('MODULES:', *sorted(m for m in sys.modules if m.split('.')[0] in ('libcst', 'torch')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("MODULES:"), result.stdout + result.stderr
    return set(last.split()[1:])


@pytest.mark.parametrize("args", [
    ("--no-cache", "--jobs", "2", "."),  # the pool path
    ("--jobs", "1", "."),  # with the cache
    ("--output-format", "json", "--statistics", "."),
    ("--show-settings", "."),
])
def test_lean_start_without_trigger_text(tmp_path, args):
    """Files in which no rule's trigger text occurs are answered without importing LibCST."""
    for i in range(4):
        write(tmp_path, f"pkg/m{i}.py", b"import torch\n\ndef f(x):\n    return x.sum() * 2\n")
    assert _modules_after_cli(args, tmp_path) == set()
    write(tmp_path, "pkg/hazard.py", HAZARD)
    if "--show-settings" not in args:  # one file to parse: the worker imports LibCST, the parent need not
        assert _modules_after_cli(args, tmp_path) == set()
        write(tmp_path, "pkg/hazard.py", HAZARD + b"# changed\n")  # two (not cached): the parent imports it
        write(tmp_path, "pkg/hazard2.py", HAZARD + b"# new\n")  # once, for the workers it forks
        assert "libcst" in _modules_after_cli(args, tmp_path)  # the check can see an import
