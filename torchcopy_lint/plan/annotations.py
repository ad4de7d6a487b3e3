"""Which parameter annotations semantic/classes.py ``annotation`` never reads as a tensor's class, from CPython's
``ast`` (function_values.py reads them for ``copy.copy(x)``/``torch.tensor(x)`` of a parameter ``x``)."""

from __future__ import annotations

import ast
from typing import FrozenSet, Optional, Set

from .binding_names import tensor_class_name

#: Outer names of annotations that semantic/classes.py ``annotation`` never reads as a tensor class (the subscript
#: is ignored there: ``Optional[Tensor]`` is UNKNOWN). Imported under another name, they turn this off (plan).
SAFE_ANNOTATIONS = frozenset("""int float complex bool str bytes list List tuple Tuple dict Dict set Set frozenset
    FrozenSet Optional Union Sequence MutableSequence Iterable Iterator Mapping MutableMapping Any Callable Type type
    object Literal Collection Generator""".split())

SURE: FrozenSet[str] = frozenset()


def held(conditions: Optional[FrozenSet[str]], assumed: Optional[Set[str]]) -> bool:
    """Whether an annotation's ``conditions`` (``annotation_conditions``) can be given: none, or ``assumed`` to
    take them."""
    if conditions is None or conditions and assumed is None:
        return False
    if conditions:
        assumed.update(conditions)  # type: ignore[union-attr]
    return True


def annotation_conditions(annotation: ast.AST, classes: bool) -> Optional[FrozenSet[str]]:
    """The conditions under which semantic/classes.py ``annotation`` never reads ``annotation`` as a tensor's
    class (None: it may). It does so only for a name whose qualified name (through the file's imports) is one of
    TENSOR_CLASSES, or that names a tensor subclass of the file (``local_class``: a plain name no import binds).
    A string is read as the expression it holds, a subscript as its value (``Optional[T]``: UNKNOWN), ``X | Y``
    is UNKNOWN. A dotted name's qualified name ends with its own last name (``nodes.Node``: never). A plain name
    ``C`` (``x: Instruction``) is never one unless the file defines a class ``C``, imports a tensor class as
    ``C`` or imports ``*`` (``a`` + ``C``: arguments.UNLESS, structure.resolved decides). Without ``classes``, only
    what the model reads as no class at all (a name of SAFE_ANNOTATIONS, ``X | Y``): a value whose attributes it
    never knows (a class's may be tensors: ``m: nn.Linear``, ``m.weight``)."""
    if annotation.__class__ is ast.Constant and isinstance(annotation.value, str):  # type: ignore[attr-defined]
        try:
            annotation = ast.parse(annotation.value, mode="eval").body  # type: ignore[attr-defined]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    if annotation.__class__ is ast.Subscript:
        annotation = annotation.value  # type: ignore[attr-defined]
    if annotation.__class__ is ast.BinOp:
        return SURE  # `X | Y`: UNKNOWN to the model
    last = last_name(annotation)
    if last in SAFE_ANNOTATIONS:
        return SURE
    if not classes or last is None or tensor_class_name(last) or chain_root(annotation).__class__ is not ast.Name:
        return None
    return SURE if annotation.__class__ is ast.Attribute else frozenset({"a" + last})


def chain_root(expr: ast.AST) -> ast.AST:
    """``h`` of ``h.a.b`` (the first expression of a chain of attributes)."""
    while expr.__class__ is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return expr


def last_name(expr: ast.AST) -> Optional[str]:
    """``f`` of ``f`` and of ``x.f``; None for anything else."""
    if expr.__class__ is ast.Name:
        return expr.id  # type: ignore[attr-defined]
    if expr.__class__ is ast.Attribute:
        return expr.attr  # type: ignore[attr-defined]
    return None
