"""Resolve local names to qualified names from a module's own import statements.

LibCST's QualifiedNameProvider needs full scope analysis, which costs several times
the parse. Rules only need to know whether ``th.tensor`` or ``mk`` means
``torch.tensor``, so a scan of the import statements (at any depth of statement
nesting, never inside expressions) is enough.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterator, Optional, Union

import libcst as cst

from .walk import blocks

_AMBIGUOUS = ""  # a name imported as two different things


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_name(node: Union[cst.Attribute, cst.Name]) -> str:
    return dotted_name(node) or ""


def iter_statements(body) -> Iterator[cst.CSTNode]:
    """Every statement below ``body`` (a Module's or a block's statements), in source order."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, cst.SimpleStatementLine):
            for block in blocks(stmt):
                yield from iter_statements(block)


class ImportMap:
    """Maps each imported local name to the qualified name it stands for."""

    def __init__(self, module: cst.Module, absolute: Optional[Callable[[str], Optional[str]]] = None) -> None:
        """``absolute`` makes a relative import target absolute (``..utils`` -> ``pkg.utils``), from
        where the file lives (the project index); without it relative imports are left out."""
        self._names: Dict[str, str] = {}
        self._absolute = absolute
        for stmt in iter_statements(module.body):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        self._add_import(small)
                    elif isinstance(small, cst.ImportFrom):
                        self._add_import_from(small)

    def _bind(self, local: str, qualified: str) -> None:
        previous = self._names.get(local)
        self._names[local] = qualified if previous in (None, qualified) else _AMBIGUOUS

    def _add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, full)
            else:
                top = full.split(".")[0]
                self._bind(top, top)

    def _add_import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        base = _module_name(node.module) if node.module is not None else ""
        if node.relative:
            target = self._absolute("." * len(node.relative) + base) if self._absolute else None
            if not target:
                return
            base = target
        elif node.module is None:
            return
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, f"{base}.{name}")

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        """``torch.tensor`` for ``th.tensor`` after ``import torch as th``; None if not imported."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        resolved = self._names.get(head)
        if not resolved:
            return None
        return f"{resolved}.{rest}" if rest else resolved

    def is_imported(self, local: str) -> bool:
        return bool(self._names.get(local))
