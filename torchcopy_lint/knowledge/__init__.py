"""What libraries say they return, as data: torch's table, generated from torch's own annotations.

``torch_table.json`` is written by ``generate.py`` (run it with the torch to describe installed; the
test ``tests/test_knowledge.py`` regenerates it and compares). Linting never imports torch: it reads
this file, once, the first time a question needs it (``table()``). The codes are described in
``generate.py``.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, Dict, Optional

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_table.json")
SECTIONS = ("functions", "tensor_methods", "tensor_attributes", "functional", "module_forward")
_PLAIN_KINDS = {"T": "tensor", "L": "tensor-list", "N": "number", "X": "not-tensor", "M": "mapping"}


@lru_cache(maxsize=None)
def table() -> Dict[str, Any]:
    """The torch table; an empty one (everything unknown) if the file is missing or unreadable."""
    try:
        with open(TABLE_PATH, encoding="utf-8") as f:
            loaded = json.load(f)
    except (OSError, ValueError):
        loaded = {}
    for section in SECTIONS:
        loaded.setdefault(section, {})
    return loaded


def torch_version() -> Optional[str]:
    """The torch version the table was generated from."""
    return table().get("torch_version")


def lookup(section: str, name: str) -> Optional[Any]:
    """The code of ``name`` in a section (``functions``: ``torch.X``; ``tensor_methods``;
    ``tensor_attributes``; ``functional``:
    ``torch.nn.functional.X``; ``module_forward``: what calling an ``nn.X`` layer gives), or None."""
    return table()[section].get(name)


def plain_kind(section: str, name: str) -> Optional[str]:
    """The kind (as the project index names kinds) of an entry that does not depend on the arguments."""
    code = lookup(section, name)
    return _PLAIN_KINDS.get(code) if isinstance(code, str) else None


def gives_tensor(name: str) -> bool:
    """Whether ``torch.<name>(...)`` always returns a tensor."""
    return lookup("functions", name) == "T"
