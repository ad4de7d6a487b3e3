"""The result cache (like ``.ruff_cache``): diagnostics keyed by file content.

Key = hash(digest of the file bytes, tool build, enabled codes), where the build is the version
plus the size and mtime of the package's own modules (``build_fingerprint``): an
edited checkout (an editable install) never answers from results of older code. A result that consulted the
project index is kept under that key plus the file's path (``located_key``: the same
content elsewhere belongs to another project), with the files it depended on (by
digest); it is valid only while they are unchanged (``dependencies_current``, each
file hashed once per run). One JSON index per tool
version, loaded once per run and merged back atomically at the end, so a warm run
costs one read plus hashing the files (none, when run/filestats.py knows a file's
digest from its stat). Concurrent runs are safe (last writer
wins, both writers hold valid entries); a corrupt index is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Union

from . import __version__

CACHE_DIR_NAME = ".torchcopy_lint_cache"
_MAX_ENTRIES = 200_000

Entry = Union[List[dict], Dict[str, Any]]  # diagnostics as JSON (path left out), or {"d": them, "u": uses}


DIRECTORY = "<dir>"


def content_digest(content: bytes) -> str:
    """The hash by which a file's content is known (result entries, project summaries). SHA-256, cut to 128
    bits: with the CPU's SHA instructions (OpenSSL uses them) it hashes twice as fast as BLAKE2b here, and a warm
    run hashes every file (44 MiB for torch: 27 ms against 50)."""
    return hashlib.sha256(content).hexdigest()[:32]


def file_digest(path: str) -> str:
    """``content_digest`` of the file at ``path``; DIRECTORY for a directory, "" when there is nothing."""
    try:
        with open(path, "rb") as handle:
            return content_digest(handle.read())
    except OSError:
        return DIRECTORY if os.path.isdir(path) else ""


def dependencies_current(uses: Dict[str, str], digests: Dict[str, str],
                         digest_of: Callable[[str], str] = file_digest) -> bool:
    """Whether every file a cached result used still has the recorded digest ("" = absent).

    ``digests`` memoises one run's look-ups (``digest_of``, as ``file_digest``), so a file used by many results is
    read once.
    """
    for path, recorded in uses.items():
        current = digests.get(path)
        if current is None:
            current = digests[path] = digest_of(path)
        if current != recorded:
            return False
    return True


_BUILD: List[str] = []


def build_fingerprint() -> str:
    """The version plus the size and mtime of every module of the package (computed once per process)."""
    if not _BUILD:
        package = os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.blake2b(__version__.encode(), digest_size=8)
        for root, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(root, name))
                    digest.update(f"{os.path.relpath(os.path.join(root, name), package)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
        _BUILD.append(digest.hexdigest())
    return _BUILD[0]


def cache_key(content: bytes, codes: FrozenSet[str], notebook: bool = False, environment: str = "") -> str:
    """``environment``: the fingerprint of the Python environment whose packages the lint may read."""
    return key_of_digest(content_digest(content), codes, notebook, environment)


def key_of_digest(digest: str, codes: FrozenSet[str], notebook: bool = False, environment: str = "") -> str:
    """``cache_key`` of the content whose ``content_digest`` is ``digest`` (a fixed-length prefix: keys stay
    unique), so that a file known by its digest (run/filestats.py) is looked up without being read."""
    return hashlib.sha256(f"sha256:{digest}".encode() + _key_suffix(codes, notebook, environment)).hexdigest()[:32]


@lru_cache(maxsize=256)
def _key_suffix(codes: FrozenSet[str], notebook: bool, environment: str) -> bytes:
    """What a key holds besides the content, the same for every file of a folder."""
    return (f"\0{build_fingerprint()}\0{','.join(sorted(codes))}" + ("\0ipynb" if notebook else "")
            + (f"\0env:{environment}" if environment else "")).encode()


def located_key(key: str, path: str) -> str:
    """The key of a result that also depends on where the file is (its project)."""
    where = hashlib.blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=8)
    return f"{key}@{where.hexdigest()}"


class ResultCache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.index_path = os.path.join(directory, __version__, "index.json")
        self.entries: Dict[str, Entry] = self._read()
        self.new: Dict[str, Entry] = {}

    def _read(self) -> Dict[str, Entry]:
        return read_json_object(self.index_path)

    def lookup(self, key: str, path: str) -> Optional[Entry]:
        """The entry for this content: one that holds wherever the file is, else one for this path."""
        found = self.get(key)
        return found if found is not None else self.get(located_key(key, path))

    def get(self, key: str) -> Optional[Entry]:
        entry = self.entries.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("d"), list) and isinstance(entry.get("u"), dict):
            return entry
        return entry if isinstance(entry, list) else None

    @staticmethod
    def diagnostics(entry: Entry) -> List[dict]:
        return entry["d"] if isinstance(entry, dict) else entry

    @staticmethod
    def uses(entry: Entry) -> Dict[str, str]:
        """The files (path -> digest, "" = absent) the entry's result depended on."""
        return entry["u"] if isinstance(entry, dict) else {}

    def put(self, key: str, diagnostics: List[dict], uses: Optional[Dict[str, str]] = None, path: str = "") -> None:
        """A result that consulted other files (``uses``) holds for this path only: the same content
        elsewhere is in another project."""
        if uses:
            self.new[located_key(key, path)] = {"d": diagnostics, "u": uses}
        else:
            self.new[key] = diagnostics

    def save(self) -> None:
        if not self.new:
            return
        merged = self._read()
        merged.update(self.new)
        if len(merged) > _MAX_ENTRIES:
            merged = dict(list(merged.items())[-_MAX_ENTRIES:])
        write_json_atomically(self.directory, self.index_path, merged)


def read_json_object(path: str) -> Dict[str, Any]:
    """The JSON object stored at ``path``; {} when it is absent, unreadable or not an object."""
    try:
        with open(path, "rb") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json_atomically(directory: str, path: str, data: Dict[str, Any]) -> None:
    """Replace ``path`` (under the cache ``directory``) with ``data`` at once: a concurrent reader sees the old
    file or the new one, never a part. A cache that cannot be written is only a slower next run."""
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _write_gitignore(directory)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        pass


def _write_gitignore(directory: str) -> None:
    path = os.path.join(directory, ".gitignore")
    if not os.path.exists(path):
        with open(path, "w") as handle:
            handle.write("# Automatically created by torchcopy-lint.\n*\n")
