"""The project index: what the other modules of a file's project say, asked lazily.

``ProjectIndex.for_path(path)`` finds the project root (the nearest ancestor with
``pyproject.toml``/``setup.py``/``setup.cfg``/``.git``, else the top of the
``__init__.py`` chain) and answers module-level questions across modules: is
``models.yolo.Model`` an ``nn.Module`` subclass, what does ``utils.torch_utils.de_parallel``
return, what is ``self.ema`` in ``ModelEMA``, where is ``pkg.Model`` defined.

Cost: a module's file is located from its name (under the root, ``src/``, the directory
of a script outside any package or the folder above a nested package, the ``src`` roots:
semantic/roots.py; else in the environment's site-packages, read from annotations only:
semantic/site_packages.py), read once per process, summarised with
``ast`` (semantic/summaries.py) only when a question needs it, and the summary is
cached on disk by content hash (semantic/project_files.py). Answers are memoised per
project with the files they depended on, so that every file's index view can report
exactly which files its answers used
(``used`` module names, ``dependencies()`` path -> digest): a cached lint result is
valid only while those files are unchanged (see cache.py).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .. import environment
from ..cache import DIRECTORY
from . import project_files
from .roots import configured_roots, library_folder, local_root
from .project_files import (ROOT_MARKERS, ModuleFile, absolute_target, configure_summary_cache, file_data,
                            find_root, marked_root, module_name_for, stamp)

__all__ = ["ProjectIndex", "ProjectStore", "ModuleFile", "ROOT_MARKERS", "configure_summary_cache", "find_root"]

_OUTER_LEVELS = 2  # parents of an unmarked script directory searched last (see ``ProjectIndex.for_path``)
_MAX_FRAMES = 150  # nested questions; deeper chains are answered None (and not memoised)
_NOT_CUT = 1 << 30

_stores: Dict[tuple, "ProjectStore"] = {}  # (root, script_dir, library, roots) -> store


class _Frame:
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
        self.frames: List[_Frame] = []

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
            from .site_packages import locate

            return locate(name, self.library, probes), probes
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
        frame = _Frame()
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


def _parents(directory: str, levels: int) -> Tuple[str, ...]:
    """Up to ``levels`` ancestors of ``directory``, nearest first: where a script in a folder with
    no ``__init__.py`` and no root marker may import from (yolov5's ``segment/train.py`` puts the
    folder above on sys.path). Never an installation's library folder (site-packages, the stdlib)."""
    found: List[str] = []
    while len(found) < levels:
        parent = os.path.dirname(directory)
        if parent == directory or library_folder(parent):
            break
        found.append(parent)
        directory = parent
    return tuple(found)


class ProjectIndex:
    """One file's view of its project: answers questions and records what they used.

    The null index (no path, no project) answers None to every question.
    """

    def __init__(self, store: Optional[ProjectStore] = None, module_name: Optional[str] = None,
                 is_package: bool = False) -> None:
        self.store = store
        self.module_name = module_name  # the linted file's own module, e.g. "models.yolo"
        self.is_package = is_package
        self.used: Set[str] = set()
        self._deps: Dict[str, str] = {}
        self._seen: Set[tuple] = set()

    @classmethod
    def for_path(cls, path: Optional[str]) -> "ProjectIndex":
        """The index of the project holding ``path`` (memoised per root); the null index without one."""
        if not path or path in ("-", "<stdin>", "stdin"):
            return cls()
        full = os.path.abspath(path)
        directory = os.path.dirname(full)
        if not os.path.isdir(directory):
            return cls()
        root = find_root(full)
        in_package = os.path.isfile(os.path.join(directory, "__init__.py"))
        script_dir = local_root(full, root)  # a script's folder, or the parent of a nested package
        found = environment.for_file(full)
        library = found.site_packages if found is not None else ()
        extra = configured_roots(full)
        key = (root, script_dir, library, extra)
        store = _stores.get(key)
        if store is None:
            outer = () if in_package or marked_root(root) else _parents(root, _OUTER_LEVELS)
            store = _stores[key] = ProjectStore(root, script_dir, outer, library, extra)
        return cls(store, module_name_for(root, full), os.path.basename(full) == "__init__.py")

    @staticmethod
    def clear() -> None:
        """Forget every file read and answer memoised (for a long-lived process whose files change)."""
        from . import site_packages

        _stores.clear()
        project_files.forget()
        site_packages.forget()
        environment.forget()

    @staticmethod
    def refresh() -> bool:
        """For a long-lived process (an editor server): forget everything if a file any answer used
        changed, appeared or disappeared since (a stat per file probed). True when it forgot."""
        for store in list(_stores.values()):
            if not store.unchanged():
                ProjectIndex.clear()
                return True
        return False

    @property
    def root(self) -> Optional[str]:
        return self.store.root if self.store is not None else None

    def dependencies(self) -> Dict[str, str]:
        """Every file the answers so far consulted (or probed for), with its digest ("" = absent)."""
        return dict(self._deps)

    def _ask(self, question: Callable[..., Any], *args: Any) -> Any:
        store = self.store
        if store is None:
            return None
        frame = _Frame()
        store.frames.append(frame)
        try:
            return question(store, *args)
        except (RecursionError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return None  # a malformed summary (a corrupt cache entry) never breaks linting
        finally:
            store.frames.pop()
            self._collect(store, frame.groups)

    def _collect(self, store: ProjectStore, groups: Set[tuple]) -> None:
        """Add the files and modules of ``groups`` (and the groups they used), each group once."""
        pending = [g for g in groups if g not in self._seen]
        while pending:
            key = pending.pop()
            if key in self._seen:
                continue
            self._seen.add(key)
            probes, module, inner = store.group(key)
            self._deps.update(probes)
            if module is not None:
                self.used.add(module)
            pending.extend(g for g in inner if g not in self._seen)

    # --- the questions (semantic/project_names.py and project_kinds.py answer them) ------------------

    def module_class_kind(self, qualified: str) -> Optional[str]:
        """"module" for an nn.Module subclass (through any depth of project classes), "not-tensor" for
        a known project class that is neither tensor nor module (namedtuple, dataclass, plain class);
        also "tensor" (a Tensor subclass) and "optimizer"; None when unknown."""
        from . import project_names
        return self._ask(project_names.class_kind, qualified)

    def function_return(self, qualified: str) -> Optional[str]:
        """What ``pkg.mod.func(...)`` (or ``pkg.mod.Class.method``) returns: a kind, or "arg:0" /
        "arg:0.module" when it returns its argument (a wrapper's ``.module`` unwrapped counts as the
        argument itself, so ``model.module if is_parallel(model) else model`` is "arg:0"); None."""
        from . import project_kinds
        return self._ask(project_kinds.function_return, qualified)

    def function_returns(self, qualified: str) -> Optional[Set[str]]:
        """Every alternative ``function_return`` joined (kinds, "arg:i[.path]", "unknown")."""
        from . import project_kinds
        return self._ask(project_kinds.function_alternatives, qualified)

    def attribute_kind(self, class_qualified: str, attr: str) -> Optional[str]:
        """The kind of ``self.<attr>`` of the class, from every assignment in its methods (and its
        project bases), a class-level annotation, or a module-only method called on it; None."""
        from . import project_kinds
        return self._ask(project_kinds.attribute_kind, class_qualified, attr)

    def class_fields(self, qualified: str) -> Optional[List[str]]:
        """The fields of a record class (namedtuple, NamedTuple, dataclass); None otherwise."""
        from . import project_names
        return self._ask(project_names.class_fields, qualified)

    def resolve(self, qualified: str) -> Optional[str]:
        """The defining name of ``qualified`` through re-exports (``pkg.Model`` ->
        ``pkg.models.yolo.Model``); an external name when the chain leaves the project
        (``pkg.M`` re-exporting ``torch.nn.Module``); None when ``qualified`` is not a project name."""
        from . import project_names
        return self._ask(project_names.resolve_public, qualified)

    def absolute_import(self, target: str) -> Optional[str]:
        """A relative import target of the linted file made absolute (``..utils`` -> ``pkg.utils``)."""
        if not target.startswith("."):
            return target
        if self.store is None or not self.module_name:
            return None
        return absolute_target(self.module_name, self.is_package, target)
