"""Where a rule's docs page is: shipped inside the wheel, or beside the package in a checkout.

Used by ``torchcopy-lint rule CODE`` (prints the page), by the language server (links to it), by SARIF
output (embeds it) and ``--statistics`` (names).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ..codes import META_NAMES

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package: docs/ is inside it (wheel) or beside it


@lru_cache(maxsize=None)
def doc_path(code: str) -> Optional[str]:
    for base in (os.path.join(_HERE, "docs"), os.path.join(os.path.dirname(_HERE), "docs")):
        path = os.path.join(base, "rules", f"{code}.md")
        if os.path.isfile(path):
            return path
    return None


def doc_page(code: str) -> Optional[str]:
    path = doc_path(code)
    if path is None:
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def doc_uri(code: str) -> Optional[str]:
    path = doc_path(code)
    return Path(path).as_uri() if path else None


@lru_cache(maxsize=None)
def rule_name(code: str) -> Optional[str]:
    """The rule's name (``tensor-copy-construct``); None for meta codes. Imports the rules (LibCST)."""
    from ..rules import RULES_BY_CODE

    rule = RULES_BY_CODE.get(code)
    return rule.name if rule is not None else None


_TITLE = re.compile(r"^#\s+([a-z0-9-]+)\s+\((TCL\d+)\)", re.MULTILINE)


@lru_cache(maxsize=None)
def code_name(code: str) -> str:
    """A name for any code (``clone-then-detach``, ``syntax-error``) without importing the rules when the
    docs page is there (its title is ``# name (CODE)``): for SARIF rule names and ``--statistics``."""
    if code in META_NAMES:
        return META_NAMES[code]
    match = _TITLE.search(doc_page(code) or "")
    if match and match.group(2) == code:
        return match.group(1)
    return rule_name(code) or code
