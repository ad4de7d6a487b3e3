"""Which guards may narrow a name to a tensor (semantic/guards.py), read from CPython's ``ast``.

The model narrows a name on ``isinstance(x, C)`` (a tensor's class: TENSOR; a builtin's, numpy's: NOT_TENSOR; an
``nn.Module`` class: a MODULE; any other: nothing), ``torch.is_tensor(x)`` and ``type(x) is C``. A read of ``x``
itself (``copy.copy(x)``, ``torch.tensor(x)``) is then a tensor only where a guard may say TENSOR: function_values.py
proves such a read no tensor where no guard of ``x`` may (an attribute of ``x`` is another matter: a module's
parameters; there any guard keeps the proof off).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional

from .annotations import SURE, annotation_conditions, last_name


def tensor_guard(call: ast.Call, compared: bool, guards: Dict[str, Optional[FrozenSet[str]]]) -> None:
    """Record in ``guards`` (name -> the conditions under which no guard narrows it to a tensor, None: one may)
    what guard ``call`` may narrow: the first argument, a plain name, of ``isinstance`` with a class or a tuple of
    classes the model may read as a tensor's (``annotation_conditions``, which the model's reading of an annotation
    covers: a plain name's ``a`` condition); every name in the arguments of another ``isinstance``, of ``is_tensor``
    and of a ``type`` call ``compared`` (``type(x) is torch.Tensor``; one in no comparison, ``f"{type(x)}"``,
    narrows nothing)."""
    args = call.args
    if call.func.__class__ is ast.Name and call.func.id == "isinstance" and len(args) == 2 \
            and not call.keywords and args[0].__class__ is ast.Name:  # type: ignore[attr-defined]
        found: Optional[FrozenSet[str]] = SURE
        for cls in args[1].elts if args[1].__class__ is ast.Tuple else (args[1],):  # type: ignore[attr-defined]
            conditions = annotation_conditions(cls, True)
            found = None if conditions is None or found is None else found | conditions
        names = [args[0].id]  # type: ignore[attr-defined]
    else:
        found = SURE if last_name(call.func) == "type" and not compared else None
        names = [n.id for arg in args for n in ast.walk(arg) if n.__class__ is ast.Name]
    for name in names:
        before = guards.get(name, SURE)
        guards[name] = None if before is None or found is None else before | found
