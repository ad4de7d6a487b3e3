"""Installed packages for the project index: found in the environment's site-packages, read from
their annotations.

A module the project does not have is looked up in the site-packages folders of the project's
environment (environment.py), in PEP 561 order: a ``<pkg>-stubs`` package in any folder first
(a stub package without the submodule asked for falls through, as a partial one does), then the
package itself; in a folder, ``x.pyi`` before ``x.py``. Its summary is built from annotations and
class bases only (semantic/library_summaries.py) and cached by content hash beside the project's,
so an installed ``class GCNConv(MessagePassing)`` whose ``forward`` says ``-> Tensor`` is answered as
a project class would be: an ``nn.Module`` whose ``forward`` returns a tensor.

Not looked up there: the standard library, and the roots whose knowledge is written by hand
(torch, numpy, the libraries of ``vocabulary.NON_PROJECT_ROOTS``, the names of ``external.py``), so
that those answers never depend on what happens to be installed.

An environment is untrusted input: a file is opened only when it is a regular file (never a FIFO
or a device, without blocking) of at most ``MAX_BYTES``; anything else is as if absent, as is a
folder the system cannot list (a symlink loop). A file that does not parse has an empty summary.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from ..cache import content_digest
from ..settings.environment import read_regular
from . import external, project_files, vocabulary
from .library_summaries import LIBRARY_FORMAT, summarize_library
from .project_files import FileData, ModuleFile, stamp
from .summaries import empty_summary

MAX_BYTES = 2_000_000  # a bigger file is generated data, not an interface worth reading
_listings: Dict[str, FrozenSet[str]] = {}


def _known_roots() -> FrozenSet[str]:
    roots = set(vocabulary.NON_PROJECT_ROOTS) | set(sys.builtin_module_names)
    roots |= set(getattr(sys, "stdlib_module_names", ()))
    for table in (vars(external), vars(vocabulary)):
        for value in table.values():
            if isinstance(value, (frozenset, set, dict)):
                roots.update(item.split(".")[0] for item in value if isinstance(item, str) and "." in item)
    return frozenset(roots)


ANSWERED_ELSEWHERE = _known_roots()


def _listing(folder: str) -> FrozenSet[str]:
    """The names in a site-packages folder, listed once per process (nothing when it cannot be)."""
    found = _listings.get(folder)
    if found is None:
        try:
            found = frozenset(os.listdir(folder))
        except (OSError, ValueError):
            found = frozenset()
        _listings[folder] = found
    return found


def _kind(path: str) -> str:
    """"dir", "file" (regular, small enough) or "" (absent, special, too big, a loop)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return ""
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    return "file" if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_BYTES else ""


class LibraryFile(FileData):
    """An installed file read once, guarded: its digest at once, its library summary when asked."""

    __slots__ = ()

    def __init__(self, path: str) -> None:  # noqa: D107 - FileData's, without blocking or reading much
        self.stamp = stamp(path)
        self._summary: Optional[Dict[str, Any]] = None
        self._content: Optional[bytes] = read_regular(path, MAX_BYTES)
        self.digest = content_digest(self._content) if self._content is not None else ""

    @property
    def summary(self) -> Dict[str, Any]:
        if self._summary is None:
            content, self._content = self._content, None
            self._summary = project_files.cached_summary(self.digest, content, summarize_library,
                                                         f"lib{LIBRARY_FORMAT}") if content else empty_summary()
        return self._summary


def library_file(path: str) -> FileData:
    found = project_files.library_files.get(path)
    if found is None:
        found = project_files.library_files[path] = LibraryFile(path)
    return found


class LibraryModule(ModuleFile):
    """A module of an installed package: summarised from its annotations (a namespace folder: empty)."""

    __slots__ = ()

    @property
    def summary(self) -> Dict[str, Any]:
        if not self.path.endswith((".py", ".pyi")):
            return empty_summary()
        return library_file(self.path).summary


def _candidates(top: str, folders: Sequence[str]) -> Iterator[Tuple[str, str]]:
    """(folder, the name of ``top`` there) in PEP 561 order: stub packages, then the package or module."""
    for folder in folders:
        if top + "-stubs" in _listing(folder):
            yield folder, top + "-stubs"
    for folder in folders:
        listing = _listing(folder)
        entry = next((n for n in (top, top + ".pyi", top + ".py") if n in listing), None)
        if entry is not None:
            yield folder, entry


def locate(name: str, folders: Sequence[str], probes: Dict[str, str]) -> Optional[ModuleFile]:
    """The installed module ``name`` (recording the files found in ``probes``), or None."""
    parts = name.split(".")
    if parts[0] in ANSWERED_ELSEWHERE or not folders:
        return None
    for folder, entry in _candidates(parts[0], folders):
        stub = entry.endswith("-stubs")
        found = _module_in(name, os.path.join(folder, entry), parts, probes)
        if found is not None or not stub:
            return found  # the package itself answers for all of its modules
    return None


def _module_in(name: str, top: str, parts: List[str], probes: Dict[str, str]) -> Optional[ModuleFile]:
    if top.endswith((".py", ".pyi")):
        return _file(name, top, False, probes) if len(parts) == 1 else None
    if _kind(top) != "dir":
        return None
    base = os.path.join(top, *parts[1:])
    if _kind(base) == "dir":
        for init in ("__init__.pyi", "__init__.py"):
            found = _file(name, os.path.join(base, init), True, probes)
            if found is not None:
                return found
        if not any(_kind(base + ext) == "file" for ext in (".pyi", ".py")):
            return LibraryModule(name, base, True)  # a namespace package
    for ext in (".pyi", ".py"):
        found = _file(name, base + ext, False, probes)
        if found is not None:
            return found
    return None


def _file(name: str, path: str, is_package: bool, probes: Dict[str, str]) -> Optional[ModuleFile]:
    if _kind(path) != "file":
        return None
    data = library_file(path)
    if not data.digest:
        return None
    probes[path] = data.digest
    return LibraryModule(name, path, is_package)


def forget() -> None:
    _listings.clear()
