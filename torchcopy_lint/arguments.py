"""Whether a call's argument may be what TCL101, TCL107 and TCL108 need, read from CPython's ``ast`` (shapes.py).

Those rules fire on ``torch.tensor(x)``, ``torch.tensor([a, b])`` and ``copy.copy(x)`` only when the semantic
model (semantic/evaluate.py) calls the argument a tensor (or a list of known tensors). Most such calls in real
code pass a number, a list of numbers or a parameter the model knows nothing about, and keeping their functions
for LibCST is most of what those rules cost. This module answers, a superset of the model's answer:

- an expression that the evaluator never calls a tensor whatever the names in it are: a constant, an f-string, a
  display or comprehension (a list of tensors is not a tensor), a comparison, ``and``/``or``, ``not x``, and the
  operators over such operands;
- a name read in a function whose only binding there is one of its own parameters, neither annotated with a
  class that could be a tensor's (``x: int``, ``xs: List[float]``) nor tested with ``isinstance``/``is_tensor``/
  ``type`` (the guards the model narrows on): an unannotated parameter is UNKNOWN to the model
  (semantic/classes.py ``parameter``), so no rule reports it. A method's first parameter (``self``) may be a tensor.

``ArgumentScope`` is built once per function that holds such a call; every answer is "may be" unless proven not.
Not followed (structure.plan then turns this off for the file): a guard imported under another name
(``from torch import is_tensor as it``), an annotation's name imported as, or defined as a class named as, one of
``SAFE_ANNOTATIONS``.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, Union

#: Expressions the evaluator gives a value that is never a tensor (a number, a string, a list, a mapping, ...)
#: or UNKNOWN, whatever their operands are.
_NEVER_TENSOR = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.Compare, ast.BoolOp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The last names of the calls semantic/guards.py narrows a name on (``isinstance(x, torch.Tensor)``,
#: ``torch.is_tensor(x)``, ``type(x) is torch.Tensor``). Imported under another name, they turn this off (plan).
GUARD_CALLS = frozenset({"isinstance", "is_tensor", "type"})
#: Outer names of annotations that semantic/classes.py ``annotation`` never reads as a tensor class (the subscript
#: is ignored there: ``Optional[Tensor]`` is UNKNOWN). Imported under another name, they turn this off (plan).
SAFE_ANNOTATIONS = frozenset("""int float complex bool str bytes list List tuple Tuple dict Dict set Set frozenset
    FrozenSet Optional Union Sequence MutableSequence Iterable Iterator Mapping MutableMapping Any Callable Type type
    object Literal Collection Generator""".split())

At = Optional["Site"]
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


Position = Tuple[int, int]  # a statement's first line and column


class ArgumentScope:
    """One function's parameters, as far as the model can know their values at a read: which are read as
    nothing but the parameter (not bound again before the read, never narrowed by a guard)."""

    def __init__(self, function: Union[ast.FunctionDef, ast.AsyncFunctionDef], is_method: bool) -> None:
        args = function.args
        positional = args.posonlyargs + args.args
        self._annotated_safe: Dict[str, bool] = {}
        for index, arg in enumerate(positional + args.kwonlyargs):
            if is_method and index == 0 and index < len(positional):
                continue  # `self`: an instance of its class, which may be a tensor subclass
            self._annotated_safe[arg.arg] = arg.annotation is None or _safe_annotation(arg.annotation)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self._annotated_safe[arg.arg] = True  # *args / **kwargs: never a tensor
        # name -> the statements that store it (a walrus's: None, it may run before a read in the same statement)
        self._stored: Dict[str, List[Optional[Position]]] = {}
        self._bound_otherwise: Set[str] = set()  # global/nonlocal, imports, defs, handlers, patterns, nested params
        self._guarded: Set[str] = set()
        stack: list = [(statement, statement, False) for statement in function.body]
        while stack:
            node, statement, comprehended = stack.pop()
            cls = node.__class__
            if cls is ast.Name and node.ctx.__class__ is not ast.Load:  # a comprehension's own variable: None
                self._stored.setdefault(node.id, []).append(None if comprehended
                                                           else (statement.lineno, statement.col_offset))
            elif cls is ast.NamedExpr and node.target.__class__ is ast.Name:
                self._stored.setdefault(node.target.id, []).append(None)
            elif cls in (ast.Global, ast.Nonlocal):
                self._bound_otherwise.update(node.names)
            elif cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                self._bound_otherwise.add(node.name)
            elif cls in (ast.Import, ast.ImportFrom):
                self._bound_otherwise.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif cls is ast.ExceptHandler and node.name:
                self._bound_otherwise.add(node.name)
            elif cls is ast.arg:
                self._bound_otherwise.add(node.arg)  # a nested function's or lambda's
            elif cls is ast.Call and last_name(node.func) in GUARD_CALLS:
                for arg in node.args:
                    self._guarded.update(n.id for n in ast.walk(arg) if n.__class__ is ast.Name)
            elif cls.__name__.startswith("Match"):  # `case Point(x=x)`, `case {**rest}`, `case [*xs]`
                for field in ("name", "rest"):
                    found = getattr(node, field, None)
                    if isinstance(found, str):
                        self._bound_otherwise.add(found)
            comprehended = comprehended or cls in _COMPREHENSIONS
            stack.extend((child, child if isinstance(child, ast.stmt) else statement, comprehended)
                         for child in ast.iter_child_nodes(node))

    def only_parameter(self, name: str, at: "Optional[Site]" = None) -> bool:
        """Every binding of ``name`` that can reach a read at ``at`` (None: anywhere in the function) is the
        parameter: the name is stored only by later statements, or by the read's own statement as its
        target, and the read is in no loop."""
        if name not in self._annotated_safe or name in self._bound_otherwise:
            return False
        stored = self._stored.get(name)
        if not stored:
            return True
        return at is not None and not at.looping and all(p is not None and p >= at.statement for p in stored)

    def never_tensor(self, name: str, at: "Optional[Site]" = None) -> bool:
        """The model cannot call ``name`` a tensor at ``at``: a parameter with no annotation (or one that is
        never a tensor's), not bound again before the read and never narrowed."""
        return self.only_parameter(name, at) and self._annotated_safe[name] and name not in self._guarded


class Site:
    """Where an argument is read: the function (its scope made when first needed), the statement the call is
    in, whether a loop of the function holds it (a later statement may run before it then)."""

    __slots__ = ("_made", "_key", "statement", "looping")

    def __init__(self, made: Dict[int, "ArgumentScope"], key: Tuple[ast.AST, bool], statement: Position,
                 looping: bool) -> None:
        self._made, self._key, self.statement, self.looping = made, key, statement, looping

    @property
    def scope(self) -> ArgumentScope:
        function, is_method = self._key
        found = self._made.get(id(function))
        if found is None:
            found = self._made[id(function)] = ArgumentScope(function, is_method)  # type: ignore[arg-type]
        return found


def may_be_tensor(expr: ast.AST, at: At) -> bool:
    """Whether the model may call ``expr`` a tensor (``at``: where it is read, None: unknown)."""
    cls = expr.__class__
    if cls in _NEVER_TENSOR:
        return False
    if cls is ast.Name:
        return at is None or not at.scope.never_tensor(expr.id, at)  # type: ignore[attr-defined]
    if cls is ast.UnaryOp:
        return expr.op.__class__ is not ast.Not and may_be_tensor(expr.operand, at)  # type: ignore[attr-defined]
    if cls is ast.BinOp:
        return may_be_tensor(expr.left, at) or may_be_tensor(expr.right, at)  # type: ignore[attr-defined]
    if cls is ast.IfExp:
        return any(may_be_tensor(branch, at) for branch in (expr.body, expr.orelse)  # type: ignore[attr-defined]
                   if not (branch.__class__ is ast.Constant and branch.value is None))  # type: ignore[attr-defined]
    if cls is ast.NamedExpr:
        return may_be_tensor(expr.value, at)  # type: ignore[attr-defined]
    return True


def may_be_tensor_list(expr: ast.AST, at: At) -> bool:
    """Whether TCL107 may call ``expr`` a list of tensors: a display of elements that may each be a tensor, a
    name (a local list filled with tensors: not a parameter), or ``list(...)``/``tuple(...)``."""
    cls = expr.__class__
    if cls in (ast.List, ast.Tuple):
        elements = expr.elts  # type: ignore[attr-defined]
        return bool(elements) and all(e.__class__ is not ast.Starred and may_be_tensor(e, at) for e in elements)
    if cls is ast.Name:
        return at is None or not at.scope.only_parameter(expr.id, at)  # type: ignore[attr-defined]
    if cls is ast.Call:
        return expr.func.__class__ is ast.Name and expr.func.id in ("list", "tuple")  # type: ignore[attr-defined]
    return False


def _safe_annotation(annotation: ast.AST) -> bool:
    if annotation.__class__ is ast.Subscript:
        annotation = annotation.value  # type: ignore[attr-defined]
    if annotation.__class__ is ast.BinOp:
        return True  # `X | Y`: UNKNOWN to the model
    return last_name(annotation) in SAFE_ANNOTATIONS


def last_name(expr: ast.AST) -> Optional[str]:
    """``f`` of ``f`` and of ``x.f``; None for anything else."""
    if expr.__class__ is ast.Name:
        return expr.id  # type: ignore[attr-defined]
    if expr.__class__ is ast.Attribute:
        return expr.attr  # type: ignore[attr-defined]
    return None


def argument_tokens(call: ast.Call, add, at: At) -> None:
    """TCL101/TCL107/TCL108's shape tokens of ``call``: ``data:NAME`` when its data argument (the first positional
    one, or ``data=``) may be a tensor, ``tensors:NAME`` when it may be a list of tensors, ``one_arg:NAME`` for a
    single positional argument that may be a tensor (``copy.copy(t)``: a call on a plain name); a plain name's call
    also gives the ``name_`` twins, which structure.resolved maps through import aliases. A ``*args``/``**kwargs``
    may be anything."""
    func = call.func
    if func.__class__ is ast.Attribute:
        name, prefixes, on_name = func.attr, ("",), func.value.__class__ is ast.Name  # type: ignore[attr-defined]
    elif func.__class__ is ast.Name:
        name, prefixes, on_name = func.id, ("", "name_"), True  # type: ignore[attr-defined]
    else:
        return
    found = []
    data = None
    unsure = bool(call.args) and call.args[0].__class__ is ast.Starred
    if call.args and not unsure:
        data = call.args[0]
    for keyword in call.keywords:
        if keyword.arg is None:
            unsure = True
        elif keyword.arg == "data" and data is None:
            data = keyword.value
    if unsure or data is not None and may_be_tensor(data, at):
        found.append("data:")
    if unsure or data is not None and may_be_tensor_list(data, at):
        found.append("tensors:")
    if on_name and len(call.args) == 1 and not call.keywords and call.args[0].__class__ is not ast.Starred \
            and may_be_tensor(call.args[0], at):
        found.append("one_arg:")
    for prefix in prefixes:
        for token in found:
            add(prefix + token + name)


def outside_lines(node: ast.AST, lines: List[int]) -> bool:
    """Whether ``node`` (one with positions) spans none of the sorted line numbers ``lines``: a walk for the
    calls that start on them need not enter it."""
    first = getattr(node, "lineno", None)
    if first is None:
        return False
    at = bisect_left(lines, first)
    return at == len(lines) or lines[at] > node.end_lineno  # type: ignore[attr-defined]


#: The "function" of a class body or a lambda's body (``placed_calls``): no def's scope, and no loop of one.
OPAQUE = ast.Pass()


def placed_calls(statement: ast.stmt, names: Optional[FrozenSet[str]], lines: Optional[List[int]],
                 as_method: bool = False) -> Iterator[Tuple[ast.Call, Optional[ast.AST], bool, Optional[ast.stmt], bool]]:
    """Each call of ``names`` (its last name; None: every call) in ``statement``, a top-level one, with where it
    is read: ``(call, function, is_method, holder, looping)``. ``function``: the innermost def whose body holds
    it (its decorators, defaults and annotations are read in the enclosing one), None at module level, OPAQUE in
    a class body or a lambda's body; ``is_method``: that def is written directly in a class body (``as_method``:
    ``statement`` may be one); ``holder``: the def's statement that holds the call; ``looping``: a loop of that
    def (or of the module) holds it. ``lines``: the sorted first lines of those calls, the only parts walked
    (None: all of it)."""
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
            stack.extend((child, function, holder, looping) for child in ast.iter_child_nodes(node)
                         if id(child) not in body)
            for child in node.body:  # type: ignore[attr-defined]
                if child.__class__ in FUNCTIONS:
                    methods.add(id(child))
                stack.append((child, OPAQUE, None, False))
        elif cls is ast.Lambda:
            stack.append((node.args, function, holder, looping))  # type: ignore[attr-defined]
            stack.append((node.body, OPAQUE, None, False))  # type: ignore[attr-defined]
        else:
            inner = looping or cls in LOOPS
            stack.extend((child, function, child if function is not None and isinstance(child, ast.stmt) else holder,
                          inner) for child in ast.iter_child_nodes(node))


def scoped_argument_tokens(statement: ast.stmt, add, lines: List[int], as_method: bool = False) -> None:
    """``argument_tokens`` of the calls of REFINED_CALLS in ``statement`` (a top-level def or class; ``lines``:
    the sorted first lines of those calls, the only parts walked), each with where it is read (``placed_calls``):
    in a def's body, its scope; at module level, in a class body or a lambda's body, none (any name may be a
    tensor there). ``as_method``: ``statement`` is a def that may be a method (its first parameter may be
    ``self``)."""
    scopes: Dict[int, ArgumentScope] = {}
    for call, function, is_method, holder, looping in placed_calls(statement, REFINED_CALLS, lines, as_method):
        argument_tokens(call, add, None if function is None or function is OPAQUE else Site(
            scopes, (function, is_method), (holder.lineno, holder.col_offset), looping))  # type: ignore[union-attr]
