"""A read-only walk over LibCST trees that does not rebuild them.

LibCST's own visitor reconstructs every node it passes (to support
transformers), which costs more than the parse itself. Linting only reads, so
the engine and the rules' look-ups walk the dataclass fields directly and skip
the whitespace/punctuation fields where no expression or statement can live.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

_SKIPPED_FIELDS = frozenset(
    """lpar rpar comma semicolon equal colon dot star leading_lines lines_after_decorators header footer
    trailing_whitespace newline operator asynchronous default_indent default_newline encoding
    has_trailing_newline""".split()
)
_fields_cache: Dict[type, Tuple[str, ...]] = {}


def child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of a node type that can hold expressions or statements."""
    fields = _fields_cache.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if not f.name.startswith("whitespace") and f.name not in _SKIPPED_FIELDS
        )
        _fields_cache[node_type] = fields
    return fields


_node_types: Dict[type, bool] = {}


def is_node_type(cls: type) -> bool:
    """``issubclass(cls, cst.CSTNode)``, remembered: CSTNode is an ABC, whose checks are slow,
    and the walks ask it for every field of every node."""
    known = _node_types.get(cls)
    if known is None:
        known = _node_types[cls] = issubclass(cls, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for name in child_fields(type(node)):
        value = getattr(node, name)
        cls = value.__class__
        if cls is tuple or cls is list:
            for item in value:
                if is_node_type(item.__class__):
                    yield item
        elif is_node_type(cls):
            yield value


def descendants(node: cst.CSTNode,
                stop: Optional[Callable[[cst.CSTNode], bool]] = None) -> Iterator[cst.CSTNode]:
    """``node`` and everything below it, depth first; below a node for which ``stop`` is true, nothing."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if stop is not None and current is not node and stop(current):
            continue
        pending.extend(reversed(list(children(current))))


def nodes_of_type(root: cst.CSTNode, wanted: type) -> List[cst.CSTNode]:
    """Every node of exactly type ``wanted`` at or below ``root``, in no particular order (one
    tight pass: the rules' whole-module look-ups, such as every call of a function, use it).

    In an editor (``remember_statements``), each top-level statement's answer for a module is remembered
    while the statement lives on: a document's next version (reparse.py) keeps the nodes of the statements
    its edit did not touch."""
    if _remembering and type(root) is cst.Module:
        found = []
        for statement in root.body:  # type: ignore[attr-defined]
            known = _CALLS_BY_STATEMENT.get(statement, wanted)
            if known is None:
                known = _CALLS_BY_STATEMENT.put(statement, wanted, _nodes_of_type(statement, wanted))
            found.extend(known)
        return found
    return _nodes_of_type(root, wanted)


class StatementMemo:
    """Answers about a statement node, kept while it lives on in a document's next versions (the editor:
    reparse.py keeps the nodes of the statements an edit did not touch), the oldest dropped beyond ``size``.
    ``context`` is what else the answer depends on; an entry holds its statement, so its id stays its own."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: Dict[int, Tuple[cst.CSTNode, object, object]] = {}

    def get(self, statement: cst.CSTNode, context: object) -> Optional[object]:
        if not _remembering:
            return None
        known = self._entries.get(id(statement))
        return known[2] if known is not None and known[0] is statement and known[1] == context else None

    def put(self, statement: cst.CSTNode, context: object, value):
        if _remembering:
            self._entries[id(statement)] = (statement, context, value)
            while len(self._entries) > self.size:
                del self._entries[next(iter(self._entries))]
        return value


_CALLS_BY_STATEMENT = StatementMemo(512)
_remembering = False


def remember_statements() -> None:
    """Keep answers per top-level statement across the versions of a document (the editor's worker). Not
    for the CLI, which lints each file once: the entries would only keep the last file's nodes alive."""
    global _remembering
    _remembering = True


def _nodes_of_type(root: cst.CSTNode, wanted: type) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []
    pending = [root]
    fields_of, is_node = child_fields, is_node_type
    while pending:
        node = pending.pop()
        node_type = type(node)
        if node_type is wanted:
            found.append(node)
        for name in fields_of(node_type):
            value = getattr(node, name)
            cls = value.__class__
            if cls is tuple or cls is list:
                pending.extend([item for item in value if is_node(item.__class__)])
            elif is_node(cls):
                pending.append(value)
    return found


_all_fields_cache: Dict[type, Tuple[str, ...]] = {}


def every_descendant(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it, whitespace and comments included (in field order, which
    is not always source order: a call's ``lpar`` comes after its arguments)."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        node_type = type(current)
        fields = _all_fields_cache.get(node_type)
        if fields is None:
            fields = _all_fields_cache[node_type] = tuple(f.name for f in dataclasses.fields(node_type))
        found: List[cst.CSTNode] = []
        for name in fields:
            value = getattr(current, name)
            cls = value.__class__
            if cls is tuple or cls is list:
                found.extend(item for item in value if is_node_type(item.__class__))
            elif is_node_type(cls):
                found.append(value)
        pending.extend(reversed(found))


def block_paths(stmt: cst.CSTNode, inner: List[cst.CSTNode]) -> Iterable[List[cst.CSTNode]]:
    """Paths (``inner`` + nodes down to the block) to every statement block directly inside a
    compound statement: bodies, else/elif branches, except handlers, finally, match cases."""
    body = getattr(stmt, "body", None)
    if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        yield inner + [body]
    for attr in ("orelse", "finalbody"):
        extra = getattr(stmt, attr, None)
        if extra is not None:
            yield from block_paths(extra, inner + [extra])
    for handler in getattr(stmt, "handlers", ()) or ():
        yield from block_paths(handler, inner + [handler])
    for case in getattr(stmt, "cases", ()) or ():
        yield from block_paths(case, inner + [case])


def blocks(stmt: cst.CSTNode) -> Iterable[Sequence[cst.CSTNode]]:
    """The statement lists directly inside a compound statement."""
    for path in block_paths(stmt, []):
        yield path[-1].body


def descendants_with_paths(node: cst.CSTNode,
                           path: List[cst.CSTNode]) -> Iterator[Tuple[cst.CSTNode, List[cst.CSTNode]]]:
    """Every node below ``node`` (depth first) with its ancestors: ``path`` (ending in ``node``) and
    the nodes in between. The ancestors are what ``Inference.kind_of`` takes as a stack."""
    pending = [(child, path) for child in reversed(list(children(node)))]
    while pending:
        current, ancestors = pending.pop()
        yield current, ancestors
        inner = ancestors + [current]
        pending.extend((child, inner) for child in reversed(list(children(current))))
