"""Syntax helpers of the semantic model: which names a target, a pattern or a parameter list binds.

What it knows: only the shape of LibCST nodes (no flow, no values).
"""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from ..imports import dotted_name
from ..walk import descendants


def buffer_key(call: cst.BaseExpression) -> Optional[str]:
    """``self.x`` for ``self.register_buffer("x", ...)``."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.args \
            and call.func.attr.value in ("register_buffer", "register_parameter"):
        receiver = dotted_name(call.func.value)
        name = call.args[0].value
        if receiver is not None and isinstance(name, cst.SimpleString) and isinstance(name.evaluated_value, str):
            return f"{receiver}.{name.evaluated_value}"
    return None


def all_params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def target_keys(target: cst.BaseExpression) -> Set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {k for el in target.elements for k in target_keys(el.value)}
    if isinstance(target, cst.StarredElement):
        return target_keys(target.value)
    key = dotted_name(target)
    return {key} if key is not None else set()


def del_keys(target: cst.BaseExpression) -> Set[str]:
    if isinstance(target, cst.Subscript):
        return set()
    return target_keys(target)


def pattern_names(pattern: cst.CSTNode) -> List[str]:
    names = []
    for node in descendants(pattern):
        if isinstance(node, cst.MatchAs) and node.name is not None:
            names.append(node.name.value)
        elif isinstance(node, cst.MatchStar) and node.name is not None:
            names.append(node.name.value)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            names.append(node.rest.value)
    return names



def binds(target: cst.BaseExpression, key: str) -> bool:
    """Whether an assignment/loop target binds the name (or ``a.b`` chain) ``key``."""
    return key in target_keys(target)


def mentioned_keys(node: cst.CSTNode) -> Set[str]:
    """Every name and attribute chain ``node`` mentions (nested scopes included)."""
    found = set()
    for sub in descendants(node):
        if isinstance(sub, (cst.Name, cst.Attribute)):
            key = dotted_name(sub)
            if key is not None:
                found.add(key)
    return found
