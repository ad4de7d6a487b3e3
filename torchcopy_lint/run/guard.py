"""Linting inside a host that must never go down: the flake8 plugin, the language server.

``lint_source`` already keeps LibCST's parser away from what would crash it (precheck.py:
CPython's parser first, a deep stack); here an internal error (an exception in a rule
or the engine) becomes a TCL003 diagnostic instead of an exception in the host. A hang
cannot be stopped in-process: a host that needs a time budget runs this in a worker
(isolation.py), as the CLI does.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Type, Union

from ..diagnostics import Diagnostic, internal_error


def lint_in_host(source: Union[str, bytes], path: str, rule_types: Optional[Sequence[Type]] = None,
                 **options: Any) -> List[Diagnostic]:
    """``engine.lint_source`` (all rules by default; ``options`` go to it) that reports, never raises."""
    try:
        from ..engine import lint_source

        if rule_types is None:
            from ..rules import ALL_RULES as rule_types
        return lint_source(source, path, rule_types, **options)
    except Exception as error:  # a bug of ours must not take the editor or flake8 down
        return [internal_error(path, error)]
