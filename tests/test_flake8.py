"""The flake8 plugin reports exactly what the CLI reports, at the same columns."""

from __future__ import annotations

import json
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
