"""Reading source files: regular files only, and never a read that can block.

A FIFO, socket or device named ``*.py`` would make a plain ``open`` (or ``read``)
wait forever, and opening a device can have effects of its own. What ``stat`` says
is not a regular file is never opened; the open itself is non-blocking and ``fstat``
on the descriptor is checked again, so a file swapped for a FIFO in between is still
refused, never read.
"""

from __future__ import annotations

import os
import stat
from typing import Optional

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
)


class NotRegularFile(OSError):
    """The path names something other than a regular file; it is skipped, not read."""


def irregular_kind(mode: int) -> str:
    """What a non-regular file is, in words ("" for a regular file)."""
    if stat.S_ISREG(mode):
        return ""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_source(path: str, info: Optional[os.stat_result] = None) -> bytes:
    """The bytes of the regular file ``path``; NotRegularFile for anything else, OSError if unreadable.
    ``info``: the caller's ``os.stat`` of ``path``, if it has one (the descriptor is checked all the same)."""
    kind = irregular_kind((info or os.stat(path)).st_mode)
    if kind:
        raise NotRegularFile(f"not a regular file ({kind})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        kind = irregular_kind(os.fstat(fd).st_mode)
        if kind:
            raise NotRegularFile(f"not a regular file ({kind})")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook (linted as its code cells, notebook/)."""
    return path.lower().endswith(".ipynb")


TEMP_PREFIX = ".torchcopy-lint-"


def temp_prefix(pid: int) -> str:
    """The prefix of the temporary files that process ``pid`` writes fixes to (fixer.write_atomically)."""
    return f"{TEMP_PREFIX}{pid}-"


def remove_temp_files(path: str, pid: Optional[int]) -> None:
    """Remove what process ``pid``, killed while fixing ``path``, may have left beside it."""
    if pid is None or path == "-":
        return
    import glob  # only after a worker was killed

    directory = os.path.dirname(os.path.realpath(path))
    for leftover in glob.glob(os.path.join(glob.escape(directory), glob.escape(temp_prefix(pid)) + "*.tmp")):
        try:
            os.unlink(leftover)
        except OSError:
            pass
