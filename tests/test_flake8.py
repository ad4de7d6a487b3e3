"""The flake8 plugin reports exactly what the CLI reports, at the same columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from _support import FIXTURES, run_cli


def _cli_sites():
    result = run_cli("--isolated", "--no-cache", "--output-format", "json", str(FIXTURES))
    return sorted((d["path"], d["line"], d["column"], d["code"]) for d in json.loads(result.stdout))


def _flake8_sites():
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TCL",
         "--format", "%(path)s\t%(row)d\t%(col)d\t%(code)s", str(FIXTURES)],
        capture_output=True, text=True,
    )
    assert result.returncode in (0, 1), result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    return sorted((path, int(row), int(col), code) for path, row, col, code in rows)


def test_flake8_and_cli_agree_on_every_fixture():
    cli_sites = _cli_sites()
    assert len(cli_sites) > 40
    assert _flake8_sites() == cli_sites


def test_plugin_is_registered():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "torchcopy-lint" in result.stdout


HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\nz = torch.tensor(x)\n"
CONFIG = (b'[tool.torchcopy-lint]\nignore = ["TCL101"]\nper-file-ignores = { "tests/*" = ["TCL103"] }\n'
          b'extend-exclude = ["generated"]\n')


def _config_tree(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(CONFIG)
    for name in ("src/a.py", "tests/test_a.py", "generated/g.py", "src/generated/h.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(HAZARD)
    return tmp_path


def _flake8(*args, cwd):
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "TCL", *args], capture_output=True,
                            text=True, cwd=cwd)
    assert "Traceback" not in result.stderr + result.stdout
    return result


def test_flake8_reads_the_project_config_like_the_cli(tmp_path):
    tree = _config_tree(tmp_path)
    cli = run_cli("--no-cache", "-q", ".", cwd=tree)
    flake = _flake8(".", cwd=tree)
    assert flake.stdout.splitlines() == cli.stdout.decode().replace(" [*]", "").splitlines()
    assert [line.split(":")[0] for line in flake.stdout.splitlines()] == ["./src/a.py"]
    # A file given by name under an excluded directory stays excluded (flake8 cannot tell a walk
    # from a name), and flake8's own selection still applies on top of ours.
    assert _flake8("generated/g.py", cwd=tree).stdout == ""
    assert _flake8("--extend-ignore", "TCL103", ".", cwd=tree).stdout == ""


def test_flake8_reports_a_broken_config_without_traceback(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.torchcopy-lint]\nselect = "TCL101"\n')
    (tmp_path / "a.py").write_bytes(HAZARD)
    result = _flake8("a.py", cwd=tmp_path)
    assert result.returncode != 0
    assert f"{tmp_path / 'pyproject.toml'}: [tool.torchcopy-lint] select: expected an array" in result.stdout


def test_settings_are_cached_per_directory_and_follow_edits(tmp_path):
    from torchcopy_lint.settings.config import settings_for

    (tmp_path / "pyproject.toml").write_bytes(b'[tool.torchcopy-lint]\nignore = ["TCL101"]\n')
    (tmp_path / "sub").mkdir()
    first = settings_for(str(tmp_path / "a.py"))
    assert settings_for(str(tmp_path / "b.py")) is first  # one load per directory
    assert settings_for(str(tmp_path / "sub" / "c.py")) is first  # the same pyproject.toml above
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.torchcopy-lint]\nignore = ["TCL103"]\n')
    os.utime(tmp_path / "pyproject.toml", ns=(1, 10**18))
    edited = settings_for(str(tmp_path / "a.py"))
    assert edited is not first and "TCL101" in edited.codes_for(str(tmp_path / "a.py"))
