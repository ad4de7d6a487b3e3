"""What a folder holds as a Python environment: its prefix, its ``pyvenv.cfg`` and site-packages.

Pure probing of one location, used by the configuration (to check a ``python`` setting) and by
``environment.py`` (to discover a file's environment). Nothing here runs an interpreter or imports
anything; FIFOs and other special files are never opened.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

__all__ = ["Environment", "environment_at", "read_cfg", "read_regular"]

_MAX_CFG_BYTES = 64 * 1024
_MAX_PTH_BYTES = 64 * 1024  # a .pth file is a few paths; a bigger one is not read
_MAX_PTH_FILES = 256  # per site-packages folder
_VERSION_DIR = re.compile(r"^(?:python|pypy)(\d+)\.(\d+)t?$")


@dataclass(frozen=True)
class Environment:
    """An environment: how it was found, its prefix and its site-packages folders (each followed by the folders its
    ``.pth`` files add), in search order."""

    origin: str  # "python setting", "VIRTUAL_ENV", "CONDA_PREFIX", "project .venv" or "CONDA_PREFIX (base)"
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


def read_cfg(prefix: str) -> Optional[Dict[str, str]]:
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
    cfg = read_cfg(location)
    version = _cfg_version(cfg) if cfg is not None else None
    folders = _prefix_site_packages(location, version)
    if cfg is not None and cfg.get("include-system-site-packages", "").lower() == "true" and cfg.get("home"):
        home = cfg["home"].rstrip("/\\")
        base = os.path.dirname(home) if os.path.basename(home) in ("bin", "Scripts") else home
        if os.path.abspath(base) != location:
            folders += [f for f in _prefix_site_packages(base, version) if f not in folders]
    if not folders:
        return None
    return Environment(origin, location, tuple(_with_pth_folders(folders)))


def _with_pth_folders(folders: List[str]) -> List[str]:
    """``folders`` with, after each, the existing folders its ``.pth`` files name, as the ``site`` module adds
    them to ``sys.path`` (an editable install's source folder: ``pip install -e``, hatch, flit, PDM): a line that
    is a path, absolute or relative to the site-packages folder; ``import`` lines (a finder an install hook sets
    up) and comments are not run or read, and names starting with a dot are skipped, as Python 3.13 does."""
    out: List[str] = []
    for folder in folders:
        if folder not in out:
            out.append(folder)
        names = [name for name in _listdir(folder) if name.endswith(".pth") and not name.startswith(".")]
        for name in names[:_MAX_PTH_FILES]:
            raw = read_regular(os.path.join(folder, name), _MAX_PTH_BYTES)
            if raw is None:
                continue
            for line in raw.decode("utf-8", "replace").splitlines():
                line = line.rstrip()
                if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                    continue
                named = os.path.normpath(os.path.join(folder, line))
                if named not in out and _is_dir(named):
                    out.append(named)
    return out
