"""Settings: rule selection and ``[tool.torchcopy-lint]`` in pyproject.toml.

Selection follows ruff: codes or prefixes; for each code the most specific
matching ``select``/``ignore`` entry wins (``ignore`` on a tie).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11
    tomllib = None  # type: ignore[assignment]

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".torchcopy_lint_cache", "build", "dist", "node_modules", "site-packages", ".eggs",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of notebooks
)


class ConfigError(Exception):
    pass


def _split_codes(values: Iterable[str]) -> Tuple[str, ...]:
    out: List[str] = []
    for value in values:
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return tuple(out)


def enabled_codes(all_codes: Sequence[str], select: Sequence[str], ignore: Sequence[str]) -> FrozenSet[str]:
    """The codes left enabled by ``select``/``ignore`` (prefixes; the longer match wins)."""
    select = select or ("TCL",)
    enabled = set()
    for code in all_codes:
        best_select = max((len(p) for p in select if code.startswith(p) or p == "ALL"), default=-1)
        best_ignore = max((len(p) for p in ignore if code.startswith(p) or p == "ALL"), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            enabled.add(code)
    return frozenset(enabled)


def validate_codes(codes: Sequence[str], all_codes: Sequence[str]) -> None:
    for code in codes:
        if code != "ALL" and not any(c.startswith(code) for c in all_codes):
            raise ConfigError(f"unknown rule selector {code!r} (known: {', '.join(all_codes)})")


@dataclass
class Settings:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    per_file_ignores: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    project_root: Optional[str] = None

    def codes_for(self, path: str, all_codes: Sequence[str]) -> FrozenSet[str]:
        ignore = list(self.ignore)
        rel = self._relative(path)
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
                ignore.extend(codes)
        return enabled_codes(all_codes, tuple(self.select) + tuple(self.extend_select), ignore)

    def is_excluded(self, path: str) -> bool:
        """Whether a file or directory met while walking a given directory is excluded.

        Patterns without a slash match a single path component (the entry's own name);
        patterns with one match the path relative to the project root. Paths given on the
        command line are never excluded, like ruff (the walk only asks about entries below them).
        """
        patterns = self.exclude + self.extend_exclude
        name = os.path.basename(os.path.normpath(path))
        if any(fnmatch.fnmatch(name, pat) for pat in patterns if "/" not in pat):
            return True
        rel = self._relative(path)
        return any(fnmatch.fnmatch(rel, pat.strip("/")) for pat in patterns if "/" in pat)

    def _relative(self, path: str) -> str:
        root = self.project_root or os.getcwd()
        try:
            rel = os.path.relpath(os.path.abspath(path), root)
        except ValueError:
            rel = path
        return rel.replace(os.sep, "/")

    def fingerprint(self) -> str:
        """Hash of everything that changes what a file's diagnostics are (for the cache key)."""
        payload = json.dumps([self.select, self.ignore, self.extend_select, sorted(self.per_file_ignores.items())])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def find_pyproject(start: str) -> Optional[str]:
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_settings(pyproject: Optional[str]) -> Settings:
    """Settings from ``[tool.torchcopy-lint]`` (defaults when absent)."""
    settings = Settings()
    if pyproject is None or tomllib is None:
        return settings
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read configuration: {error}") from error
    table = data.get("tool", {}).get("torchcopy-lint", {})
    settings.project_root = os.path.dirname(os.path.abspath(pyproject))
    known = {"select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"{pyproject}: unknown option(s) in [tool.torchcopy-lint]: {', '.join(sorted(unknown))}")
    settings.select = _split_codes(table.get("select", ()))
    settings.ignore = _split_codes(table.get("ignore", ()))
    settings.extend_select = _split_codes(table.get("extend-select", ()))
    settings.per_file_ignores = {k: _split_codes(v) for k, v in table.get("per-file-ignores", {}).items()}
    if "exclude" in table:
        settings.exclude = tuple(table["exclude"])
    settings.extend_exclude = tuple(table.get("extend-exclude", ()))
    return settings
