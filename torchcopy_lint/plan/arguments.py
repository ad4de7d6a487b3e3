"""Whether a call's argument may be what TCL101, TCL107 and TCL108 need: their shape tokens (shapes.py).

For ``torch.tensor(x)``, ``torch.tensor([a, b])`` and ``copy.copy(x)`` in a def, the tokens that keep those rules
(``data:``, ``tensors:``, ``one_arg:``) are given only where the argument may be what the rule needs, as the
function's own bindings say (function_values.py); a "no" that rests on the file binding no builtin's name is
given as a token held ``UNLESS`` it does (structure.resolved decides). ``placed_calls`` is the walk that says in
which function (and loop) each such call is read.

Not followed (structure.plan then turns this off for the file): a guard imported under another name
(``from torch import is_tensor as it``), an annotation's name imported as, or defined as a class named as, one of
``SAFE_ANNOTATIONS``.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, Union

from .ast_children import children
from .guard_arms import Proven, guard_arms
from .function_values import (FUNCTIONS, GUARD_CALLS, LOOPS, SAFE_ANNOTATIONS, ArgumentScope, At, Site,  # noqa: F401
                              last_name, may_be_tensor, may_be_tensor_list)

#: The calls whose argument tokens structure.NEEDS reads (`torch.tensor`/`torch.as_tensor`: TCL101, TCL107;
#: `copy.copy`: TCL108): the only ones refined by scope (under another name, a call keeps its loose tokens).
REFINED_CALLS = frozenset({"tensor", "as_tensor", "copy"})
#: Their tokens that structure.NEEDS reads (and the twins of a plain name's call): a statement whose calls give
#: none of them needs no refinement.
REFINED_TOKENS = frozenset(prefix + token for prefix in ("", "name_")
                           for token in ("data:tensor", "tensors:tensor", "tensors:as_tensor", "one_arg:copy"))


def followed(aliases: Dict[str, str], source: Union[str, bytes]) -> bool:
    """Whether this module's answers hold for ``source`` (``aliases``: its import aliases, local name -> the name
    imported): no guard under another name, no annotation name of SAFE_ANNOTATIONS that is an alias or a class of
    the file's own (text: a superset)."""
    if any(local in SAFE_ANNOTATIONS or imported in GUARD_CALLS for local, imported in aliases.items()):
        return False
    text = source.decode("latin-1") if isinstance(source, bytes) else source  # only where `class` is: any 8-bit
    for found in _SAFE_CLASS.finditer(text):
        start = max(text.rfind("\n", 0, found.start()), text.rfind("\r", 0, found.start())) + 1
        if not text[start:found.start()].strip(" \t\f"):
            return False  # `class` starts its line: a definition (not "the class type" in a docstring)
    return True


_SAFE_CLASS = re.compile(r"class(?:[ \t\f]|\\\r?\n)+(?:%s)\b" % "|".join(sorted(SAFE_ANNOTATIONS)))


def argument_tokens(call: ast.Call, add, at: At, guarded: Optional[Tuple[str, FrozenSet[str]]] = None) -> None:
    """TCL101/TCL107/TCL108's shape tokens of ``call``: ``data:NAME`` when its data argument (the first one, if
    positional or ``data=``: the rules read no other, and none after a ``*args``/``**kwargs`` or another keyword) may
    be a tensor, ``tensors:NAME`` when it may be a list of tensors, ``one_arg:NAME`` for a single positional argument
    that may be a tensor (``copy.copy(t)``: a call on a plain name); a plain name's call also gives the ``name_``
    twins, which structure.resolved maps through import aliases. ``guarded``: a guard around the call proves its
    first argument no tensor (guard_arms.py)."""
    func = call.func
    if func.__class__ is ast.Attribute:
        name, prefixes, on_name = func.attr, ("",), func.value.__class__ is ast.Name  # type: ignore[attr-defined]
    elif func.__class__ is ast.Name:
        name, prefixes, on_name = func.id, ("", "name_"), True  # type: ignore[attr-defined]
    else:
        return
    found = []
    data = None
    first = first_argument(call)
    if first.__class__ is ast.keyword:
        data = first.value if first.arg == "data" else None  # type: ignore[union-attr]
    elif first is not None and first.__class__ is not ast.Starred:
        data = first
    if guarded is not None and call.args and data is call.args[0]:
        if guarded[1]:
            found.append(UNLESS + ",".join(sorted(guarded[1])) + "|data:")
    elif data is not None and _may(may_be_tensor, data, at, found, "data:"):
        found.append("data:")
    if data is not None and _may(may_be_tensor_list, data, at, found, "tensors:"):
        found.append("tensors:")
    if on_name and len(call.args) == 1 and not call.keywords and call.args[0].__class__ is not ast.Starred \
            and _may(may_be_tensor, call.args[0], at, found, "one_arg:"):
        found.append("one_arg:")
    for token in found:
        if token.startswith(UNLESS):
            names, _, token = token.partition("|")
            for prefix in prefixes:
                add(names + "|" + prefix + token + name)
        else:
            for prefix in prefixes:
                add(prefix + token + name)


def first_argument(call: ast.Call) -> Optional[ast.AST]:
    """The argument TCL101/TCL107 read, the call's first in the source's order (LibCST's ``Call.args[0]``), or None:
    a positional one, a keyword, a ``*args`` or a ``**kwargs`` (``f(x=1, *a)``: a keyword may come first)."""
    first: Optional[ast.AST] = call.args[0] if call.args else None
    if call.keywords and (first is None or first.__class__ is ast.Starred):
        keyword = call.keywords[0]
        if first is None or (keyword.lineno, keyword.col_offset) < (first.lineno, first.col_offset):  # type: ignore
            return keyword
    return first


#: A token that holds unless the file binds one of the names it lists (``unless:bfloat,ix|data:tensor``: unless
#: ``float`` is bound or ``x`` imported anywhere in the file; ``dTABLE``: unless ``TABLE`` is bound otherwise than by
#: top-level displays, or nowhere); structure.resolved reads it.
UNLESS = "unless:"


def _may(check, expr: ast.AST, at: At, found: List[str], token: str) -> bool:
    """``check(expr, at, assumed)``; a no that rests on names the file must not bind adds ``token`` under
    ``UNLESS``."""
    if at is None:
        return check(expr, None)
    assumed: Set[str] = set()
    if check(expr, at, assumed):
        return True
    if assumed:
        found.append(UNLESS + ",".join(sorted(assumed)) + "|" + token)
    return False


def outside_lines(node: ast.AST, lines: List[int]) -> bool:
    """Whether ``node`` (one with positions) spans none of the sorted line numbers ``lines``: a walk for the
    calls that start on them need not enter it."""
    first = getattr(node, "lineno", None)
    if first is None:
        return False
    at = bisect_left(lines, first)
    return at == len(lines) or lines[at] > node.end_lineno  # type: ignore[attr-defined]


_GUARDED = (ast.IfExp, ast.If)
#: The "function" of a class body or a lambda's body (``placed_calls``): no def's scope, and no loop of one.
OPAQUE = ast.Pass()


def placed_calls(statement: ast.stmt, names: Optional[FrozenSet[str]], lines: Optional[List[int]],
                 as_method: bool = False, proven: Optional[Proven] = None
                 ) -> Iterator[Tuple[ast.Call, Optional[ast.AST], bool, Optional[ast.stmt], bool]]:
    """Each call of ``names`` (its last name; None: every call) in ``statement``, a top-level one, with where it
    is read: ``(call, function, is_method, holder, looping)``. ``function``: the innermost def whose body holds
    it (its decorators, defaults and annotations are read in the enclosing one), None at module level, OPAQUE in
    a class body or a lambda's body; ``is_method``: that def is written directly in a class body (``as_method``:
    ``statement`` may be one); ``holder``: the def's statement that holds the call; ``looping``: a loop of that
    def (or of the module) holds it. ``lines``: the sorted first lines of those calls, the only parts walked
    (None: all of it). ``proven``: filled with the calls a guard around them proves (guard_arms.py)."""
    methods: Set[int] = {id(statement)} if as_method else set()
    stack: list = [(statement, None, None, False)]
    while stack:
        node, function, holder, looping = stack.pop()
        if lines is not None and outside_lines(node, lines):
            continue  # no such call in it
        cls = node.__class__
        if cls is ast.Call and (names is None or last_name(node.func) in names):  # type: ignore[attr-defined]
            yield node, function, id(function) in methods, holder, looping  # type: ignore[misc]
        if cls in FUNCTIONS:
            outside = [*node.decorator_list, node.args] + ([node.returns] if node.returns else [])  # type: ignore[attr-defined]
            stack.extend((child, function, holder, looping) for child in outside)
            stack.extend((child, node, child, False) for child in node.body)  # type: ignore[attr-defined]
        elif cls is ast.ClassDef:
            body = {id(child) for child in node.body}  # type: ignore[attr-defined]
            stack.extend((child, function, holder, looping) for child in children(node)
                         if id(child) not in body)
            for child in node.body:  # type: ignore[attr-defined]
                if child.__class__ in FUNCTIONS:
                    methods.add(id(child))
                stack.append((child, OPAQUE, None, False))
        elif cls is ast.Lambda:
            stack.append((node.args, function, holder, looping))  # type: ignore[attr-defined]
            stack.append((node.body, OPAQUE, None, False))  # type: ignore[attr-defined]
        else:
            if proven is not None and cls in _GUARDED:
                guard_arms(node, proven)
            inner = looping or cls in LOOPS
            stack.extend((child, function, child if function is not None and isinstance(child, ast.stmt) else holder,
                          inner) for child in children(node))


def scoped_argument_tokens(statement: ast.stmt, add, lines: List[int], as_method: bool = False) -> None:
    """``argument_tokens`` of the calls of REFINED_CALLS in ``statement`` (a top-level def or class; ``lines``:
    the sorted first lines of those calls, the only parts walked), each with where it is read (``placed_calls``):
    in a def's body, its scope; at module level, in a class body or a lambda's body, none (any name may be a
    tensor there). ``as_method``: ``statement`` is a def that may be a method (its first parameter may be
    ``self``)."""
    scopes: Dict[int, ArgumentScope] = {}
    proven: Proven = {}
    for call, function, is_method, holder, looping in placed_calls(statement, REFINED_CALLS, lines, as_method, proven):
        argument_tokens(call, add, None if function is None or function is OPAQUE else Site(
            scopes, (function, is_method), (holder.lineno, holder.col_offset), looping),  # type: ignore[union-attr]
            proven.get(id(call)))
