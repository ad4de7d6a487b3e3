"""``# noqa`` comments, with flake8's semantics.

``# noqa`` silences every code on its line; ``# noqa: TCL101,TCL103`` silences the
listed codes, each matching by prefix (``# noqa: TCL1`` silences TCL101..TCL105).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import FrozenSet, Optional

NOQA_RE = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def noqa_codes(line: str) -> Optional[FrozenSet[str]]:
    """None if the line has no noqa; an empty set for a bare noqa; else the listed codes."""
    if "noqa" not in line.lower():
        return None
    match = NOQA_RE.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c)


def is_suppressed(line: str, code: str) -> bool:
    codes = noqa_codes(line)
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)
