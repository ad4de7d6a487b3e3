"""The names a node of CPython's ``ast`` binds (shapes.py collects them per statement: ``Shape.bound``).

A builtin's call tells the semantic model what it returns only where the file binds no such name
(function_values.py, ``arguments.UNLESS``); these are the bindings it could find instead. function_values.py
reads the same bindings in a function (a name bound so there may hold anything).
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterable, Optional, Set, Union

#: The context of every Name read: CPython's parser gives all of them one instance (a Name that is not read is
#: bound; were the instances ever distinct, every Name would count as bound: never unsound).
LOAD = ast.parse("x", mode="eval").body.ctx  # type: ignore[attr-defined]
BINDERS = frozenset({ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.Global,
                      ast.Nonlocal, ast.Import, ast.ImportFrom,
                      *(getattr(ast, name) for name in ("MatchAs", "MatchStar", "MatchMapping") if hasattr(ast, name))})


def bindings(node: ast.AST, bound: Set[str], imported: Optional[Set[str]] = None) -> None:
    """The names ``node`` (one of BINDERS) binds, into ``bound``; an import's also into ``imported``."""
    cls = node.__class__
    if cls is ast.arg:
        bound.add(node.arg)  # type: ignore[attr-defined]
    elif cls in (ast.Import, ast.ImportFrom):
        for alias in node.names:  # type: ignore[attr-defined]
            local = alias.asname or alias.name.split(".")[0]
            bound.add(local)
            if imported is not None:
                imported.add(local)
    elif cls in (ast.Global, ast.Nonlocal):
        bound.update(node.names)  # type: ignore[attr-defined]
    else:
        for field in ("name", "rest"):  # a def's or class's name, a handler's, a match capture's
            found = getattr(node, field, None)
            if isinstance(found, str):
                bound.add(found)


#: Values the semantic model never calls a tensor whatever is in them (a display of tensors is a list of them).
_DISPLAYS = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
             ast.DictComp, ast.GeneratorExp, ast.Lambda)


def displayed(statement: ast.stmt) -> Set[str]:
    """The names a top-level ``NAME = <display>`` (``NAME: T = <display>``) binds, nothing else binding them in it:
    a module's name bound only by such statements is never a tensor where a function reads it
    (function_values.py ``ArgumentScope.never_tensor``, structure.resolved)."""
    cls = statement.__class__
    if cls is ast.Assign:
        targets = statement.targets  # type: ignore[attr-defined]
    elif cls is ast.AnnAssign and statement.value is not None:  # type: ignore[attr-defined]
        targets = [statement.target]  # type: ignore[attr-defined]
    else:
        return set()
    value = statement.value  # type: ignore[attr-defined]
    if value.__class__ not in _DISPLAYS or any(t.__class__ is not ast.Name for t in targets):
        return set()
    names = {t.id for t in targets}  # type: ignore[attr-defined]
    if any(node.__class__ is ast.Name and node.ctx is not LOAD and node.id in names  # type: ignore[attr-defined]
           or node.__class__ in BINDERS for node in ast.walk(value)):
        return set()  # (a comprehension's variable or a walrus of the same name, a lambda's parameters)
    return names


def tensor_class_name(name: str) -> bool:
    """Whether ``name`` may be the last name of a class semantic/vocabulary.py TENSOR_CLASSES lists (``Tensor``,
    ``Parameter``, ``Buffer``, ``FloatTensor``, ...)."""
    return name.endswith("Tensor") or name in ("Parameter", "Buffer")


STAR_IMPORT = re.compile(r"\bimport[\s\\(]*\*")


def unaliased_classes(source: Union[str, bytes], aliases: Dict[str, str], names: Iterable[str]) -> Set[str]:
    """Those of ``names`` (annotations' plain class names) that the semantic model never resolves to a tensor class:
    the file (``source``, its import ``aliases``: local name -> the name imported) imports no ``*`` (which may
    re-export one under any name), imports no tensor class as the name (``from torch import Tensor as T``) and
    defines no class of the name (which may subclass one); an ASCII name (identifiers are NFKC-normalised). Read
    from the text: comments and strings count (a superset)."""
    text = source.decode("latin-1") if isinstance(source, bytes) else source
    if STAR_IMPORT.search(text):
        return set()
    return {name for name in names if name.isascii() and not tensor_class_name(aliases.get(name, name))
            and not re.search(r"\bclass(?:\s|\\)+" + re.escape(name) + r"\b", text)}
