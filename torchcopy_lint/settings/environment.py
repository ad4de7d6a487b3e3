"""The project's Python environment: where its installed packages are, found as ty finds it.

In order: the ``python`` setting (``--python`` on the command line, else ``python = ...`` in
``[tool.torchcopy-lint]``), else the ``VIRTUAL_ENV`` variable, else an active conda environment
(``CONDA_PREFIX``) other than conda's base one, else a ``.venv`` or ``venv`` folder in the project root
recognised by its ``pyvenv.cfg``, else conda's base environment when it is the active one (conda
activates it in every shell: a project's own ``.venv`` wins over it, as uv and ty have it). The setting may name a virtual environment,
an installation prefix or an interpreter inside one (``.venv/bin/python``). An environment's
site-packages are ``lib/pythonX.Y/site-packages`` (``Lib/site-packages`` on Windows) of its prefix,
then, for a virtual environment created with ``--system-site-packages``, those of the base
installation named by ``home`` in ``pyvenv.cfg``; each followed by the folders its ``.pth`` files name (an editable
install's source folder), as the ``site`` module adds them.

Nothing here runs an interpreter or imports anything: discovery reads at most one small
``pyvenv.cfg`` and lists a few directories, so a broken or hostile environment costs a few
system calls, never a hang (FIFOs and other special files are never opened).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Dict, Optional, Tuple

from .config import ConfigError, settings_for
from .python_env import Environment, environment_at, read_cfg, read_regular

__all__ = ["ROOT_MARKERS", "Environment", "configure", "environment_at", "for_file", "fingerprint", "read_regular"]

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")  # what makes a folder a project root
_UNSET = object()
_configured: object = _UNSET  # the run's {python, src} settings (see ``configure``); _UNSET: ask the configuration
_discovered: Dict[Tuple[str, Optional[str], Optional[str]], Optional["Environment"]] = {}
_probed: Dict[Tuple[str, str], Optional[Environment]] = {}  # (location, origin) -> environment_at's answer


def configure(python: Optional[str], src: Tuple[str, ...] = ()) -> None:
    """The run's ``python`` and ``src`` settings for the file being linted (absolute; None / () when not
    set): set by the runner, so that front ends that do not call it (the server, flake8) read the
    file's configuration instead."""
    global _configured
    _configured = {"python": python, "src": tuple(src)}


def run_setting(path: str, name: str) -> Any:
    """The ``python`` or ``src`` setting that applies to ``path``: as configured, else read."""
    if isinstance(_configured, dict):
        return _configured[name]
    try:
        return getattr(settings_for(path), name)
    except ConfigError:
        return None


def for_file(path: str, python: object = _UNSET) -> Optional[Environment]:
    """The environment of the project holding the file ``path``: the ``python`` setting (default: as
    configured for the run, else read from the file's configuration), else ``VIRTUAL_ENV``, else an
    active conda environment but base, else the nearest ``.venv``/``venv`` with a ``pyvenv.cfg`` in the
    file's folder or above it, up to the project root (the first folder with a root marker), else an
    active conda base environment."""
    setting = run_setting(path, "python") if python is _UNSET else python
    virtual_env = os.environ.get("VIRTUAL_ENV") or None
    conda = os.environ.get("CONDA_PREFIX") or None
    conda_name = os.environ.get("CONDA_DEFAULT_ENV") or None
    directory = os.path.dirname(os.path.abspath(path))
    key = (directory, setting, virtual_env, conda, conda_name)  # type: ignore[assignment]
    if key not in _discovered:
        _discovered[key] = _discover(directory, setting, virtual_env,  # type: ignore[arg-type]
                                     _conda_environment(conda, conda_name))
    return _discovered[key]


def _conda_environment(prefix: Optional[str], name: Optional[str]) -> Optional[Tuple[str, bool]]:
    """The active conda environment's prefix and whether it is conda's base environment (its name is
    ``base``/``root``, or it holds conda's own ``condabin`` folder); None when none is active."""
    if not prefix:
        return None
    return prefix, name in ("base", "root") or os.path.isdir(os.path.join(prefix, "condabin"))


def _environment_at(location: str, origin: str) -> Optional[Environment]:
    """``python_env.environment_at``, once per location and origin in a run (``for_file`` asks per
    directory: 340 directories of torch's sources, one VIRTUAL_ENV)."""
    key = (location, origin)
    if key not in _probed:
        _probed[key] = environment_at(location, origin)
    return _probed[key]


def _discover(directory: str, python: Optional[str], virtual_env: Optional[str],
              conda: Optional[Tuple[str, bool]] = None) -> Optional[Environment]:
    if python:
        return _environment_at(python, "python setting")  # a setting that names nothing: no environment
    if virtual_env:
        found = _environment_at(virtual_env, "VIRTUAL_ENV")
        if found is not None:
            return found
    if conda is not None and not conda[1]:
        found = _environment_at(conda[0], "CONDA_PREFIX")
        if found is not None:
            return found
    found = _project_venv(directory)
    if found is None and conda is not None and conda[1]:
        found = _environment_at(conda[0], "CONDA_PREFIX (base)")
    return found


def _project_venv(directory: str) -> Optional[Environment]:
    """The nearest ``.venv``/``venv`` with a ``pyvenv.cfg`` in ``directory`` or above, up to the project root."""
    while True:
        for name in (".venv", "venv"):
            candidate = os.path.join(directory, name)
            if read_cfg(candidate) is not None:
                found = _environment_at(candidate, "project .venv")
                if found is not None:
                    return found
        parent = os.path.dirname(directory)
        if parent == directory or any(os.path.exists(os.path.join(directory, m)) for m in ROOT_MARKERS):
            return None
        directory = parent


def fingerprint(environment: Optional[Environment]) -> str:
    """What a cached result depends on in the environment: its folders and their modification
    times (installing or removing a package changes them)."""
    if environment is None:
        return ""
    digest = hashlib.blake2b(digest_size=8)
    for folder in environment.site_packages:
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            mtime = 0
        digest.update(f"{folder}:{mtime};".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def forget() -> None:
    """Discover afresh (a long-lived process whose environment may change)."""
    _discovered.clear()
    _probed.clear()
