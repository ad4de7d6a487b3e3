"""LibCST's parse, without validating again what its own parser built.

Every LibCST node validates itself when constructed (``CSTNode.__post_init__`` calls ``_validate``: that
keywords have whitespace around them, that parentheses pair, ...). That guards trees built by hand, as a
fix builds them; a tree LibCST's parser built from source text is valid by construction, and LibCST's own
source says so beside the call ("It might make more sense to move validation work into the visitor,
which would allow us to avoid validating the tree when parsing a file"). The validation is ~17% of a
parse (2.8M node constructions for the files of torch that reach LibCST), so the engine's parses skip it.

Only while a parse runs: the hook is put back when the last running parse ends (a lock counts them), so
nodes built by hand (fixes, tests) are validated as ever, and every fix is parsed again with validation
(fixer.py) before it is kept. Where LibCST has no such hook (another version), this is LibCST's parse.
"""

from __future__ import annotations

import threading
from typing import Union

import libcst as cst

_VALIDATE = cst.CSTNode.__dict__.get("__post_init__")
_lock = threading.Lock()
_running = 0


def _constructed(self: cst.CSTNode) -> None:
    """A node the parser built: already valid."""


def parse_module(source: Union[str, bytes]) -> cst.Module:
    """``libcst.parse_module(source)``: the same tree and the same exceptions, without re-validating it."""
    global _running
    if _VALIDATE is None:
        return cst.parse_module(source)
    with _lock:
        _running += 1
        if _running == 1:
            cst.CSTNode.__post_init__ = _constructed  # type: ignore[assignment]
    try:
        return cst.parse_module(source)
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[assignment]
