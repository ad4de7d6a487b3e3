"""Settings: rule selection, exclusion and ``[tool.torchcopy-lint]`` in pyproject.toml.

Selection follows ruff: settings come in layers (the defaults, pyproject.toml, the
command line), each applied on top of the previous one. A layer's ``select``
starts afresh, ``extend-select`` adds, ``ignore`` removes; inside a layer the more
specific selector wins (``ignore`` on a tie). ``per-file-ignores`` remove last. The default layer
is every rule but the opt-in ones (``codes.OPT_IN_CODES``), which only ``ALL`` or their full code
selects (a prefix ignores them, never selects them).
Every front end (CLI, stdin, flake8, the server) reads settings through here.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from ..codes import DEFAULT_CODES, OPT_IN_CODES, RULE_CODES
from .config_schema import ConfigError, selector_problem, validate_table
from .python_env import environment_at

__all__ = ["ConfigError", "checked_python", "DEFAULT_EXCLUDE", "Overrides", "Selection", "Settings", "find_pyproject",
           "load_settings", "settings_for", "split_selectors"]

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".torchcopy_lint_cache", "build", "dist", "node_modules", "site-packages", ".eggs",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of notebooks
)


def split_selectors(values: Iterable[str], option: str) -> Tuple[str, ...]:
    """Comma-separated command-line selectors, checked (``--select TCL101,TCL103``)."""
    out: List[str] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            problem = selector_problem(part)
            if problem is not None:
                raise ConfigError(f"{option}: {problem}")
            out.append(part)
    return tuple(out)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _selects(code: str, selector: str) -> bool:
    """Whether ``selector`` in ``select``/``extend-select`` enables ``code``: an opt-in rule only by ``ALL`` or
    its full code, never by a prefix (ruff's ``explicit-preview-rules``); ``ignore`` removes by prefix."""
    return _matches(code, selector) and (code not in OPT_IN_CODES or selector in ("ALL", code))


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection. ``select=None`` keeps what the layers below enabled."""

    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()

    def apply(self, enabled: FrozenSet[str], all_codes: Sequence[str]) -> FrozenSet[str]:
        result = set() if self.select is not None else set(enabled)
        steps = [(_specificity(s), 0, s) for s in (self.select or ()) + self.extend_select]
        steps += [(_specificity(s), 1, s) for s in self.ignore]  # after a select of equal specificity
        for _, remove, selector in sorted(steps):
            chosen = {code for code in all_codes if (_matches if remove else _selects)(code, selector)}
            result = result - chosen if remove else result | chosen
        return frozenset(result)

    @property
    def empty(self) -> bool:
        return self.select is None and not self.extend_select and not self.ignore


@dataclass
class Settings:
    """Everything that decides which files are linted and which codes are reported in each."""

    selections: List[Selection] = field(default_factory=list)  # the config layer, then the CLI's
    per_file_ignores: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    force_exclude: bool = False
    file_timeout: float = 10.0  # seconds a file may take before it is reported (TCL004); 0: no limit
    project_root: Optional[str] = None
    python: Optional[str] = None  # the Python environment (absolute), see environment.py; None: discovered
    src: Tuple[str, ...] = ()  # more import roots (absolute), see semantic/roots.py
    config_path: Optional[str] = None  # the pyproject.toml read, if any
    # Set for a run over a tree: each path takes the nearest configuration above it, with these
    # (command-line) overrides on top, as ruff's hierarchical configuration does.
    nested: Optional["Overrides"] = None

    def for_path(self, path: str) -> "Settings":
        """The settings of ``path``'s own configuration (itself unless ``nested`` finds another one)."""
        if self.nested is None:
            return self
        return self._for_pyproject(find_pyproject(path))

    def for_file(self, path: str) -> "Settings":
        """``for_path`` of a path known to be a file (discovery's): its folder is looked up, once per folder."""
        if self.nested is None:
            return self
        return self._for_pyproject(_find_pyproject_of_file(path))

    def for_folder(self, folder: str) -> "Settings":
        """``for_file`` of every file in ``folder`` (and of its subfolders, as ``is_excluded`` sees them)."""
        if self.nested is None:
            return self
        return self._for_pyproject(_pyproject_of_folder(os.path.abspath(folder)))

    def _for_pyproject(self, pyproject: Optional[str]) -> "Settings":
        if pyproject is None or os.path.abspath(pyproject) == self.config_path:
            return self
        return _nested_settings(pyproject, _mtime(pyproject), self.nested)

    def enabled(self, all_codes: Sequence[str] = RULE_CODES) -> FrozenSet[str]:
        return _enabled(tuple(self.selections), tuple(all_codes))  # asked once per file: remembered

    def codes_for(self, path: str, all_codes: Sequence[str] = RULE_CODES) -> FrozenSet[str]:
        """The codes enabled for ``path``: the layers, then ``per-file-ignores``."""
        return self.for_path(path).own_codes_for(path, all_codes)

    def own_codes_for(self, path: str, all_codes: Sequence[str] = RULE_CODES) -> FrozenSet[str]:
        """``codes_for`` by these settings themselves (``path``'s own, from ``for_path``/``for_file``)."""
        enabled = self.enabled(all_codes)
        if not self.per_file_ignores:
            return enabled
        rel, name = self._relative(path), os.path.basename(path)
        for pattern, selectors in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern):
                enabled = frozenset(c for c in enabled if not any(_matches(c, s) for s in selectors))
        return enabled

    def is_excluded(self, path: str) -> bool:
        """Whether a file or directory met while walking a given directory is excluded.

        Patterns without a slash match a single path component (the entry's own name);
        patterns with one match the path relative to the project root. Paths given on the
        command line are never excluded, like ruff, unless ``force-exclude`` is on
        (see ``is_force_excluded``).
        """
        local = self.for_file(path)  # a directory's settings are those of the folder holding it, as a file's
        if local is not self:
            return local.is_excluded(path)
        by_name, by_relative = _exclude_matchers(self.exclude + self.extend_exclude)
        if by_name is not None and by_name(os.path.normcase(os.path.basename(os.path.normpath(path)))):
            return True
        return by_relative is not None and by_relative(os.path.normcase(self._relative(path))) is not None

    def excluded_in(self, folder: str) -> Callable[[str], bool]:
        """``is_excluded`` of the entries of ``folder``, by name: the folder's settings looked up once."""
        local = self.for_folder(folder)
        by_name, by_relative = _exclude_matchers(local.exclude + local.extend_exclude)
        if by_relative is not None:  # a pattern with a slash: the entry's path relative to the project root
            return lambda name: local.is_excluded(os.path.join(folder, name))
        return lambda name: by_name is not None and by_name(os.path.normcase(name)) is not None

    def is_force_excluded(self, path: str) -> bool:
        """With ``force-exclude``: whether a path given by name, or a directory above it, is excluded.

        Only the directories below the project root are examined, so that a checkout that
        happens to live under ``build/`` is not excluded as a whole.
        """
        local = self.for_path(path)
        if local is not self:
            return local.is_force_excluded(path)
        if not self.force_exclude:
            return False
        rel = self._relative(path)
        parts = [part for part in rel.split("/") if part not in ("", ".")]
        if not parts or parts[0] == "..":
            return self.is_excluded(path)
        root = self.project_root or os.getcwd()
        return any(self.is_excluded(os.path.join(root, *parts[:i])) for i in range(1, len(parts) + 1))

    def _relative(self, path: str) -> str:
        root = self.project_root or os.getcwd()
        try:
            rel = os.path.relpath(os.path.abspath(path), root)
        except ValueError:
            rel = path
        return rel.replace(os.sep, "/")


@lru_cache(maxsize=64)
def _enabled(selections: Tuple[Selection, ...], all_codes: Tuple[str, ...]) -> FrozenSet[str]:
    enabled = frozenset(c for c in all_codes if c in DEFAULT_CODES or c not in RULE_CODES)  # the default layer
    for selection in selections:
        enabled = selection.apply(enabled, all_codes)
    return enabled


@lru_cache(maxsize=64)
def _exclude_matchers(patterns: Tuple[str, ...]):
    """One compiled regex for the patterns matched against a path's own name, one for those (with a slash)
    matched against its path relative to the project root (``fnmatch`` semantics; None: no such pattern)."""
    def compiled(parts):
        parts = [fnmatch.translate(os.path.normcase(p)) for p in parts]
        return re.compile("|".join(parts)).match if parts else None

    return (compiled([p for p in patterns if "/" not in p]), compiled([p.strip("/") for p in patterns if "/" in p]))


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above ``start`` (a file or a directory) that has a
    ``[tool.torchcopy-lint]`` table (or that cannot be read or parsed, so that the error is shown),
    as ruff looks for the nearest one with ``[tool.ruff]``."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    return _find_pyproject_from(directory)


_MISSING = object()
#: A file's absolute folder -> the nearest pyproject.toml (``_find_pyproject_from``'s answer), kept for the process as
#: that is, and forgotten with it.
_file_folders: Dict[str, Optional[str]] = {}


def _find_pyproject_of_file(path: str) -> Optional[str]:
    """``find_pyproject`` of a file (or of a folder as seen from its parent): no stat of the path itself (a file
    cannot hold a pyproject.toml), one look-up per folder."""
    return _pyproject_of_folder(os.path.dirname(os.path.abspath(path)))


def _pyproject_of_folder(folder: str) -> Optional[str]:
    """``_find_pyproject_from`` the absolute ``folder``, remembered."""
    found = _file_folders.get(folder, _MISSING)
    if found is _MISSING:
        found = _file_folders[folder] = _find_pyproject_from(folder)
    return found  # type: ignore[return-value]


@lru_cache(maxsize=1024)
def _find_pyproject_from(directory: str) -> Optional[str]:
    candidate = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(candidate) and _has_table(candidate):
        return candidate
    parent = os.path.dirname(directory)
    return None if parent == directory else _find_pyproject_from(parent)


def _toml_module():
    """tomllib (3.11+) or tomli, imported only when a pyproject.toml is read; None if neither is there."""
    try:
        import tomllib

        return tomllib
    except ImportError:  # pragma: no cover - Python < 3.11 (tomli is a dependency there)
        try:
            import tomli

            return tomli
        except ImportError:
            return None


def _read_tool_table(pyproject: str) -> Tuple[bytes, Optional[object]]:
    """(the file's bytes, its ``tool.torchcopy-lint`` value or None). Raises ConfigError."""
    try:
        with open(pyproject, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise ConfigError(f"{pyproject}: cannot read configuration: {error.strerror or error}") from None
    if b"torchcopy-lint" not in raw:
        return raw, None
    tomllib = _toml_module()
    if tomllib is None:  # pragma: no cover - only without the declared tomli dependency
        raise ConfigError(f"{pyproject}: reading [tool.torchcopy-lint] on Python < 3.11 needs `tomli` "
                          "(pip install tomli)")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: not valid TOML: {error}") from None
    tool = data.get("tool", {})
    return raw, tool.get("torchcopy-lint") if isinstance(tool, dict) else None


def _has_table(pyproject: str) -> bool:
    try:
        return _read_tool_table(pyproject)[1] is not None
    except ConfigError:
        return True  # chosen, so that loading it reports the problem


def load_settings(pyproject: Optional[str]) -> Settings:
    """Settings from ``[tool.torchcopy-lint]`` (defaults when absent). Raises ConfigError."""
    settings = Settings()
    if pyproject is None:
        return settings
    _, table = _read_tool_table(pyproject)
    if table is None:
        return settings
    values = validate_table(table, pyproject)
    settings.project_root = os.path.dirname(os.path.abspath(pyproject))
    settings.config_path = os.path.abspath(pyproject)
    selection = Selection(values.pop("select", None), values.pop("extend_select", ()), values.pop("ignore", ()))
    if not selection.empty:
        settings.selections.append(selection)
    if "src" in values:
        values["src"] = tuple(os.path.normpath(os.path.join(settings.project_root, os.path.expanduser(folder)))
                              for folder in values["src"])
    if "python" in values:
        values["python"] = checked_python(values["python"], settings.project_root,
                                          f"{pyproject}: [tool.torchcopy-lint] python")
    for attr, value in values.items():
        setattr(settings, attr, value)
    return settings


def checked_python(value: str, base: str, where: str) -> str:
    """The ``python`` setting made absolute (relative to ``base``); ConfigError when it names no
    Python environment (a virtual environment, a prefix, or an interpreter in one)."""
    path = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    if environment_at(path, "python setting") is None:
        raise ConfigError(f"{where}: {value!r} is not a Python environment (expected a virtual environment, "
                          "an installation prefix or an interpreter in one, with a site-packages folder)")
    return path


@dataclass(frozen=True)
class Overrides:
    """What the command line puts on top of a configuration file."""

    selection: Selection = Selection()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    force_exclude: Optional[bool] = None
    python: Optional[str] = None  # absolute, already checked (``--python``)

    def apply(self, settings: Settings) -> Settings:
        out = dataclasses.replace(settings, selections=list(settings.selections), nested=None)
        if not self.selection.empty:
            out.selections.append(self.selection)
        if self.exclude is not None:
            out.exclude = self.exclude
        out.extend_exclude = out.extend_exclude + self.extend_exclude
        if self.force_exclude is not None:
            out.force_exclude = self.force_exclude
        if self.python is not None:
            out.python = self.python
        return out


def _mtime(path: Optional[str]) -> int:
    try:
        return os.stat(path).st_mtime_ns if path else 0
    except OSError:
        return 0


@lru_cache(maxsize=256)
def _cached_settings(pyproject: Optional[str], mtime_ns: int) -> Settings:
    return load_settings(pyproject)


@lru_cache(maxsize=256)
def _nested_settings(pyproject: str, mtime_ns: int, overrides: Overrides) -> Settings:
    return overrides.apply(load_settings(pyproject))


def settings_for(path: str) -> Settings:
    """The settings that apply to ``path`` (nearest pyproject.toml), cached per directory and file
    modification time: for front ends that see one file at a time (flake8, the server)."""
    pyproject = find_pyproject(path)
    return _cached_settings(pyproject, _mtime(pyproject))


def forget_config_locations() -> None:
    """Look for pyproject.toml files afresh (one was created, deleted or given a table): for the server."""
    _find_pyproject_from.cache_clear()
    _file_folders.clear()
