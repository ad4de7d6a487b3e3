"""The files of a project: where its root is, which file holds a module, and each file's summary.

The project root is the nearest ancestor with ``pyproject.toml``/``setup.py``/``setup.cfg``/
``.git``, else the top of the ``__init__.py`` chain. A module name maps to a file under the root
(or ``src/``) as the import system would find it. Every file is read at most once per process
(``file_data``): its digest at once (content hash, as the result cache uses), its ``ast`` summary
(semantic/summaries.py) when first asked for, taken from the disk cache under
``<cache dir>/<version>/summaries/`` when the runner configured one (atomic writes; a corrupt entry
is rebuilt).
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Dict, Optional, Tuple

from .. import __version__
from ..cache import content_digest
from ..settings.environment import ROOT_MARKERS
from .lazy import as_json
from .summaries import SUMMARY_FORMAT, empty_summary, from_json, summarize

_summary_dir: Optional[str] = None
_roots: Dict[str, str] = {}
_marked: Dict[str, bool] = {}  # root -> whether a marker (not the ``__init__.py`` chain) chose it
_files: Dict[str, "FileData"] = {}  # every project file read in this process, by path
library_files: Dict[str, "FileData"] = {}  # every installed file read (semantic/site_packages.py), by path


def forget() -> None:
    """Forget every root found and file read."""
    _roots.clear()
    _marked.clear()
    _files.clear()
    library_files.clear()


def known_file(path: str) -> Optional["FileData"]:
    return _files.get(path) or library_files.get(path)


def configure_summary_cache(cache_dir: Optional[str]) -> None:
    """Keep summaries under ``<cache_dir>/<version>/summaries`` (None: in memory only)."""
    global _summary_dir
    _summary_dir = os.path.join(cache_dir, __version__, "summaries") if cache_dir else None


def find_root(path: str) -> str:
    """The project root of the file ``path`` (see the module docstring)."""
    start = os.path.dirname(os.path.abspath(path))
    cached = _roots.get(start)
    if cached is not None:
        return cached
    directory = start
    root = None
    while True:
        if any(os.path.exists(os.path.join(directory, marker)) for marker in ROOT_MARKERS):
            root = directory
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    marked = root is not None
    if root is None:
        root = start
        while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
            root = os.path.dirname(root)
    _roots[start] = root
    _marked[root] = marked
    return root


def marked_root(root: str) -> bool:
    """Whether ``find_root`` chose ``root`` by a marker (False: the top of an ``__init__.py`` chain)."""
    return _marked.get(root, False)


def module_name_for(root: str, path: str) -> Optional[str]:
    """``pkg.mod`` for ``<root>/pkg/mod.py`` or ``<root>/src/pkg/mod.py``; None outside the root."""
    full = os.path.abspath(path)
    for base in (os.path.join(root, "src"), root):
        relative = os.path.relpath(full, base)
        if relative.startswith(os.pardir) or os.path.isabs(relative):
            continue
        parts = relative[:-3].split(os.sep) if relative.endswith(".py") else None
        if not parts:
            return None
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts) if parts else None
    return None


class FileData:
    """A file read once: its digest at once, its summary when first asked for."""

    __slots__ = ("digest", "stamp", "_content", "_summary")

    def __init__(self, path: str) -> None:
        self.stamp = stamp(path)
        try:
            with open(path, "rb") as handle:
                self._content: Optional[bytes] = handle.read()
            self.digest = content_digest(self._content)
        except OSError:
            self._content, self.digest = None, ""
        self._summary: Optional[Dict[str, Any]] = None

    @property
    def summary(self) -> Dict[str, Any]:
        if self._summary is None:
            content, self._content = self._content, None
            self._summary = cached_summary(self.digest, content) if content is not None else empty_summary()
        return self._summary


def stamp(path: str) -> Optional[Tuple[int, int]]:
    """(mtime, size) of a file, None when there is none: how ``refresh`` notices a change."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def file_data(path: str) -> FileData:
    found = _files.get(path)
    if found is None:
        found = _files[path] = FileData(path)
    return found


def _well_formed(summary: Any) -> bool:
    """Whether a summary read back from disk has the shape ``summarize`` gives (else it is rebuilt)."""
    shape = empty_summary()
    return isinstance(summary, dict) and summary.keys() == shape.keys() and all(
        isinstance(summary[key], type(value)) for key, value in shape.items())


def cached_summary(digest: str, content: bytes, build: Callable[[bytes], Dict[str, Any]] = summarize,
                   tag: str = str(SUMMARY_FORMAT)) -> Dict[str, Any]:
    """``build(content)``, kept on disk under the content's digest and ``tag`` (the summary's format). A
    project module's summary goes there as it is made: its classes and functions not summarized yet
    (summaries.py), summarized from ``content`` when asked for."""
    if _summary_dir is None:
        return build(content)
    entry = os.path.join(_summary_dir, digest[:2], f"{digest}-{tag}.json")
    try:
        with open(entry, "rb") as handle:
            summary = json.load(handle)
        if _well_formed(summary):
            return from_json(summary, content) if build is summarize else summary
    except (OSError, ValueError):
        pass  # absent or corrupt: rebuild
    summary = build(content)
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry), suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(as_json(summary), handle, separators=(",", ":"))
        os.replace(tmp, entry)
    except OSError:
        pass  # an unwritable cache is only slower
    return summary


class ModuleFile:
    """One module of the project: its name, file, whether it is a package, its summary."""

    __slots__ = ("name", "path", "is_package")

    def __init__(self, name: str, path: str, is_package: bool) -> None:
        self.name, self.path, self.is_package = name, path, is_package

    @property
    def summary(self) -> Dict[str, Any]:
        if not self.path.endswith(".py"):  # a namespace package: a directory without __init__.py
            return empty_summary()
        return file_data(self.path).summary

    def absolute(self, target: str) -> Optional[str]:
        """An import target of this module made absolute (``..utils.f`` -> ``pkg.utils.f``)."""
        return absolute_target(self.name, self.is_package, target)


def absolute_target(module: str, is_package: bool, target: str) -> Optional[str]:
    """``target`` imported by ``module`` made absolute; None when it climbs above the project root
    (climbing to the root itself is allowed: a root that is a package, imported from its parent)."""
    if not target.startswith("."):
        return target
    level = len(target) - len(target.lstrip("."))
    rest = target[level:]
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([rest] if rest else [])) or None
