"""Every claim the rules, their fixes and their docs make about torch, as runnable checks.

Each ``check(device)`` builds its tensors on ``device`` and raises ``AssertionError`` with a
precise message when torch does not behave as stated. torch is imported inside the checks so
that importing this package (to list claims, or from the CLI) never pays for it.

One module per rule (``tcl101`` ..., found by code), plus ``myths`` for widely repeated statements not tied
to a rule; :data:`CLAIMS` is the registry in table order.

Tags say what a claim backs: ``hazard`` (why the rule exists), ``fix`` (why the autofix is
equivalent), ``fix-caveat`` (where the fix differs), ``near-miss`` (why similar code is not
flagged), ``myth`` (a widely repeated statement that is false; see docs/myths.md) and ``timing``.
"""

from __future__ import annotations

import importlib
from typing import List

from ...codes import RULE_CODES
from ..core import Claim
from . import myths

#: One claims module per rule, named after its code (``tcl101`` ...), in code order.
RULE_MODULES = tuple(importlib.import_module(f"{__name__}.{code.lower()}") for code in RULE_CODES)

CLAIMS: List[Claim] = [claim for module in (*RULE_MODULES, myths) for claim in module.CLAIMS]
