"""Configuration: every key typed and checked, ruff's selection layers, and the oldest Pythons."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _support import ROOT
from torchcopy_lint.codes import DEFAULT_CODES, RULE_CODES
from torchcopy_lint.settings.config import ConfigError, Selection, Settings, load_settings
from torchcopy_lint.settings.config_schema import OPTIONS

HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\nz = torch.tensor(x)\n"


def _pyproject(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.torchcopy-lint]\n" + body + "\n")
    return path


# key = value, and the words the error must contain (after the file name and the key)
BAD_CONFIGS = [
    ('per-file-ignores = ["x"]', "per-file-ignores: expected a table", 'found an array ["x"]'),
    ("ignore = [1]", "ignore[0]: expected a rule selector", "found an integer 1"),
    ('select = "TCL101"', "select: expected an array of rule selectors", 'found a string "TCL101"'),
    ('extend-exclude = "gen"', "extend-exclude: expected an array of glob patterns", 'found a string "gen"'),
    ('exclude = [""]', "exclude[0]: expected a glob pattern", 'found a string ""'),
    ('extend-select = ["TCL9"]', "extend-select[0]: unknown rule selector 'TCL9'", "known: ALL, TCL101"),
    ('select = ["tcl101"]', "select[0]: unknown rule selector 'tcl101' (selectors are upper case)", ""),
    ('per-file-ignores = { "t/*" = "TCL1" }', 'per-file-ignores."t/*": expected an array', 'found a string "TCL1"'),
    ('per-file-ignores = { "t/*" = ["TCL1", 3] }', 'per-file-ignores."t/*"[1]: expected a rule selector', ""),
    ('force-exclude = "yes"', "force-exclude: expected true or false", 'found a string "yes"'),
    ("file-timeout = -1", "file-timeout: expected a number of seconds >= 0", "found an integer -1"),
    ("file-timeout = true", "file-timeout: expected a number of seconds >= 0", "found a boolean true"),
    ('file-timeout = "10"', "file-timeout: expected a number of seconds >= 0", 'found a string "10"'),
    ("file-timeout = inf", "file-timeout: expected a number of seconds >= 0", "found a float"),
    ('src = "libs"', "src: expected an array of paths", 'found a string "libs"'),
    ("src = [1]", "src[0]: expected a path", "found an integer 1"),
    ("python = 3", "python: expected a path", "found an integer 3"),
    ('python = ""', "python: expected a path", 'found a string ""'),
    ('python = "no/such/venv"', "python: 'no/such/venv' is not a Python environment", "site-packages folder"),
    ("selct = []", "unknown option(s) selct", "known: select, extend-select"),
    ("select = { a = 1 }", "select: expected an array", "found a table"),
    ("ignore = 1979-05-27", "ignore: expected an array", "found a date"),
]


@pytest.mark.parametrize("line, where, found", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_is_a_clear_error(tmp_path, line, where, found):
    path = _pyproject(tmp_path, line)
    with pytest.raises(ConfigError) as info:
        load_settings(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: [tool.torchcopy-lint]")
    assert where in message and found in message


def test_every_option_has_a_bad_value_case():
    """The table drives validation: a new key must come with a case above."""
    tested = {line.split(" = ")[0] for line, _, _ in BAD_CONFIGS}
    assert {option.key for option in OPTIONS} <= tested


@pytest.mark.parametrize("body", [
    "select = 1", "[tool.torchcopy-lint", 'ignore = ["TCL1"]\nignore = ["TCL2"]', "x = \xff",
    "per-file-ignores = 3", '[tool]\n"torchcopy-lint" = 3',
], ids=["int", "broken-toml", "duplicate-key", "latin1", "pfi-int", "tool-not-table"])
def test_cli_exits_2_without_traceback(tmp_path, cli, body):
    (tmp_path / "pyproject.toml").write_bytes(("[tool.torchcopy-lint]\n" + body + "\n").encode("latin-1"))
    (tmp_path / "a.py").write_bytes(HAZARD)
    result = cli("--no-cache", "a.py", cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert "Traceback" not in err and str(tmp_path / "pyproject.toml") in err
    assert result.stdout == b""


def test_unreadable_config_path(tmp_path, cli):
    (tmp_path / "a.py").write_bytes(HAZARD)
    result = cli("--no-cache", "--config", str(tmp_path / "missing.toml"), "a.py", cwd=tmp_path)
    assert result.returncode == 2 and b"cannot read configuration" in result.stderr
    assert b"Traceback" not in result.stderr


def test_valid_config_round_trip(tmp_path):
    path = _pyproject(tmp_path, 'select = ["TCL1"]\nextend-select = []\nignore = ["TCL104"]\n'
                      'per-file-ignores = { "tests/*" = ["TCL103"] }\nexclude = ["gen"]\n'
                      'extend-exclude = ["vendored"]\nforce-exclude = true\nfile-timeout = 2.5')
    settings = load_settings(str(path))
    assert settings.codes_for(str(tmp_path / "src/a.py")) == frozenset(DEFAULT_CODES) - {"TCL104"}
    assert settings.codes_for(str(tmp_path / "tests/t.py")) == frozenset(DEFAULT_CODES) - {"TCL103", "TCL104"}
    assert settings.exclude == ("gen",) and settings.extend_exclude == ("vendored",)
    assert settings.force_exclude is True and settings.file_timeout == 2.5
    assert settings.project_root == str(tmp_path)


def _enabled(*layers: Selection):
    return sorted(Settings(selections=list(layers)).enabled(RULE_CODES))


def test_selection_layers_follow_ruff():
    # Inside a layer the more specific selector wins; ignore wins a tie.
    assert _enabled(Selection(("TCL101", "TCL103"), (), ("TCL10",))) == ["TCL101", "TCL103"]
    assert _enabled(Selection(("TCL1",), (), ("TCL104",))) == [c for c in DEFAULT_CODES if c != "TCL104"]
    assert _enabled(Selection(("TCL103",), (), ("TCL103",))) == []
    # A later layer acts on the earlier one's result: the command line's --ignore TCL1 wins over
    # a configured select of TCL101, and its --select starts afresh.
    config = Selection(("TCL101",))
    assert _enabled(config, Selection(None, (), ("TCL1",))) == []
    assert _enabled(config, Selection(("TCL103",))) == ["TCL103"]
    assert _enabled(config, Selection(None, ("TCL102",))) == ["TCL101", "TCL102"]
    assert _enabled(Selection(None, (), ("ALL",)), Selection(None, ("TCL105",))) == ["TCL105"]


def test_cli_layer_over_config(tmp_path, cli):
    _pyproject(tmp_path, 'select = ["TCL101"]')
    (tmp_path / "a.py").write_bytes(HAZARD)
    codes = lambda r: sorted({line.split()[1] for line in r.stdout.decode().splitlines()})  # noqa: E731
    assert codes(cli("--no-cache", "-q", "a.py", cwd=tmp_path)) == ["TCL101"]
    assert codes(cli("--no-cache", "-q", "--extend-select", "TCL103", "a.py", cwd=tmp_path)) == ["TCL101", "TCL103"]
    assert codes(cli("--no-cache", "-q", "--select", "TCL103", "a.py", cwd=tmp_path)) == ["TCL103"]
    assert codes(cli("--no-cache", "-q", "--ignore", "TCL1", "a.py", cwd=tmp_path)) == []
    bad = cli("--no-cache", "--extend-select", "TCL9", "a.py", cwd=tmp_path)
    assert bad.returncode == 2 and b"--extend-select: unknown rule selector 'TCL9'" in bad.stderr


# --- the oldest supported Pythons: the same loader, with tomli --------------------------------------

OLD_PYTHONS = {
    "3.9": "/root/.pyenv/versions/3.9.18/bin/python3.9",
    "3.10": "/root/.pyenv/versions/3.10.13/bin/python3.10",
}


def _old_python(version: str) -> str:
    for candidate in (OLD_PYTHONS[version], shutil.which(f"python{version}")):
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    pytest.skip(f"no working Python {version} on this machine (looked for {OLD_PYTHONS[version]} and "
                f"python{version} on PATH)")


@pytest.mark.parametrize("version", sorted(OLD_PYTHONS))
def test_config_on_old_python(version, tmp_path, request):
    """requires-python says >=3.9: there tomllib is missing and tomli must read the config."""
    python = _old_python(version)
    cache = getattr(request.config, "cache", None)  # reused between runs (absent with -p no:cacheprovider)
    site = Path(cache.mkdir(f"site-py{version}")) if cache is not None else tmp_path / "site"
    if not (site / "tomli").is_dir() or not (site / "libcst").is_dir():
        install = subprocess.run(
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-warn-script-location",
             "--target", str(site), "tomli>=1.1", "libcst>=1.6,<2"], capture_output=True, text=True)
        if install.returncode != 0:
            pytest.skip(f"cannot install tomli and libcst for Python {version}: {install.stderr[-300:]}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)]), "PYTHONIOENCODING": "utf-8"}
    (tmp_path / "a.py").write_bytes(HAZARD)
    _pyproject(tmp_path, 'ignore = ["TCL103"]')
    run = lambda: subprocess.run([python, "-m", "torchcopy_lint", "--no-cache", "a.py"],  # noqa: E731
                                 capture_output=True, cwd=tmp_path, env=env)
    probe = subprocess.run([python, "-c", "import sys, torchcopy_lint.settings.config as c; "
                            "print(sys.version_info[:2], c._toml_module().__name__)"],
                           capture_output=True, text=True, env=env)
    assert probe.stdout.split(")")[-1].strip() == "tomli", probe.stdout + probe.stderr
    result = run()
    assert result.returncode == 1, result.stderr
    assert [line.split()[1] for line in result.stdout.decode().splitlines()] == ["TCL101"]
    _pyproject(tmp_path, 'ignore = "TCL103"')
    broken = run()
    assert broken.returncode == 2 and b"ignore: expected an array of rule selectors" in broken.stderr
    assert b"Traceback" not in broken.stderr


def test_stdin_reads_the_config_of_its_stdin_filename(tmp_path, cli):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.torchcopy-lint]\nignore = ["TCL103"]\n')
    args = ("--no-cache", "-q", "--stdin-filename")
    inside = cli(*args, "sub/x.py", "-", cwd=tmp_path, input_bytes=HAZARD)
    outside = cli(*args, "x.py", "-", cwd=tmp_path, input_bytes=HAZARD)
    assert [line.split()[1] for line in inside.stdout.decode().splitlines()] == ["TCL101"]
    assert sorted(line.split()[1] for line in outside.stdout.decode().splitlines()) == ["TCL101", "TCL103"]


def _nested_tree(tmp_path: Path) -> Path:
    files = {
        "pyproject.toml": '[tool.torchcopy-lint]\nignore = ["TCL101"]\n',
        "sub/pyproject.toml": '[project]\nname = "sub"\n',  # no table: the root's config applies
        "other/pyproject.toml": '[tool.torchcopy-lint]\nignore = ["TCL103"]\nextend-exclude = ["skip"]\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name in ("a.py", "sub/b.py", "other/c.py", "other/skip/d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(HAZARD)
    return tmp_path


def _sites(result) -> list:
    return sorted((line.split(":")[0], line.split()[1]) for line in result.stdout.decode().splitlines())


def test_each_file_takes_its_nearest_config(tmp_path, cli):
    """ruff's hierarchical configuration: the nearest pyproject.toml with a [tool.torchcopy-lint] table;
    the command line on top of each. The flake8 plugin agrees."""
    tree = _nested_tree(tmp_path)
    result = cli("--no-cache", "-q", ".", cwd=tree)
    assert _sites(result) == [("./a.py", "TCL103"), ("./other/c.py", "TCL101"), ("./sub/b.py", "TCL103")]
    flake = subprocess.run([sys.executable, "-m", "flake8", "--select", "TCL", "."], cwd=tree,
                           capture_output=True, text=True)
    assert sorted((line.split(":")[0], line.split()[1]) for line in flake.stdout.splitlines()) == _sites(result)
    selected = cli("--no-cache", "-q", "--select", "TCL101", ".", cwd=tree)
    assert _sites(selected) == [("./a.py", "TCL101"), ("./other/c.py", "TCL101"), ("./sub/b.py", "TCL101")]
    shown = cli("--show-settings", "other/c.py", cwd=tree).stdout.decode()
    assert f'config-file = "{tree / "other" / "pyproject.toml"}"' in shown
    # --config names one file for everything, as in ruff.
    pinned = cli("--no-cache", "-q", "--config", "pyproject.toml", ".", cwd=tree)
    assert ("./other/c.py", "TCL103") in _sites(pinned) and ("./other/skip/d.py", "TCL103") in _sites(pinned)


def test_broken_nested_config_is_a_clear_error(tmp_path, cli):
    tree = _nested_tree(tmp_path)
    (tree / "other" / "pyproject.toml").write_text('[tool.torchcopy-lint]\nignore = "TCL103"\n')
    result = cli("--no-cache", ".", cwd=tree)
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err
    assert f"{tree / 'other' / 'pyproject.toml'}: [tool.torchcopy-lint] ignore: expected an array" in err


def test_a_files_settings_by_folder_are_its_own(tmp_path, monkeypatch):
    """``for_file`` (the runner's: one look-up per folder, no stat of the file) answers as ``for_path`` does,
    for absolute and relative paths, and after the working directory changes; ``is_excluded`` as before."""
    from torchcopy_lint.cli import build_parser, settings_from_args

    tree = _nested_tree(tmp_path)
    monkeypatch.chdir(tree)
    settings = settings_from_args(build_parser().parse_args(["."]))
    names = ["a.py", "sub/b.py", "other/c.py", "other/skip/d.py"]
    for name in names + [str(tree / n) for n in names]:
        assert settings.for_file(name) is settings.for_path(name), name
        assert settings.for_file(name).own_codes_for(name) == settings.codes_for(name), name
    assert "TCL101" not in settings.codes_for("a.py") and "TCL103" not in settings.codes_for("other/c.py")
    assert settings.is_excluded("other/skip") and not settings.is_excluded("other") and not settings.is_excluded("sub")
    monkeypatch.chdir(tree / "other")  # the same relative name, another folder
    assert "TCL103" not in settings.codes_for("a.py") and "TCL101" in settings.codes_for("a.py")  # other/a.py
    assert settings.for_file("c.py") is settings.for_path("c.py")
    assert settings.for_file("a.py").own_codes_for("a.py") == settings.codes_for("a.py")
