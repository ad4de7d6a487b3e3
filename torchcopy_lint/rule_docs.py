"""Rule documentation without importing the rules (and LibCST): the shipped docs pages.

Used by ``torchcopy-lint rule CODE``, by SARIF output (which embeds each rule's page)
and by ``--statistics`` (rule names).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Optional

from .codes import META_CODES, META_NAMES

_TITLE = re.compile(r"^#\s+([a-z0-9-]+)\s+\((TCL\d+)\)", re.MULTILINE)


@lru_cache(maxsize=None)
def doc_page(code: str) -> Optional[str]:
    """The rule's docs page: shipped inside the wheel, or beside the package in a checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.path.join(here, "docs"), os.path.join(os.path.dirname(here), "docs")):
        path = os.path.join(base, "rules", f"{code}.md")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    return None


@lru_cache(maxsize=None)
def rule_name(code: str) -> str:
    """``clone-then-detach`` for TCL103: from the code table, the docs page's title, or the rule class."""
    if code in META_CODES:
        return META_NAMES.get(code, code.lower())
    page = doc_page(code)
    match = _TITLE.search(page or "")
    if match and match.group(2) == code:
        return match.group(1)
    from .rules import RULES_BY_CODE  # imports LibCST; only when a page is missing

    rule = RULES_BY_CODE.get(code)
    return rule.name if rule is not None else code
