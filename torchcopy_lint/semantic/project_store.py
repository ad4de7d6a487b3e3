"""One project's store: the modules located in it and the answers memoised about it.

``ProjectStore`` owns the state shared by every file of one project in this process: where each
module name was found (and which files were probed to find it), and the memoised answers of the
cross-module questions with the files they used. It knows nothing about the questions themselves:
project_names.py and project_kinds.py ask through ``module()`` and ``memoised()``, and
project.py's ``ProjectIndex`` (one file's view) creates the stores and collects what its answers
used. Imports go one way: project.py -> project_kinds.py -> project_names.py -> this module.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..cache import DIRECTORY
from . import project_files, site_packages
from .project_files import ModuleFile, file_data, stamp

__all__ = ["ProjectStore", "Frame"]

_MAX_FRAMES = 150  # nested questions; deeper chains are answered None (and not memoised)
_NOT_CUT = 1 << 30


class Frame:
    """A question being answered: the groups of files it used so far (see ``ProjectStore``)."""

    __slots__ = ("groups", "cut")

    def __init__(self) -> None:
        self.groups: Set[tuple] = set()
        self.cut = _NOT_CUT


class ProjectStore:
    """Everything known about one project in this process: located modules and memoised answers.

    Answers are memoised with the files they depended on; an answer computed while a
    question further out was still open (a cycle between modules, or the depth limit) is
    not memoised, so an answer never depends on which file asked first.

    Dependencies are kept as a graph, not copied into every answer: a *group* is either
    ``("locate", name)`` (the files probed to find a module) or the key of a memoised answer
    (whose groups are its direct dependencies). A file's view flattens the groups it reached
    once each (``ProjectIndex._collect``), so recording costs no more than the answers.
    """

    def __init__(self, root: str, script_dir: Optional[str], outer_dirs: Tuple[str, ...] = (),
                 library: Tuple[str, ...] = (), roots: Tuple[str, ...] = ()) -> None:
        self.root = root
        self.library = library  # the environment's site-packages folders (semantic/site_packages.py)
        self.search_dirs = [root]  # then src/, the file's own root, ``src`` roots (semantic/roots.py)
        for d in (os.path.join(root, "src"), script_dir, *roots, *outer_dirs):
            if d and d not in self.search_dirs and os.path.isdir(d):
                self.search_dirs.append(d)
        self._located: Dict[str, Tuple[Optional[ModuleFile], Dict[str, str]]] = {}
        self._memo: Dict[tuple, Tuple[Any, frozenset]] = {}  # key -> (answer, groups it used)
        self._active: Dict[tuple, int] = {}
        self.frames: List[Frame] = []

    # --- files --------------------------------------------------------------------------------

    def module(self, name: str) -> Optional[ModuleFile]:
        """The project module ``name``, recording the files probed to find it; None if external."""
        found = self._located.get(name)
        if found is None:
            found = self._locate(name)
            self._located[name] = found
        if self.frames:
            self.frames[-1].groups.add(("locate", name))
        return found[0]

    def group(self, key: tuple) -> Tuple[Dict[str, str], Optional[str], frozenset]:
        """(files probed, module found, groups used) of a dependency group."""
        if key[0] == "locate":
            module, probes = self._located[key[1]]
            return probes, module.name if module is not None else None, frozenset()
        return {}, None, self._memo[key][1]

    def _locate(self, name: str) -> Tuple[Optional[ModuleFile], Dict[str, str]]:
        probes: Dict[str, str] = {}
        parts = name.split(".")
        if not all(p.isidentifier() for p in parts):
            return None, probes

        def probe(path: str) -> str:
            state = DIRECTORY if os.path.isdir(path) else (file_data(path).digest if os.path.isfile(path) else "")
            probes[path] = state
            return state

        for directory in self.search_dirs:
            top = os.path.join(directory, parts[0])
            if not probe(top + ".py") and probe(top) != DIRECTORY:
                continue
            base = os.path.join(directory, *parts)
            if probe(base) == DIRECTORY:
                init = os.path.join(base, "__init__.py")
                if probe(init):
                    return ModuleFile(name, init, True), probes
                if not probe(base + ".py"):
                    return ModuleFile(name, base, True), probes
            if probe(base + ".py"):
                return ModuleFile(name, base + ".py", False), probes
            return None, probes  # the top-level package is here, so no later directory counts
        if self.library:  # not the project's: an installed package, read from its annotations
            return site_packages.locate(name, self.library, probes), probes
        return None, probes

    def unchanged(self) -> bool:
        """Whether every file probed to locate a module is as it was (see ``ProjectIndex.refresh``)."""
        for _, probes in self._located.values():
            for path, state in probes.items():
                if state == DIRECTORY:
                    if not os.path.isdir(path):
                        return False
                elif not state:
                    if os.path.exists(path):
                        return False
                elif stamp(path) != getattr(project_files.known_file(path), "stamp", None):
                    return False
        return True

    # --- memoised questions ----------------------------------------------------------------------

    def memoised(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, memoised under ``key`` with the files it consulted; None on a cycle."""
        top = self.frames[-1] if self.frames else None
        hit = self._memo.get(key)
        if hit is not None:
            if top is not None:
                top.groups.add(key)
            return hit[0]
        if key in self._active or len(self.frames) > _MAX_FRAMES:
            if top is not None:
                top.cut = min(top.cut, self._active.get(key, 0))
            return None
        index = len(self.frames)
        frame = Frame()
        self.frames.append(frame)
        self._active[key] = index
        try:
            answer = compute()
        finally:
            self.frames.pop()
            del self._active[key]
        memoise = frame.cut >= index
        if memoise:
            self._memo[key] = (answer, frozenset(frame.groups))
        if top is not None:
            if memoise:
                top.groups.add(key)
            else:
                top.groups |= frame.groups
            top.cut = min(top.cut, frame.cut)
        return answer
