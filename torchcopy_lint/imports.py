"""Resolve local names to qualified names from a module's own import statements.

LibCST's QualifiedNameProvider needs full scope analysis, which costs several times
the parse. Rules only need to know whether ``th.tensor`` or ``mk`` means
``torch.tensor``, so a scan of the import statements (at any depth of statement
nesting, never inside expressions) is enough.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple, Union

import libcst as cst

from .walk import blocks, descendants

_AMBIGUOUS = ""  # a name imported as two different things


_ATTRIBUTE, _NAME, _SIMPLE_LINE, _IMPORT, _IMPORT_FROM = (cst.Attribute, cst.Name, cst.SimpleStatementLine,
                                                       cst.Import, cst.ImportFrom)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None. (Class identity, not ``isinstance``: LibCST's node
    classes are abstract-base-class subclasses, whose checks cost several times more, and have no subclasses.)"""
    cls = node.__class__
    if cls is _NAME:
        return node.value  # type: ignore[attr-defined]
    parts = []
    while cls is _ATTRIBUTE:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        cls = node.__class__
    if cls is _NAME:
        parts.append(node.value)  # type: ignore[attr-defined]
        parts.reverse()
        return ".".join(parts)
    return None


def _module_name(node: Union[cst.Attribute, cst.Name]) -> str:
    return dotted_name(node) or ""


def iter_statements(body) -> Iterator[cst.CSTNode]:
    """Every statement below ``body`` (a Module's or a block's statements), in source order."""
    for stmt in body:
        yield stmt
        if stmt.__class__ is not _SIMPLE_LINE:
            for block in blocks(stmt):
                yield from iter_statements(block)


#: Nodes that bind names (assignment and loop targets, ``as`` names, parameters, defs, classes, walrus targets,
#: ``global``/``nonlocal``, match captures): ``names_bound`` reads the Names below them (a superset).
_BINDERS = tuple(getattr(cst, name) for name in (
    "AssignTarget", "AnnAssign", "AugAssign", "For", "CompFor", "AsName", "Param", "FunctionDef", "ClassDef",
    "NamedExpr", "Global", "Nonlocal", "MatchAs", "MatchStar", "MatchMapping") if hasattr(cst, name))
_BOUND_PARTS = ("target", "name", "names", "rest", "pattern")


def names_bound(module: cst.Module) -> Set[str]:
    """Every name the module may bind, in any scope (a superset: ``a.b = 1`` counts ``a``)."""
    bound: Set[str] = set()
    for node in descendants(module):
        if isinstance(node, _BINDERS):
            for part in _BOUND_PARTS:
                inner = getattr(node, part, None)
                if isinstance(inner, cst.CSTNode):
                    bound.update(n.value for n in descendants(inner) if isinstance(n, cst.Name))
                elif isinstance(inner, (tuple, list)):
                    for item in inner:
                        bound.update(n.value for n in descendants(item) if isinstance(n, cst.Name))
        elif isinstance(node, cst.Import):
            bound.update(_module_name(alias.name).split(".")[0] for alias in node.names if alias.asname is None)
    return bound


#: Answers what a name stands for through the file's star imports (ProjectIndex.star_name).
StarResolver = Callable[[Tuple[str, ...], str], Optional[str]]


class ImportMap:
    """Maps each imported local name to the qualified name it stands for."""

    def __init__(self, module: cst.Module, absolute: Optional[Callable[[str], Optional[str]]] = None,
                 star: Optional[StarResolver] = None) -> None:
        """``absolute`` makes a relative import target absolute (``..utils`` -> ``pkg.utils``), from
        where the file lives (the project index); without it relative imports are left out. ``star`` says
        what a name stands for through ``from <project module> import *`` (without it star imports bind nothing
        here): asked for a name the file neither imports nor binds itself."""
        self._names: Dict[str, str] = {}
        self._absolute = absolute
        self._module = module
        self._star = star
        self._stars: List[str] = []  # the modules imported with `*`, absolute ("": not made absolute)
        self._starred: Dict[str, Optional[str]] = {}
        self._bound: Optional[Set[str]] = None
        for stmt in iter_statements(module.body):
            if stmt.__class__ is _SIMPLE_LINE:
                for small in stmt.body:  # type: ignore[attr-defined]
                    cls = small.__class__
                    if cls is _IMPORT:
                        self._add_import(small)
                    elif cls is _IMPORT_FROM:
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
        base = _module_name(node.module) if node.module is not None else ""
        if node.relative:  # made absolute, or "" where it cannot be
            base = (self._absolute("." * len(node.relative) + base) if self._absolute else None) or ""
        if isinstance(node.names, cst.ImportStar):
            self._stars.append(base)
            return
        if not base:
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
        if resolved is None and self._stars:
            resolved = self._from_stars(head)
        if not resolved:
            return None
        return f"{resolved}.{rest}" if rest else resolved

    def _from_stars(self, name: str) -> Optional[str]:
        """What ``name`` stands for through the file's star imports, where nothing in the file binds it."""
        if name in self._starred:
            return self._starred[name]
        found = None
        if self._star is not None and not name.startswith("_"):
            if self._bound is None:
                self._bound = names_bound(self._module)
            if name not in self._bound:
                found = self._star(tuple(self._stars), name) or None
        self._starred[name] = found
        return found

    def is_imported(self, local: str) -> bool:
        return bool(self._names.get(local))
