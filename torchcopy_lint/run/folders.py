"""What a run knows of a folder's files before reading any: their settings, codes, environment and stat records.

All of it depends on the folder only (the nearest configuration, the Python environment found from the
folder up, the folder's records in run/filestats.py), so a run over many files looks it up once per folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Tuple

from ..codes import RULE_CODES
from ..settings.config import Settings
from .filestats import FileStats, Records


def environment_key(path: str, python: Optional[str], src: Tuple[str, ...],
                    fingerprints: Optional[Dict[object, str]] = None) -> str:
    """What a lint of ``path`` depends on besides files: the environment it reads installed packages
    from (its fingerprint) and the ``src`` roots. ``fingerprints``: one run's, by environment (a run
    stats an environment's folders once, not once per file)."""
    from ..settings.environment import fingerprint, for_file

    found = ""
    if path not in ("-", "<stdin>"):
        environment = for_file(path, python)
        if fingerprints is None:
            found = fingerprint(environment)
        else:
            found = fingerprints.get(environment, None)  # type: ignore[assignment]
            if found is None:
                found = fingerprints[environment] = fingerprint(environment)
    return found + "".join(f"\0{folder}" for folder in src)


@dataclass
class Folder:
    settings: Settings  # those of the files here (``Settings.for_file``)
    codes: Optional[FrozenSet[str]]  # every file's codes; None: ``per-file-ignores`` decide per file
    environment: str  # ``environment_key`` of the files here
    absolute: str
    records: Records  # the stat records of the files here ({} without a cache)

    def codes_for(self, path: str) -> FrozenSet[str]:
        return self.codes if self.codes is not None else self.settings.own_codes_for(path, RULE_CODES)


class Folders:
    """One run's folders, each looked up when its first file is met."""

    def __init__(self, settings: Settings, stats: Optional[FileStats]) -> None:
        self.settings = settings
        self.stats = stats
        self.known: Dict[str, Folder] = {}
        self.fingerprints: Dict[object, str] = {}  # this run's environments'

    def of(self, folder: str, path: str) -> Folder:
        """The folder ``folder`` (as walked) of the file ``path``."""
        found = self.known.get(folder)
        if found is None:
            local = self.settings.for_file(path)
            absolute = os.path.abspath(folder)
            found = self.known[folder] = Folder(
                local, None if local.per_file_ignores else local.enabled(RULE_CODES),
                environment_key(path, local.python, local.src, self.fingerprints), absolute,
                self.stats.folder(absolute) if self.stats is not None else {})
        return found
