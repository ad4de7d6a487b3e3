"""The project's Python environment (environment.py): the `python` setting, `--python`, VIRTUAL_ENV,
an active conda environment, a project `.venv`, and environments that are broken on purpose."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from torchcopy_lint.settings import environment
from torchcopy_lint.settings.config import load_settings


def make_venv(prefix: Path, version: str = "3.11", cfg: str = "") -> Path:
    """A virtual environment as `python -m venv` lays it out (no interpreter needed): its site-packages."""
    site = prefix / "lib" / f"python{version}" / "site-packages"
    site.mkdir(parents=True)
    (prefix / "bin").mkdir(exist_ok=True)
    (prefix / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {version}.4\n{cfg}")
    return site


def make_conda_env(prefix: Path, version: str = "3.11", base: bool = False) -> Path:
    """A conda environment as conda lays it out (an installation prefix, no pyvenv.cfg): its site-packages.
    conda's base environment also holds conda itself (``condabin``)."""
    site = prefix / "lib" / f"python{version}" / "site-packages"
    site.mkdir(parents=True)
    (prefix / "bin").mkdir(exist_ok=True)
    (prefix / "conda-meta").mkdir()
    if base:
        (prefix / "condabin").mkdir()
    return site


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"):
        monkeypatch.delenv(name, raising=False)
    environment.forget()
    environment.configure(None)
    yield
    environment.forget()
    environment.configure(None)


def test_python_setting_names_a_venv_a_prefix_or_an_interpreter(tmp_path):
    site = make_venv(tmp_path / "env")
    for given in ("env", "env/bin/python", "env/bin/python3.11"):
        found = environment.environment_at(str(tmp_path / given), "python setting")
        assert found is not None and found.site_packages == (str(site),), given
        assert found.prefix == str(tmp_path / "env")
    assert environment.environment_at(str(tmp_path / "nothing"), "python setting") is None
    (tmp_path / "empty").mkdir()
    assert environment.environment_at(str(tmp_path / "empty"), "python setting") is None


def test_config_python_is_relative_to_the_pyproject(tmp_path):
    make_venv(tmp_path / "envs" / "dev")
    (tmp_path / "pyproject.toml").write_text('[tool.torchcopy-lint]\npython = "envs/dev"\n')
    settings = load_settings(str(tmp_path / "pyproject.toml"))
    assert settings.python == str(tmp_path / "envs" / "dev")


def test_discovery_order(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / ".git").mkdir()
    script = project / "pkg" / "train.py"
    script.write_text("")
    assert environment.for_file(str(script)) is None
    own = make_venv(project / ".venv")
    environment.forget()  # discovery is memoised per folder for the process
    found = environment.for_file(str(script))
    assert found.origin == "project .venv" and found.site_packages == (str(own),)
    active = make_venv(tmp_path / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    environment.forget()
    found = environment.for_file(str(script))
    assert found.origin == "VIRTUAL_ENV" and found.site_packages == (str(active),)
    chosen = make_venv(tmp_path / "chosen")
    found = environment.for_file(str(script), str(tmp_path / "chosen"))
    assert found.origin == "python setting" and found.site_packages == (str(chosen),)


def test_a_venv_folder_without_pyvenv_cfg_or_above_the_project_root_is_not_used(tmp_path):
    make_venv(tmp_path / ".venv")  # above the project root: another project's
    project = tmp_path / "project"
    (project / "venv" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)  # no pyvenv.cfg
    (project / "pyproject.toml").write_text("")
    assert environment.for_file(str(project / "a.py")) is None


def test_system_site_packages_come_after_the_venv_own(tmp_path):
    base_site = tmp_path / "base" / "lib" / "python3.11" / "site-packages"
    base_site.mkdir(parents=True)
    own = make_venv(tmp_path / "env", cfg=f"include-system-site-packages = true\nhome = {tmp_path / 'base' / 'bin'}\n")
    found = environment.environment_at(str(tmp_path / "env"), "python setting")
    assert found.site_packages == (str(own), str(base_site))


def test_the_pyvenv_cfg_version_chooses_among_several_pythons(tmp_path):
    site = make_venv(tmp_path / "env", version="3.10")
    (tmp_path / "env" / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    assert environment.environment_at(str(tmp_path / "env"), "x").site_packages == (str(site),)


def test_hostile_pyvenv_cfg_and_lib_folders_never_hang(tmp_path):
    env = tmp_path / "env"
    (env / "lib").mkdir(parents=True)
    os.mkfifo(env / "pyvenv.cfg")  # opening a FIFO for reading blocks until a writer comes
    (env / "lib" / "python3.11").symlink_to(env / "lib" / "python3.11")  # a symlink loop
    (env / "lib" / "python3.12").mkdir()
    (env / "lib" / "python3.12" / "site-packages").symlink_to(env / "lib" / "python3.12" / "site-packages")
    project = tmp_path / "p"
    project.mkdir()
    (project / ".git").mkdir()
    os.symlink(env, project / ".venv")
    start = time.monotonic()
    assert environment.environment_at(str(env), "x") is None
    assert environment.for_file(str(project / "a.py")) is None
    assert time.monotonic() - start < 2


def test_fingerprint_changes_when_a_package_is_installed(tmp_path):
    site = make_venv(tmp_path / "env")
    found = environment.environment_at(str(tmp_path / "env"), "x")
    before = environment.fingerprint(found)
    time.sleep(0.01)
    (site / "newpkg").mkdir()
    os.utime(site, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert environment.fingerprint(found) != before and environment.fingerprint(None) == ""


def test_show_settings_prints_the_environment(tmp_path, cli):
    make_venv(tmp_path / ".venv")
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    import subprocess
    import sys
    shown = subprocess.run([sys.executable, "-m", "torchcopy_lint", "--show-settings", "a.py"], cwd=tmp_path,
                           capture_output=True, env=env)
    assert shown.returncode == 0, shown.stderr
    shown = shown.stdout.decode()
    assert f'"origin": "project .venv", "prefix": "{tmp_path / ".venv"}"' in shown
    make_venv(tmp_path / "other")
    shown = cli("--show-settings", "--python", "other/bin/python", "a.py", cwd=tmp_path).stdout.decode()
    assert f'python = "{tmp_path / "other" / "bin" / "python"}"' in shown and '"origin": "python setting"' in shown
    bad = cli("--python", "nowhere", "a.py", cwd=tmp_path)
    assert bad.returncode == 2 and b"--python: 'nowhere' is not a Python environment" in bad.stderr
    assert b"Traceback" not in bad.stderr


def test_an_active_conda_environment(tmp_path, monkeypatch):
    """A named conda environment is used before a project .venv (it was activated for this work); conda's base
    environment, active in every shell, only where the project has no .venv; VIRTUAL_ENV before either."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    script = project / "train.py"
    named = make_conda_env(tmp_path / "miniconda" / "envs" / "ml")
    base = make_conda_env(tmp_path / "miniconda", base=True)

    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "miniconda" / "envs" / "ml"))
    monkeypatch.setenv("CONDA_DEFAULT_ENV", "ml")
    found = environment.for_file(str(script))
    assert found.origin == "CONDA_PREFIX" and found.site_packages == (str(named),)

    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "miniconda"))
    monkeypatch.setenv("CONDA_DEFAULT_ENV", "base")
    found = environment.for_file(str(script))
    assert found.origin == "CONDA_PREFIX (base)" and found.site_packages == (str(base),)
    monkeypatch.delenv("CONDA_DEFAULT_ENV")  # older conda: base told by its condabin folder
    assert environment.for_file(str(script)).origin == "CONDA_PREFIX (base)"

    own = make_venv(project / ".venv")
    environment.forget()
    found = environment.for_file(str(script))
    assert found.origin == "project .venv" and found.site_packages == (str(own),)

    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "miniconda" / "envs" / "ml"))
    assert environment.for_file(str(script)).origin == "CONDA_PREFIX"
    active = make_venv(tmp_path / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    found = environment.for_file(str(script))
    assert found.origin == "VIRTUAL_ENV" and found.site_packages == (str(active),)


def test_a_conda_prefix_that_holds_no_environment_is_passed_over(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    own = make_venv(project / ".venv")
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "gone"))
    monkeypatch.setenv("CONDA_DEFAULT_ENV", "gone")
    found = environment.for_file(str(project / "train.py"))
    assert found.origin == "project .venv" and found.site_packages == (str(own),)


def test_pth_files_add_the_folders_they_name(tmp_path):
    """An editable install (pip install -e, hatch, flit) puts its source folder on sys.path with a .pth file."""
    site = make_venv(tmp_path / "env")
    editable = tmp_path / "work" / "geo" / "src"
    editable.mkdir(parents=True)
    (site / "vendored").mkdir()
    (site / "_geo.pth").write_text(f"# an editable install\n{editable}\n\nvendored\n{tmp_path / 'gone'}\n")
    (site / "__editable___ml_finder.pth").write_text("import __editable___ml_finder; __editable___ml_finder.install()\n")
    (site / ".hidden.pth").write_text(f"{tmp_path}\n")
    (site / "big.pth").write_text(str(tmp_path) + "\n" + "#" * 70_000)  # over the size read: skipped whole
    found = environment.environment_at(str(tmp_path / "env"), "python setting")
    assert found.site_packages == (str(site), str(editable), str(site / "vendored"))
