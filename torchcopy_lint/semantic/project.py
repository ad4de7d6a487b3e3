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

This module is the top of the project index's imports, which go one way: project.py ->
project_kinds.py (what functions return, what attributes hold) -> project_names.py (what a name
is, what kind of class) -> project_store.py (located modules, memoised answers) ->
project_files.py (roots, files, summaries).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..settings import environment
from . import project_files, project_grad, project_kinds, project_names, site_packages
from .project_files import (ROOT_MARKERS, ModuleFile, absolute_target, configure_summary_cache, find_root,
                            marked_root, module_name_for)
from .project_store import Frame, ProjectStore
from .roots import configured_roots, library_folder, local_root

__all__ = ["ProjectIndex", "ProjectStore", "ModuleFile", "ROOT_MARKERS", "configure_summary_cache", "find_root"]

_OUTER_LEVELS = 2  # parents of an unmarked script directory searched last (see ``ProjectIndex.for_path``)
_stores: Dict[tuple, ProjectStore] = {}  # (root, script_dir, library, roots) -> store


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
        frame = Frame()
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

    # --- the questions (semantic/project_names.py and project_kinds.py answer them) -----------------

    def module_class_kind(self, qualified: str) -> Optional[str]:
        """"module" for an nn.Module subclass (through any depth of project classes), "not-tensor" for
        a known project class that is neither tensor nor module (namedtuple, dataclass, plain class);
        also "tensor" (a Tensor subclass) and "optimizer"; None when unknown."""
        return self._ask(project_names.class_kind, qualified)

    def function_return(self, qualified: str) -> Optional[str]:
        """What ``pkg.mod.func(...)`` (or ``pkg.mod.Class.method``) returns: a kind, or "arg:0" /
        "arg:0.module" when it returns its argument (a wrapper's ``.module`` unwrapped counts as the
        argument itself, so ``model.module if is_parallel(model) else model`` is "arg:0"); None."""
        return self._ask(project_kinds.function_return, qualified)

    def function_returns(self, qualified: str) -> Optional[Set[str]]:
        """Every alternative ``function_return`` joined (kinds, "arg:i[.path]", "unknown")."""
        return self._ask(project_kinds.function_alternatives, qualified)

    def call_kind(self, class_qualified: str) -> Optional[str]:
        """What calling an instance of the module class returns: its ``forward``'s kind (a project
        forward, or an ``nn`` layer's as torch's annotations say); None when unknown."""
        return self._ask(project_kinds.instance_call, self.resolve(class_qualified) or class_qualified)

    def method_of(self, class_qualified: str, name: str) -> Optional[str]:
        """The qualified method ``name`` of the class, defined in it or in its project bases; None."""
        found = self._ask(project_names.find_method, self.resolve(class_qualified) or class_qualified, name)
        return found[0] if found else None

    def returns_without_grad(self, qualified: str) -> bool:
        """Nothing the function or method returns requires grad: computed under ``torch.no_grad()``..."""
        return bool(self._ask(project_grad.returns_without_grad, self.resolve(qualified) or qualified))

    def holds_no_parameters(self, class_qualified: str) -> bool:
        """The module class holds no parameter: a project class whose bases, ``self`` attributes and code give it
        none, or a parameterless ``torch.nn`` layer (project_grad.py)."""
        return bool(self._ask(project_grad.holds_no_parameters, self.resolve(class_qualified) or class_qualified))

    def attribute_kind(self, class_qualified: str, attr: str) -> Optional[str]:
        """The kind of ``self.<attr>`` of the class, from every assignment in its methods (and its
        project bases), a class-level annotation, or a module-only method called on it; None."""
        return self._ask(project_kinds.attribute_kind, class_qualified, attr)

    def class_fields(self, qualified: str) -> Optional[List[str]]:
        """The fields of a record class (namedtuple, NamedTuple, dataclass); None otherwise."""
        return self._ask(project_names.class_fields, qualified)

    def resolve(self, qualified: str) -> Optional[str]:
        """The defining name of ``qualified`` through re-exports (``pkg.Model`` ->
        ``pkg.models.yolo.Model``); an external name when the chain leaves the project
        (``pkg.M`` re-exporting ``torch.nn.Module``); None when ``qualified`` is not a project name."""
        return self._ask(project_names.resolve_public, qualified)

    def star_name(self, targets: Tuple[str, ...], name: str) -> Optional[str]:
        """What ``name`` stands for in the linted file through its star imports (``targets``: their modules, made
        absolute; "" for one that could not be): an outside name (``from utils import *`` where utils.py has
        ``import torch``: "torch"), a project class or def; "" when the starred modules may bind it to something
        else (project_names.star_member); None when none binds it."""
        return self._ask(project_names.star_member, targets, name)

    def absolute_import(self, target: str) -> Optional[str]:
        """A relative import target of the linted file made absolute (``..utils`` -> ``pkg.utils``)."""
        if not target.startswith("."):
            return target
        if self.store is None or not self.module_name:
            return None
        return absolute_target(self.module_name, self.is_package, target)
