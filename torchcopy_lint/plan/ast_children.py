"""The children of a node of CPython's ``ast`` that the plan's walks enter: ``ast.iter_child_nodes`` in its order,
less the constants and the fields that never hold a statement or an expression (contexts, operators, names, import
aliases). The walks (shapes.py, arguments.py, function_values.py) ask for none of those: a field tuple remembered
per class, read with one ``getattr`` each, costs a fraction of ``iter_child_nodes``'s two generators."""

from __future__ import annotations

import ast
from typing import Dict, List, Tuple

#: Fields that never hold a statement or an expression (names, operators, contexts, flags).
LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "asname", "type_comment",
                         "kind", "conversion", "level", "is_async", "simple", "tag", "names"})
FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(cls: type) -> Tuple[str, ...]:
    """The fields of node class ``cls`` that may hold a statement or an expression (``FIELDS``, filled here)."""
    found = FIELDS.get(cls)
    if found is None:
        found = FIELDS[cls] = tuple(f for f in getattr(cls, "_fields", ()) if f not in LEAF_FIELDS)
    return found


def children(node: ast.AST) -> List[ast.AST]:
    """The children of ``node`` in ``child_fields``, constants left out, in ``ast.iter_child_nodes``'s order."""
    fields = FIELDS.get(node.__class__)
    if fields is None:
        fields = child_fields(node.__class__)
    out: List[ast.AST] = []
    append, AST, Constant = out.append, ast.AST, ast.Constant
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, AST) and item.__class__ is not Constant:
                    append(item)
        elif isinstance(value, AST) and value.__class__ is not Constant:
            append(value)
    return out
