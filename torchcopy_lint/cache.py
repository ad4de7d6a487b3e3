"""The result cache (like ``.ruff_cache``): diagnostics keyed by file content.

Key = hash(file bytes, tool version, enabled codes). One JSON index per tool
version, loaded once per run and merged back atomically at the end, so a warm run
costs one read plus hashing the files. Concurrent runs are safe (last writer
wins, both writers hold valid entries); a corrupt index is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Dict, FrozenSet, List, Optional

from . import __version__

CACHE_DIR_NAME = ".torchcopy_lint_cache"
_MAX_ENTRIES = 200_000

Entry = List[dict]  # diagnostics as JSON, path left out


def cache_key(content: bytes, codes: FrozenSet[str], notebook: bool = False) -> str:
    digest = hashlib.blake2b(content, digest_size=16)
    digest.update(("\0" + __version__ + "\0" + ",".join(sorted(codes)) + ("\0ipynb" if notebook else "")).encode())
    return digest.hexdigest()


class ResultCache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.index_path = os.path.join(directory, __version__, "index.json")
        self.entries: Dict[str, Entry] = self._read()
        self.new: Dict[str, Entry] = {}

    def _read(self) -> Dict[str, Entry]:
        try:
            with open(self.index_path, "rb") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> Optional[Entry]:
        entry = self.entries.get(key)
        return entry if isinstance(entry, list) else None

    def put(self, key: str, entry: Entry) -> None:
        self.new[key] = entry

    def save(self) -> None:
        if not self.new:
            return
        try:
            os.makedirs(os.path.dirname(self.index_path), exist_ok=True)
            _write_gitignore(self.directory)
            merged = self._read()
            merged.update(self.new)
            if len(merged) > _MAX_ENTRIES:
                merged = dict(list(merged.items())[-_MAX_ENTRIES:])
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.index_path), suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump(merged, handle, separators=(",", ":"))
            os.replace(tmp, self.index_path)
        except OSError:
            pass  # a cache that cannot be written is only a slower next run


def _write_gitignore(directory: str) -> None:
    path = os.path.join(directory, ".gitignore")
    if not os.path.exists(path):
        with open(path, "w") as handle:
            handle.write("# Automatically created by torchcopy-lint.\n*\n")
