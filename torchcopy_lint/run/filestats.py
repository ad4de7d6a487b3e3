"""Stat records: a file's content digest known from its ``stat``, without reading it (as ruff's cache and git's
index know an unchanged file).

Per file (by absolute folder, then name): its size, mtime, ctime and inode when its content was hashed, and
that digest (``cache.content_digest``). A file whose stat still says the same is taken to hold the same content,
so a warm run reads and hashes no file the result cache answers. ctime is part of the record because every write
sets it and nothing sets it back (``os.utime`` sets an mtime back); the inode catches a file replaced by another.

The "racy" case: a file written again within the timestamp granularity of the write that was recorded keeps its
times. So a record is kept only for a file whose mtime and ctime are at least ``RACY_NS`` older than the run's
start, i.e. than any read of it the run made (git's rule); a younger file is read and hashed each run until it
is old enough. Stored as ``files.json`` beside the result index, loaded once per run and merged back atomically
(concurrent runs: last writer wins, and every record holds by itself); a corrupt file or record is ignored.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Any, Dict, List, Optional

from .. import __version__
from ..cache import DIRECTORY, file_digest, read_json_object, write_json_atomically

RACY_NS = 2_000_000_000  # the coarsest timestamp granularity met (FAT's 2 s), as git allows for
_MAX_FOLDERS = 50_000
_DIGEST_LENGTH = 32  # cache.content_digest's

Records = Dict[str, Any]  # a folder's: name -> [size, mtime_ns, ctime_ns, inode, digest]


def _fields(info: os.stat_result) -> List[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


class FileStats:
    """One run's view of the stat records under a cache directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.path = os.path.join(directory, __version__, "files.json")
        self.folders = read_json_object(self.path)
        self.new: Dict[str, Records] = {}
        self.trusted_before = time.time_ns() - RACY_NS  # a file changed since then may change unseen

    def folder(self, absolute: str) -> Records:
        """The records of the files in the folder ``absolute`` (an absolute path)."""
        records = self.folders.get(absolute)
        return records if isinstance(records, dict) else {}

    @staticmethod
    def digest(records: Records, name: str, info: os.stat_result) -> Optional[str]:
        """The recorded digest of ``name`` (in the folder of ``records``) if its stat ``info`` is as recorded."""
        record = records.get(name)
        if (stat.S_ISREG(info.st_mode) and isinstance(record, list) and len(record) == 5 and record[:4] == _fields(info)
                and isinstance(record[4], str) and len(record[4]) == _DIGEST_LENGTH):
            return record[4]
        return None

    def file_digest(self, path: str) -> str:
        """``cache.file_digest`` of ``path`` (a file a cached result used), from its record when its stat is as
        recorded."""
        folder, name = os.path.split(os.path.abspath(path))
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return file_digest(path)
        known = self.digest(self.folder(folder), name, info)
        if known is not None:
            return known
        found = file_digest(path)  # read after the stat: a write in between changes what the record says
        if stat.S_ISREG(info.st_mode) and found not in ("", DIRECTORY):
            self.record(folder, name, info, found)
        return found

    def record(self, absolute: str, name: str, info: os.stat_result, digest: str) -> None:
        """Remember that the file with stat ``info`` (taken before it was read) holds content of ``digest``."""
        if max(info.st_mtime_ns, info.st_ctime_ns) <= self.trusted_before:
            self.new.setdefault(absolute, {})[name] = _fields(info) + [digest]

    def save(self) -> None:
        if not self.new:
            return
        merged = read_json_object(self.path)
        for absolute, records in self.new.items():
            kept = merged.pop(absolute, None)  # re-inserted last: the oldest folders are dropped first
            merged[absolute] = {**kept, **records} if isinstance(kept, dict) else records
        if len(merged) > _MAX_FOLDERS:
            merged = dict(list(merged.items())[-_MAX_FOLDERS:])
        write_json_atomically(self.directory, self.path, merged)
