"""Whether a read of ``x[k]`` after a write of ``y[k]`` (``y`` over ``x``'s storage) is another pass's element.

``y[k] = f(x[k])`` in a loop that rebinds ``k`` (``for k in blocks``, or ``k = ...`` in the body) reads and
writes one element per pass: when a later pass reads ``x[k]`` again, ``k`` names another element, and
whether it overlaps an earlier one (blocks of an initialiser do not) is not known. ``hazard`` asked with
``elements=True`` does not count such a read: it counts it when some path from the write reaches it without
rebinding a name of the index (the same element, or a constant index: it reads what was written).
"""

from __future__ import annotations

from typing import Optional, Sequence, Set

import libcst as cst

from ..imports import dotted_name


def another_element(storage, flow, write, read) -> bool:
    """Whether ``read`` reads ``x[k]`` with the index of the write ``y[k]`` and every path from the write
    to it rebinds a name of ``k``."""
    if write.read is None:
        return False
    written, seen = _index(storage, flow, write.read), _index(storage, flow, read)
    if written is None or seen is None or len(written) != len(seen) \
            or not all(a.deep_equals(b) for a, b in zip(written, seen)):
        return False
    keys: Set[str] = set()
    for element in written:
        _names(element, keys)
    cuts = {b.cfg for key in keys for b in flow.bindings.get(key, ()) if b.how != "phi"}
    if not cuts:
        return False  # a constant index: every pass reads the element written
    pending, reached = list(flow.succ[write.read.cfg]), set()
    while pending:
        node = pending.pop()
        if node in reached:
            continue
        reached.add(node)
        if node == read.cfg:
            return False  # reached with the index unchanged: the element written
        if node not in cuts:
            pending.extend(flow.succ[node])
    return True


def _index(storage, flow, read) -> Optional[Sequence]:
    parent = storage.parent(flow, read)
    if isinstance(parent, cst.Subscript) and parent.value is read.node:
        return parent.slice
    return None


def _names(node: cst.CSTNode, keys: Set[str]) -> None:
    key = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if key is not None:
        keys.add(key)
        return
    for child in node.children:
        _names(child, keys)
