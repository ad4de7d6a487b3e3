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

#: Text that shows `copy.copy` may be called under another name: calls then can't be found by text.
COPY_ALIAS = r"\bfrom\s+copy\s+import\s*(?:\([\w\s,]*?|(?:[\w \t,]|\\\r?\n)*?)(?<!\w)copy\b|\bimport\s+copy\s+as\b"
#: Text that shows `torch.tensor`/`torch.as_tensor` may be called under another name.
TENSOR_ALIAS = r"\bimport\s*\(?[\w\s,\\]*\b(?:as_)?tensor\b"
#: Text elsewhere in a file that the kind inference reads (pruning must keep it): functions annotated
#: `-> Tensor` (their return statements may contradict it) and calls passing config fields (they may
#: contradict a parameter's `torch.Tensor` annotation).
KIND_EVIDENCE = r"->\s*['\"]?[\w.]*Tensor\b|\.(?:config|cfg)\."

TRIGGERS: Dict[str, Tuple[str, ...]] = {
    # `tensor(` with a first argument that is not a literal, or an import of `tensor` under another name.
    "TCL101": (r"(?<!\w)tensor\s*\(\s*[A-Za-z_(\-~]|\bimport\s*\(?[\w\s,\\]*\btensor\b",),
    "TCL102": (r"\bnew_tensor\s*\(",),
    "TCL103": (r"\bclone\b", r"\bdetach\b"),
    # `.data` followed by an in-place method, a subscript or an assignment; or `.data` passed to `f_(`.
    "TCL104": (r"(?<=\.)data\s*\)*\s*(?:\.\s*\w+_\s*\(|\[|=[^=]|[-+*/@%&|^]=)|\w_\s*\([^()]*?\.data\s*[,)]",),
    # only training code is checked
    "TCL105": (r"\bdeepcopy\b", r"\b(?:backward|step)\s*\("),
    # `.copy_(` right after a `*_like(...)` call without nested parentheses (comments and closing parentheses
    # may come between), or one of the three imported under another name.
    "TCL106": (r"\.\s*copy_\s*\(",
               r"_like\s*\([^()]*\)[\s)]*(?:#[^\n]*[\s)]*)*\.\s*copy_\s*\(|\b(?:empty|zeros|ones)_like\s+as\b"),
    # `tensor(`/`as_tensor(` whose argument starts with a name (perhaps inside `[`/`(`), or an import of either.
    "TCL107": (r"(?<!\w)(?:as_)?tensor\s*\(\s*(?:data\s*=\s*)?[\[(]?\s*[A-Za-z_]|" + TENSOR_ALIAS,),
    # `copy.copy(`, or `copy` imported from `copy` (not `deepcopy`), or `import copy as c`.
    "TCL108": (r"\bcopy\s*\.\s*copy\s*\(|" + COPY_ALIAS,),
    # `state_dict(` and a training step (`backward(`/`step(`) in the same file.
    "TCL109": (r"\bstate_dict\s*\(", r"\b(?:backward|step)\s*\("),
    # `name.backward(` (a plain name, maybe parenthesised, is what TCL110 follows), and an accumulation:
    # `+=`, `.append(` or `name + name`.
    "TCL110": (r"\.\s*backward\s*\(",
               r"(?m)(?:^|[^\w.)\]\s])\s*\(?\s*[A-Za-z_]\w*\s*\)?\s*\.\s*backward\s*\(",
               r"\+=|\bappend\s*\(|\w\s*\+\s*\w"),
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
