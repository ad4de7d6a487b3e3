"""Which files a run over paths lints: directories walked for ``*.py``/``*.ipynb`` minus excludes.

Each folder's settings (and with them its exclusion patterns) are looked up once, not once per entry.
"""

from __future__ import annotations

import os
from typing import List, NamedTuple, Sequence

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
            for root, dirs, files in os.walk(path):
                excluded = settings.excluded_in(root)
                dirs[:] = sorted(d for d in dirs if not excluded(d))
                for name in sorted(files):
                    if name.endswith(LINTED_SUFFIXES) and not excluded(name):
                        full = os.path.join(root, name)
                        if full not in seen:
                            seen.add(full)
                            found.append(Found(full, root, name))
        elif path not in seen:
            seen.add(path)
            found.append(Found(path, *os.path.split(path)))
    return found


def discover(paths: Sequence[str], settings: Settings) -> List[str]:
    """The paths of ``discover_files``."""
    return [found.path for found in discover_files(paths, settings)]
