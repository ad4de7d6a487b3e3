"""The shape tokens of a file by flow scope: where the aliasing rules' joins must meet (structure.plan).

TCL112-TCL115 each report a hazard on one flow scope's graph (semantic/storage.py ``hazard``: the alias made, its
storage written in place, then read, on one function's paths), so an alias in one function and a write of the
same name in another cannot make one. structure.plan keeps such a rule only where one group holds its join.
"""

from __future__ import annotations

import ast
from typing import List, Set

from .function_values import FUNCTIONS
from .shapes import ALIAS_JOINS, Shape, shape_of

#: The aliasing rules: each reports a hazard on one flow scope's graph (semantic/storage.py ``hazard``: the alias
#: made, its storage written in place, read), so the tokens of their joins (``resolved``) must meet in one scope.
SCOPE_JOINED = frozenset({"TCL112", "TCL113", "TCL114", "TCL115"})


def scope_groups(tree: ast.Module, shapes: List[Shape], scoped: bool) -> List[Set[str]]:
    """The shape tokens of the file by flow scope, coarsely (a group may join scopes, never split one): each
    top-level def (with the functions nested in it), each method of a top-level class that makes an alias,
    and the module with everything else (class bodies, the classes that make no alias whole, guard blocks,
    and what a def's or a class's header evaluates there: decorators, defaults, annotations, bases)."""
    module: Set[str] = set()
    groups = [module]

    def header(node: ast.AST, tokens: Set[str]) -> None:
        if not any(token.startswith(_JOINED_PREFIXES) for token in tokens):
            return  # no alias, no write: nothing of its header can join anything
        parts = list(getattr(node, "decorator_list", ()))
        if node.__class__ is ast.ClassDef:
            parts += node.bases + [keyword.value for keyword in node.keywords]  # type: ignore[attr-defined]
        else:
            args = node.args  # type: ignore[attr-defined]
            parts += [d for d in args.defaults + args.kw_defaults if d is not None]
            parts += [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
                      if a is not None and a.annotation is not None]
            parts += [node.returns] if node.returns is not None else []  # type: ignore[attr-defined]
        for part in parts:
            if part.__class__ not in _PLAIN_EXPRESSIONS:
                module.update(shape_of(part, {}, scoped).tokens)  # type: ignore[arg-type]

    for statement, shape in zip(tree.body, shapes):
        cls = statement.__class__
        if cls in FUNCTIONS:
            groups.append(shape.tokens)
            header(statement, shape.tokens)
        elif cls is ast.ClassDef and any(token.startswith(_ALIAS_PREFIXES) for token in shape.tokens):
            header(statement, shape.tokens)
            for member in statement.body:  # type: ignore[attr-defined]
                if member.__class__ in FUNCTIONS:
                    tokens = shape_of(member, {}, scoped, as_method=True).tokens
                    groups.append(tokens)
                    header(member, tokens)
                else:
                    module.update(shape_of(member, {}, scoped).tokens)
        else:
            module.update(shape.tokens)
    return groups


#: The keyed tokens of an alias (shapes.ALIAS_JOINS), and those a join reads besides (a write, a step).
_ALIAS_PREFIXES = tuple(kind + ":" for kind in ALIAS_JOINS)
_JOINED_PREFIXES = _ALIAS_PREFIXES + ("written:", "method:step")
#: Header parts that hold no call, no operator and no walrus: no alias and no write.
_PLAIN_EXPRESSIONS = (ast.Name, ast.Attribute, ast.Constant)
