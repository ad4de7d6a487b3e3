"""The part of the rule table that must be importable without LibCST: codes and trigger texts.

A warm run (every file answered by the cache) needs the codes for the cache keys,
and the flake8 plugin needs the triggers to skip files no rule can match, and
neither should pay for the LibCST import (~0.11 s). Each rule module takes its
``triggers`` from here; tests/test_registry.py checks the table against the rules.

A rule's triggers are regexes that must *all* occur in a file's text for the rule
to possibly report anything in it (the prefilter: a superset, never a guess).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, Tuple, Union

TRIGGERS: Dict[str, Tuple[str, ...]] = {
    # `tensor(` with a first argument that is not a literal, or an import of `tensor` under another name.
    "TCL101": (r"(?<!\w)tensor\s*\(\s*[A-Za-z_(\-~]|\bimport\s*\(?[\w\s,\\]*\btensor\b",),
    "TCL102": (r"\bnew_tensor\s*\(",),
    "TCL103": (r"\bclone\b", r"\bdetach\b"),
    # `.data` followed by an in-place method, a subscript or an assignment; or `.data` passed to `f_(`.
    "TCL104": (r"(?<=\.)data\s*\)*\s*(?:\.\s*\w+_\s*\(|\[|=[^=]|[-+*/@%&|^]=)|\w_\s*\([^()]*?\.data\s*[,)]",),
    # only training code is checked
    "TCL105": (r"\bdeepcopy\b", r"\b(?:backward|step)\s*\("),
}

RULE_CODES = tuple(TRIGGERS)

# Meta codes: reported about a file rather than by a rule; never silenced by --select/--ignore.
SYNTAX_ERROR_CODE = "TCL001"
READ_ERROR_CODE = "TCL002"
INTERNAL_ERROR_CODE = "TCL003"
TIMEOUT_CODE = "TCL004"
META_CODES: Dict[str, str] = {
    SYNTAX_ERROR_CODE: "syntax error, or a file that cannot be decoded or is nested too deeply to parse",
    READ_ERROR_CODE: "file cannot be read",
    INTERNAL_ERROR_CODE: "failed to lint: an internal error or a parser crash (please report it)",
    TIMEOUT_CODE: "file took longer than the per-file time budget (--file-timeout)",
}

# Names of the meta codes, as rules have (SARIF's rule names, --statistics).
META_NAMES: Dict[str, str] = {
    SYNTAX_ERROR_CODE: "syntax-error",
    READ_ERROR_CODE: "unreadable-file",
    INTERNAL_ERROR_CODE: "failed-to-lint",
    TIMEOUT_CODE: "file-timeout",
}

ALL_CODES = tuple(META_CODES) + RULE_CODES


def severity(code: str) -> str:
    """One severity for every output format: a file that could not be linted is an error, a finding a warning."""
    return "error" if code in META_CODES else "warning"


@lru_cache(maxsize=None)
def _compiled(code: str, as_bytes: bool):
    return tuple(re.compile(t.encode() if as_bytes else t) for t in TRIGGERS[code])


def may_match(code: str, source: Union[str, bytes]) -> bool:
    """The prefilter of one rule: False means it cannot report anything in ``source``."""
    return all(p.search(source) for p in _compiled(code, isinstance(source, bytes)))  # type: ignore[arg-type]


def may_match_any(source: Union[str, bytes]) -> bool:
    return any(may_match(code, source) for code in RULE_CODES)
