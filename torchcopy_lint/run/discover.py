"""Which files a run over paths lints: directories walked for ``*.py``/``*.ipynb`` minus excludes.

Each folder's settings (and with them its exclusion patterns) are looked up once, not once per entry, and
only the entries that are folders or can be linted are looked at (torch's 642 folders hold 12,000 files).
"""

from __future__ import annotations

import os
from typing import Iterator, List, NamedTuple, Sequence

from ..settings.config import Settings

LINTED_SUFFIXES = (".py", ".ipynb")  # Jupyter notebooks too, as ruff does


class Found(NamedTuple):
    path: str  # as the run names it (the walked directory joined with the names below it)
    folder: str  # the folder holding it, as walked ("" for a bare file name given in the current folder)
    name: str  # its name in ``folder``


def discover_files(paths: Sequence[str], settings: Settings) -> List[Found]:
    """Files under ``paths``: directories recurse over ``*.py``/``*.ipynb`` minus excludes; files given by name
    are kept (unless ``force-exclude`` excludes them or a directory above them)."""
    found: List[Found] = []
    seen = set()
    for path in paths:
        if settings.is_force_excluded(path):
            continue
        if os.path.isdir(path):
            for full, folder, name in _walk(path, settings):
                if full not in seen:
                    seen.add(full)
                    found.append(Found(full, folder, name))
        elif path not in seen:
            seen.add(path)
            found.append(Found(path, *os.path.split(path)))
    return found


def _walk(top: str, settings: Settings) -> Iterator[Found]:
    """The linted files under the directory ``top``, as ``os.walk`` (top-down, symbolic links to directories
    not followed, unreadable directories skipped) would list them, names sorted, minus excludes; only the
    entries that can be linted are looked at twice."""
    stack = [top]
    while stack:
        folder = stack.pop()
        excluded = settings.excluded_in(folder)
        dirs, files = [], []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if _is_dir(entry):
                        if not _is_symlink(entry) and not excluded(entry.name):
                            dirs.append(entry.name)
                    elif entry.name.endswith(LINTED_SUFFIXES):
                        files.append(entry.name)
        except OSError:
            continue
        for name in sorted(files):
            if not excluded(name):
                yield Found(os.path.join(folder, name), folder, name)
        stack.extend(os.path.join(folder, name) for name in sorted(dirs, reverse=True))


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_symlink(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return True  # as os.walk: not walked into


def discover(paths: Sequence[str], settings: Settings) -> List[str]:
    """The paths of ``discover_files``."""
    return [found.path for found in discover_files(paths, settings)]
