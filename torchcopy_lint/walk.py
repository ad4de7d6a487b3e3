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


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


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
