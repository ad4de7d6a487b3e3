"""The conditions of the plan's UNLESS tokens (arguments.py makes them): what in the whole file keeps a proof that
a call's argument is never a tensor. In: the file's tree, text and statement shapes; out: the conditions that hold
(``conditions_held``) and, per condition, whether the file breaks it (``breaks``)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Set, Tuple, Union

from .arguments import UNLESS
from .binding_names import STAR_IMPORT, displayed, unaliased_classes
from ..codes import attribute_makers

if TYPE_CHECKING:
    from .shapes import Shape

#: The names a file binds anywhere, those it imports (shapes.Shape.bound/imported, all statements together), and
#: the UNLESS tokens' ``d`` and ``a`` conditions that hold in it (``conditions_held``).
Bindings = Tuple[FrozenSet[str], FrozenSet[str], FrozenSet[str]]


def breaks(name: str, bindings: Bindings) -> bool:
    """Whether the file breaks an UNLESS token's condition ``name``: ``b`` + a name it binds, ``i`` + a name it
    imports, ``d`` + a name it binds otherwise than by top-level displays (or not at all), ``a`` + an annotation's
    class name it may make a tensor class's (binding_names.unaliased_classes), ``f`` + an attribute name in which
    it stores instances of its own classes (codes.attribute_makers), ``p`` + a word its text may resolve to (a
    decorator's name: ``parametrize``; any ``import *`` may re-export one under another name)."""
    kind = name[0]
    if kind in "dafp":
        return name not in bindings[2]
    return name[1:] in bindings[kind == "i"]


def conditions_held(tree: ast.Module, source: Union[str, bytes], shapes: List["Shape"], tokens: Set[str],
                     aliases: Dict[str, str]) -> FrozenSet[str]:
    """The UNLESS tokens' ``d``, ``a`` and ``f`` conditions in ``tokens`` that hold in the file: ``d`` + a name it
    binds, and binds only by top-level displays (``NAMES = {...}``); ``a`` + an annotation's class name
    (binding_names); ``f`` + an attribute name in which it stores no instance of its classes; ``p`` + a word the
    text never holds, where it imports no ``*`` (``breaks``)."""
    wanted: Dict[str, Set[str]] = {"d": set(), "a": set(), "f": set(), "p": set()}
    for token in tokens:
        if token.startswith(UNLESS):
            for name in token[len(UNLESS):].partition("|")[0].split(","):
                if name[0] in wanted:
                    wanted[name[0]].add(name[1:])
    held = {"a" + name for name in unaliased_classes(source, aliases, wanted["a"])} if wanted["a"] else set()
    if wanted["f"]:
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source  # as the model reads it
        held.update("f" + name for name in wanted["f"] if not attribute_makers(text, name))
    if wanted["p"]:
        text = source.decode("latin-1") if isinstance(source, bytes) else source
        held.update("p" + word for word in wanted["p"] if not STAR_IMPORT.search(text) and word not in text)
    if not wanted["d"]:
        return frozenset(held)
    seen: Set[str] = set()
    loose: Set[str] = set()
    for statement, shape in zip(tree.body, shapes):
        found = wanted["d"] & shape.bound
        if found:
            seen |= found
            loose |= found - displayed(statement)
    return frozenset(held | {"d" + name for name in seen - loose})
