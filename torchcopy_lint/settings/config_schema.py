"""The ``[tool.torchcopy-lint]`` schema: one row per key, each with its type check.

Every key is checked for type and value before any of it is used, and an error
names the file, the key, what was expected and what was found (TOML has no
schema of its own, so a typo such as ``select = "TCL101"`` must not be read as
the characters of a string). Importing this module costs no more than ``re``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..codes import RULE_CODES


class ConfigError(Exception):
    """A configuration problem; the CLI prints it and exits 2, never with a traceback."""


def describe(value: Any) -> str:
    """A TOML-flavoured description of what was found, for error messages."""
    import datetime  # only for an error: a run that reads no faulty table does not pay for it

    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
             (list, "an array"), (dict, "a table"), (datetime.datetime, "a date-time"), (datetime.date, "a date"),
             (datetime.time, "a time"))
    kind = next((name for typ, name in kinds if isinstance(value, typ)), type(value).__name__)
    try:
        shown = json.dumps(value, default=str) if not isinstance(value, bool) else str(value).lower()
    except ValueError:  # pragma: no cover - nan/inf
        shown = repr(value)
    return f"{kind} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def selector_problem(selector: str, known: Sequence[str] = RULE_CODES) -> Optional[str]:
    """Why ``selector`` is not a rule selector (a code, a prefix of one, or ``ALL``); None if it is one."""
    if selector == "ALL" or (selector and any(code.startswith(selector) for code in known)):
        return None
    hint = " (selectors are upper case)" if selector.upper() != selector and selector_problem(selector.upper()) is None else ""
    return f"unknown rule selector {selector!r}{hint} (known: ALL, {', '.join(known)} or a prefix)"


# --- value checkers: each returns the converted value, or raises _Mismatch -----------------------

class _Mismatch(Exception):
    """A value does not fit its key; ``detail`` says how (without the file and key)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _nested(where: str, detail: str) -> str:
    """``key[1]: ...`` / ``key."tests/*": ...``: the path to the offending value, then the problem."""
    return where + (detail if detail.startswith(("[", '."')) else ": " + detail)


def _array_of(item: Callable[[Any], Any], what: str) -> Callable[[Any], Tuple[Any, ...]]:
    def check(value: Any) -> Tuple[Any, ...]:
        if not isinstance(value, list):
            raise _Mismatch(f"expected an array of {what}, found {describe(value)}")
        out = []
        for index, element in enumerate(value):
            try:
                out.append(item(element))
            except _Mismatch as mismatch:
                raise _Mismatch(_nested(f"[{index}]", mismatch.detail)) from None
        return tuple(out)

    return check


def _selector(value: Any) -> str:
    if not isinstance(value, str):
        raise _Mismatch(f'expected a rule selector (a string such as "TCL101"), found {describe(value)}')
    problem = selector_problem(value)
    if problem is not None:
        raise _Mismatch(problem)
    return value


def _pattern(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Mismatch(f"expected a glob pattern (a non-empty string), found {describe(value)}")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Mismatch(f"expected true or false, found {describe(value)}")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise _Mismatch(f"expected a number of seconds >= 0 (0: no limit), found {describe(value)}")
    return float(value)


def _path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise _Mismatch(f"expected a path (a non-empty string), found {describe(value)}")
    return value


_paths = _array_of(_path, "paths")
_selectors = _array_of(_selector, 'rule selectors (e.g. ["TCL101", "TCL10"])')
_patterns = _array_of(_pattern, "glob patterns")


def _per_file_ignores(value: Any) -> Dict[str, Tuple[str, ...]]:
    if not isinstance(value, dict):
        raise _Mismatch('expected a table of glob pattern = [rule selectors] '
                        f'(e.g. {{ "tests/*" = ["TCL104"] }}), found {describe(value)}')
    out = {}
    for pattern, selectors in value.items():
        try:
            out[_pattern(pattern)] = _selectors(selectors)
        except _Mismatch as mismatch:
            raise _Mismatch(_nested(f'."{pattern}"', mismatch.detail)) from None
    return out


@dataclass(frozen=True)
class Option:
    key: str  # as written in pyproject.toml
    attr: str  # the Settings field it sets
    check: Callable[[Any], Any]
    help: str


OPTIONS: Tuple[Option, ...] = (
    Option("select", "select", _selectors, "rule selectors to enable (replaces the default: every rule but the opt-in TCL119)"),
    Option("extend-select", "extend_select", _selectors, "rule selectors to enable on top of `select`"),
    Option("ignore", "ignore", _selectors, "rule selectors to disable"),
    Option("per-file-ignores", "per_file_ignores", _per_file_ignores,
           "glob pattern (relative to the project root, or a file name) = selectors to disable there"),
    Option("exclude", "exclude", _patterns, "patterns of files and directories to skip (replaces the defaults)"),
    Option("extend-exclude", "extend_exclude", _patterns, "patterns to skip on top of `exclude`"),
    Option("force-exclude", "force_exclude", _boolean,
           "apply the exclusions to paths given on the command line too (as pre-commit passes them)"),
    Option("file-timeout", "file_timeout", _seconds, "time budget per file in seconds (TCL004 over it; 0: no limit)"),
    Option("src", "src", _paths,
           "more folders that absolute imports start from, as ruff's `src` (relative to the pyproject.toml's "
           "folder), after the project root and its src/"),
    Option("python", "python", _path,
           "the project's Python environment: a virtual environment, a prefix or an interpreter in one "
           "(relative to the pyproject.toml's folder); default: VIRTUAL_ENV, else an active conda environment "
           "(CONDA_PREFIX) but base, else .venv/venv in the project root, else an active conda base environment"),
)
OPTIONS_BY_KEY: Dict[str, Option] = {option.key: option for option in OPTIONS}


def validate_table(table: Any, source: str) -> Dict[str, Any]:
    """``{Settings field: value}`` for a ``[tool.torchcopy-lint]`` table; ConfigError on the first problem."""
    where = f"{source}: [tool.torchcopy-lint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, found {describe(table)}")
    unknown: List[str] = sorted(set(table) - set(OPTIONS_BY_KEY))
    if unknown:
        raise ConfigError(f"{where}: unknown option(s) {', '.join(unknown)} "
                          f"(known: {', '.join(OPTIONS_BY_KEY)})")
    values = {}
    for key, value in table.items():
        option = OPTIONS_BY_KEY[key]
        try:
            values[option.attr] = option.check(value)
        except _Mismatch as mismatch:
            raise ConfigError(f"{where} {_nested(key, mismatch.detail)}") from None
    return values
