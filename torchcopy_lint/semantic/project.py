"""The project index: what the other modules of a file's project say, asked lazily.

``ProjectIndex.for_path(path)`` finds the project root (the nearest ancestor with
``pyproject.toml``/``setup.py``/``setup.cfg``/``.git``, else the top of the
``__init__.py`` chain) and answers module-level questions across modules: is
``models.yolo.Model`` an ``nn.Module`` subclass, what does ``utils.torch_utils.de_parallel``
return, what is ``self.ema`` in ``ModelEMA``, where is ``pkg.Model`` defined.

Cost: a module's file is located from its name (under the root, ``src/``, and the
directory of a script outside any package), read once per process, summarised with
``ast`` (semantic/summaries.py) only when a question needs it, and the summary is
cached on disk by content hash (under the result cache directory, when the runner
configured one). Answers are memoised per project with the files they depended on,
so that every file's index view can report exactly which files its answers used
(``used`` module names, ``dependencies()`` path -> digest): a cached lint result is
valid only while those files are unchanged (see cache.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .. import __version__
from ..cache import DIRECTORY, content_digest
from .summaries import SUMMARY_FORMAT, empty_summary, summarize

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_MAX_FRAMES = 48
_NOT_CUT = 1 << 30

_summary_dir: Optional[str] = None
_roots: Dict[str, str] = {}
_stores: Dict[Tuple[str, Optional[str]], "ProjectStore"] = {}
_files: Dict[str, "_FileData"] = {}  # every project file read in this process, by path


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
    if root is None:
        root = start
        while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
            root = os.path.dirname(root)
    _roots[start] = root
    return root


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


class _FileData:
    """A file read once: its digest at once, its summary when first asked for."""

    __slots__ = ("digest", "_content", "_summary")

    def __init__(self, path: str) -> None:
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
            self._summary = _cached_summary(self.digest, content) if content is not None else empty_summary()
        return self._summary


def _file(path: str) -> _FileData:
    found = _files.get(path)
    if found is None:
        found = _files[path] = _FileData(path)
    return found


def _cached_summary(digest: str, content: bytes) -> Dict[str, Any]:
    if _summary_dir is None:
        return summarize(content)
    entry = os.path.join(_summary_dir, digest[:2], f"{digest}-{SUMMARY_FORMAT}.json")
    try:
        with open(entry, "rb") as handle:
            summary = json.load(handle)
        if isinstance(summary, dict) and isinstance(summary.get("classes"), dict):
            return summary
    except (OSError, ValueError):
        pass  # absent or corrupt: rebuild
    summary = summarize(content)
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry), suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(summary, handle, separators=(",", ":"))
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
        return _file(self.path).summary

    def absolute(self, target: str) -> Optional[str]:
        """An import target of this module made absolute (``..utils.f`` -> ``pkg.utils.f``)."""
        return absolute_target(self.name, self.is_package, target)


def absolute_target(module: str, is_package: bool, target: str) -> Optional[str]:
    """``target`` imported by ``module`` made absolute; None when it climbs above the top package."""
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


class _Frame:
    __slots__ = ("deps", "modules", "cut")

    def __init__(self) -> None:
        self.deps: Dict[str, str] = {}
        self.modules: Set[str] = set()
        self.cut = _NOT_CUT


class ProjectStore:
    """Everything known about one project in this process: located modules and memoised answers.

    Answers are memoised with the files they depended on; an answer computed while a
    question further out was still open (a cycle between modules, or the depth limit) is
    not memoised, so an answer never depends on which file asked first.
    """

    def __init__(self, root: str, script_dir: Optional[str]) -> None:
        self.root = root
        self.search_dirs = [root] + [d for d in (os.path.join(root, "src"), script_dir)
                                     if d and d != root and os.path.isdir(d)]
        self._located: Dict[str, Tuple[Optional[ModuleFile], Dict[str, str]]] = {}
        self._memo: Dict[tuple, Tuple[Any, Dict[str, str], frozenset]] = {}
        self._active: Dict[tuple, int] = {}
        self.frames: List[_Frame] = []

    # --- files --------------------------------------------------------------------------------

    def module(self, name: str) -> Optional[ModuleFile]:
        """The project module ``name``, recording the files probed to find it; None if external."""
        found = self._located.get(name)
        if found is None:
            found = self._locate(name)
            self._located[name] = found
        module, probes = found
        if self.frames:
            frame = self.frames[-1]
            frame.deps.update(probes)
            if module is not None:
                frame.modules.add(module.name)
        return module

    def _locate(self, name: str) -> Tuple[Optional[ModuleFile], Dict[str, str]]:
        probes: Dict[str, str] = {}
        parts = name.split(".")
        if not all(p.isidentifier() for p in parts):
            return None, probes

        def probe(path: str) -> str:
            state = DIRECTORY if os.path.isdir(path) else (_file(path).digest if os.path.isfile(path) else "")
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
        return None, probes

    # --- memoised questions ----------------------------------------------------------------------

    def memoised(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, memoised under ``key`` with the files it consulted; None on a cycle."""
        top = self.frames[-1] if self.frames else None
        hit = self._memo.get(key)
        if hit is not None:
            if top is not None:
                top.deps.update(hit[1])
                top.modules.update(hit[2])
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
        if top is not None:
            top.deps.update(frame.deps)
            top.modules.update(frame.modules)
            top.cut = min(top.cut, frame.cut)
        if frame.cut >= index:
            self._memo[key] = (answer, frame.deps, frozenset(frame.modules))
        return answer


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
        script_dir = None if in_package or directory == root else directory
        store = _stores.get((root, script_dir))
        if store is None:
            store = _stores[(root, script_dir)] = ProjectStore(root, script_dir)
        return cls(store, module_name_for(root, full), os.path.basename(full) == "__init__.py")

    @staticmethod
    def clear() -> None:
        """Forget every file read and answer memoised (for a long-lived process whose files change)."""
        _roots.clear()
        _stores.clear()
        _files.clear()

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
            self.used |= frame.modules
            self._deps.update(frame.deps)

    # --- the questions (semantic/project_kinds.py answers them) --------------------------------------

    def module_class_kind(self, qualified: str) -> Optional[str]:
        """"module" for an nn.Module subclass (through any depth of project classes), "not-tensor" for
        a known project class that is neither tensor nor module (namedtuple, dataclass, plain class);
        also "tensor" (a Tensor subclass) and "optimizer"; None when unknown."""
        from . import project_kinds
        return self._ask(project_kinds.class_kind, qualified)

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
        from . import project_kinds
        return self._ask(project_kinds.class_fields, qualified)

    def resolve(self, qualified: str) -> Optional[str]:
        """The defining name of ``qualified`` through re-exports (``pkg.Model`` ->
        ``pkg.models.yolo.Model``); an external name when the chain leaves the project
        (``pkg.M`` re-exporting ``torch.nn.Module``); None when ``qualified`` is not a project name."""
        from . import project_kinds
        return self._ask(project_kinds.resolve_public, qualified)

    def absolute_import(self, target: str) -> Optional[str]:
        """A relative import target of the linted file made absolute (``..utils`` -> ``pkg.utils``)."""
        if not target.startswith("."):
            return target
        if self.store is None or not self.module_name:
            return None
        return absolute_target(self.module_name, self.is_package, target)
