"""The project's Python environment: where its installed packages are, found as ty finds it.

In order: the ``python`` setting (``--python`` on the command line, else ``python = ...`` in
``[tool.torchcopy-lint]``), else the ``VIRTUAL_ENV`` variable, else a ``.venv`` or ``venv`` folder
in the project root recognised by its ``pyvenv.cfg``. The setting may name a virtual environment,
an installation prefix or an interpreter inside one (``.venv/bin/python``). An environment's
site-packages are ``lib/pythonX.Y/site-packages`` (``Lib/site-packages`` on Windows) of its prefix,
then, for a virtual environment created with ``--system-site-packages``, those of the base
installation named by ``home`` in ``pyvenv.cfg``.

Nothing here runs an interpreter or imports anything: discovery reads at most one small
``pyvenv.cfg`` and lists a few directories, so a broken or hostile environment costs a few
system calls, never a hang (FIFOs and other special files are never opened).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["ROOT_MARKERS", "Environment", "configure", "environment_at", "for_file", "fingerprint"]

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")  # what makes a folder a project root
_MAX_CFG_BYTES = 64 * 1024
_VERSION_DIR = re.compile(r"^(?:python|pypy)(\d+)\.(\d+)t?$")
_UNSET = object()
_configured: object = _UNSET  # the run's {python, src} settings (see ``configure``); _UNSET: ask the configuration
_discovered: Dict[Tuple[str, Optional[str], Optional[str]], Optional["Environment"]] = {}


@dataclass(frozen=True)
class Environment:
    """An environment: how it was found, its prefix and its site-packages folders, in search order."""

    origin: str  # "python setting", "VIRTUAL_ENV" or "project .venv"
    prefix: str
    site_packages: Tuple[str, ...]

    def describe(self) -> Dict[str, object]:
        return {"origin": self.origin, "prefix": self.prefix, "site-packages": list(self.site_packages)}


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):  # absent, a symlink loop, a name the OS refuses
        return False


def read_regular(path: str, limit: int) -> Optional[bytes]:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes; None otherwise.
    Never blocks: a FIFO, a device or a directory is not opened for reading (O_NONBLOCK, fstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None  # it grew past the limit while read
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_cfg(prefix: str) -> Optional[Dict[str, str]]:
    """``pyvenv.cfg`` of ``prefix`` as ``{key: value}``; None when there is no readable regular one."""
    raw = read_regular(os.path.join(prefix, "pyvenv.cfg"), _MAX_CFG_BYTES)
    if raw is None:
        return None
    values = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip().lower()] = value.strip()
    return values


def _listdir(path: str) -> List[str]:
    try:
        return sorted(os.listdir(path))
    except (OSError, ValueError):
        return []


def _prefix_site_packages(prefix: str, version: Optional[Tuple[int, int]]) -> List[str]:
    """The site-packages folders of an installation prefix (the pyvenv.cfg version's first)."""
    found: List[Tuple[tuple, str]] = []
    for lib in ("lib", "lib64"):
        for name in _listdir(os.path.join(prefix, lib)):
            match = _VERSION_DIR.match(name)
            candidate = os.path.join(prefix, lib, name, "site-packages")
            if match and _is_dir(candidate):
                numbers = (int(match.group(1)), int(match.group(2)))
                found.append(((numbers != version, tuple(-n for n in numbers)), candidate))
    windows = os.path.join(prefix, "Lib", "site-packages")
    if _is_dir(windows):
        found.append(((False, ()), windows))
    if version is not None and any(not key[0] for key, _ in found):
        found = [item for item in found if not item[0][0]]
    out: List[str] = []
    seen = set()
    for _, path in sorted(found):
        real = os.path.realpath(path)  # lib64 is often a link to lib
        if real not in seen:
            seen.add(real)
            out.append(path)
    return out


def _cfg_version(cfg: Dict[str, str]) -> Optional[Tuple[int, int]]:
    for key in ("version_info", "version"):
        match = re.match(r"^(\d+)\.(\d+)", cfg.get(key, ""))
        if match:
            return int(match.group(1)), int(match.group(2))
    return None


def environment_at(location: str, origin: str) -> Optional[Environment]:
    """The environment at ``location`` (a prefix or virtual environment, or an interpreter in its
    ``bin``/``Scripts`` folder); None when there is none."""
    location = os.path.abspath(location)
    if not _is_dir(location):
        parent = os.path.dirname(location)
        location = os.path.dirname(parent) if os.path.basename(parent) in ("bin", "Scripts") else parent
        if not _is_dir(location):
            return None
    cfg = _read_cfg(location)
    version = _cfg_version(cfg) if cfg is not None else None
    folders = _prefix_site_packages(location, version)
    if cfg is not None and cfg.get("include-system-site-packages", "").lower() == "true" and cfg.get("home"):
        home = cfg["home"].rstrip("/\\")
        base = os.path.dirname(home) if os.path.basename(home) in ("bin", "Scripts") else home
        if os.path.abspath(base) != location:
            folders += [f for f in _prefix_site_packages(base, version) if f not in folders]
    if not folders:
        return None
    return Environment(origin, location, tuple(folders))


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
    from .config import ConfigError, settings_for

    try:
        return getattr(settings_for(path), name)
    except ConfigError:
        return None


def for_file(path: str, python: object = _UNSET) -> Optional[Environment]:
    """The environment of the project holding the file ``path``: the ``python`` setting (default: as
    configured for the run, else read from the file's configuration), else ``VIRTUAL_ENV``, else the
    nearest ``.venv``/``venv`` with a ``pyvenv.cfg`` in the file's folder or above it, up to the
    project root (the first folder with a root marker)."""
    setting = run_setting(path, "python") if python is _UNSET else python
    virtual_env = os.environ.get("VIRTUAL_ENV") or None
    directory = os.path.dirname(os.path.abspath(path))
    key = (directory, setting, virtual_env)  # type: ignore[assignment]
    if key not in _discovered:
        _discovered[key] = _discover(directory, setting, virtual_env)  # type: ignore[arg-type]
    return _discovered[key]


def _discover(directory: str, python: Optional[str], virtual_env: Optional[str]) -> Optional[Environment]:
    if python:
        return environment_at(python, "python setting")  # a setting that names nothing: no environment
    if virtual_env:
        found = environment_at(virtual_env, "VIRTUAL_ENV")
        if found is not None:
            return found
    while True:
        for name in (".venv", "venv"):
            candidate = os.path.join(directory, name)
            if _read_cfg(candidate) is not None:
                found = environment_at(candidate, "project .venv")
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
