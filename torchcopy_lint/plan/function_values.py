"""A function's bindings, read from CPython's ``ast``: which expressions the semantic model never calls a tensor.

TCL101, TCL107 and TCL108 fire on ``torch.tensor(x)``, ``torch.tensor([a, b])`` and ``copy.copy(x)`` only when the
semantic model (semantic/evaluate.py) calls the argument a tensor (or a list of known tensors). This module
answers for arguments.py, a superset of the model's answer ("may be" unless proven not):

- an expression the evaluator never calls a tensor whatever the names in it are: a constant, an f-string, a
  display or comprehension (a list of tensors is not a tensor), ``and``/``or``, ``not x``; the operators and
  the elementwise comparisons (``t > 0``: a bool tensor) over such operands, any other comparison; a call of a
  builtin or of a method whose name says what it returns (``len(xs)``,
  ``x.item()``: codes.NUMBER_BUILTINS ...), given that the file binds and imports no such name (the answer then
  lists the names: arguments.UNLESS); an attribute of codes.NOT_TENSOR_ATTRIBUTES, or of a name whose attributes
  the function never stores and whose bindings have none the model knows (``node.meta``), or that only loops bind
  over items that are tensors or unknown (``for node in g.nodes``), the attribute none a tensor has; given that the
  file stores no instance of its own classes in such an attribute (an ``f`` condition: semantic/field_types.py);
- a name read in a function whose only binding there is one of its own parameters, read before any rebinding,
  neither annotated with a class that could be a tensor's (``x: int``, ``inst: Instruction``: annotations.py) nor
  narrowed to a tensor by a guard (``isinstance`` with a class the model may read as a tensor's, ``is_tensor``,
  ``type(x) is ...``: semantic/guards.py; where its attributes are read, by any guard, a module's has parameters):
  an unannotated parameter is UNKNOWN to the model (semantic/classes.py ``parameter``) unless ``@pytest.mark.parametrize``
  lists its values (a ``p`` condition, for a decorated def or a method). A method's first parameter (``self``) may be
  a tensor;
- a name every binding of which in the function (its own statements, not nested scopes') is such a parameter or
  such a value: whichever bindings reach a read, their join is never a tensor (``n = n + 1`` adds nothing);
- a name the function neither binds nor guards (the module's, read with no fact: semantic/model.py
  ``free_bindings``), which only top-level displays bind in the file (``TABLE = {...}``): a ``d`` condition of
  arguments.UNLESS, structure.resolved decides;
- for TCL107, a name the function never binds to a display of what may be tensors or to a call's result
  (TCL107 reports a name only where every binding reaching it is one of those, semantic/evaluate.py ``_filled``).

``ArgumentScope`` is built once per function that holds such a call (``Site.scope``).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from .ast_children import children
from .annotations import SAFE_ANNOTATIONS, SURE, annotation_conditions, chain_root, held, last_name  # noqa: F401
from .binding_names import BINDERS, bindings
from .tensor_guards import tensor_guard
from .. import knowledge
from ..codes import NOT_TENSOR_ATTRIBUTES, NOT_TENSOR_BUILTINS, NOT_TENSOR_METHODS, NUMBER_BUILTINS, NUMBER_METHODS

#: Expressions the evaluator gives a value that is never a tensor (a number, a string, a list, a mapping, ...)
#: or UNKNOWN, whatever their operands are.
_NEVER_TENSOR = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.BoolOp)
#: The comparisons the evaluator calls a (bool) tensor where a side is one (``t > 0``); ``is``, ``in``, a chain: never.
_ELEMENTWISE = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FOR = (ast.For, ast.AsyncFor)
#: Iterables whose items the model reads from their elements (``for m in [A(), B()]``: an instance of a class).
_ITEMS_READ = (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.GeneratorExp)
_LOOP_TARGETS = (ast.Name, ast.Tuple, ast.List, ast.Starred, ast.Store)
#: Attributes the model may call a tensor on a tensor or a module (semantic/evaluate.py ``attribute``), besides those of
#: knowledge's ``tensor_attributes``.
_TENSOR_ATTRIBUTES = frozenset("grad data weight bias running_mean running_var module".split())
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_MAX_NAMES = 64  # names followed through each other's bindings for one read, at most
#: The last names of the calls semantic/guards.py narrows a name on (``isinstance(x, torch.Tensor)``,
#: ``torch.is_tensor(x)``, ``type(x) is torch.Tensor``). Imported under another name, they turn this off (plan).
GUARD_CALLS = frozenset({"isinstance", "is_tensor", "type"})
At = Optional["Site"]
#: In ``ArgumentScope.never_bound``'s names visited: the value's attributes are read (no name: ``.``).
STRICT = "."
#: The condition of an unannotated parameter that parametrize may fill (unless_conditions.py ``p``).
PARAMETRIZED = frozenset({"pparametrize"})
Position = Tuple[int, int]  # a statement's first line and column


class ArgumentScope:
    """One function's bindings, as far as the model can know their values at a read: which parameters are read as
    nothing but the parameter (not bound again before the read, never narrowed by a guard), and which names the
    function binds only to values that are never tensors (or never lists of them)."""

    def __init__(self, function: Union[ast.FunctionDef, ast.AsyncFunctionDef], is_method: bool) -> None:
        args = function.args
        positional = args.posonlyargs + args.args
        # parameter -> the conditions under which the model never reads its annotation as a tensor's (None: it may)
        # nor as a class's, whose attributes it may know (``_annotated_class``: nor as a tensor's alone)
        self._annotated_safe: Dict[str, Optional[FrozenSet[str]]] = {}
        self._annotated_class: Dict[str, Optional[FrozenSet[str]]] = {}
        self._params: Set[str] = {arg.arg for arg in positional + args.kwonlyargs}
        self._params.update(arg.arg for arg in (args.vararg, args.kwarg) if arg is not None)
        # an unannotated parameter of a decorated def or a method may be what `@pytest.mark.parametrize` (the def's or
        # its class's) lists: tensors, where the file names `parametrize` (semantic/parametrize.py)
        bare = PARAMETRIZED if is_method or function.decorator_list else SURE
        for index, arg in enumerate(positional + args.kwonlyargs):
            if is_method and index == 0 and index < len(positional):
                continue  # `self`: an instance of its class, which may be a tensor subclass
            annotation = arg.annotation
            self._annotated_safe[arg.arg] = bare if annotation is None else annotation_conditions(annotation, False)
            self._annotated_class[arg.arg] = bare if annotation is None else annotation_conditions(annotation, True)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:  # *args / **kwargs: never tensors
                self._annotated_safe[arg.arg] = self._annotated_class[arg.arg] = bare if arg.annotation is None else SURE
        # name -> the statements that store it (a walrus's: None, it may run before a read in the same statement)
        self._stored: Dict[str, List[Optional[Position]]] = {}
        self._bound_otherwise: Set[str] = set()  # global/nonlocal, imports, defs, handlers, patterns, nested params
        self._guarded: Set[str] = set()  # the names a guard narrows, to anything (a module's attributes: PARAMETER)
        # name -> the conditions under which no guard in the function narrows it to a tensor (None: one may), read
        # where the name itself is the argument: a guard's MODULE or NOT_TENSOR is never a tensor
        self._tensor_guards: Dict[str, Optional[FrozenSet[str]]] = {}
        # name -> the values this function's own statements bind it to (None: one the model may call anything: an
        # unpacking, a loop's target, `with ... as`, a comprehension's variable, `del`, an annotation alone)
        self._values: Dict[str, List[Optional[ast.AST]]] = {}
        self._lists: Dict[str, List[ast.AST]] = {}  # name -> the displays and calls assigned to it (TCL107's lists)
        self._attributes_stored: Set[str] = set()  # names an attribute or item of which is stored (`h.a = v`)
        self._iterated: Dict[str, List[ast.AST]] = {}  # name -> the iterables of the loops `for name in X` binding it
        simple: Dict[int, Tuple[ast.AST, bool]] = {}  # a plain Name target -> (its value, assigned as is)
        stack: list = [(statement, statement, False, False) for statement in function.body]
        while stack:
            node, statement, comprehended, nested = stack.pop()
            cls = node.__class__
            if cls is ast.Name and node.ctx.__class__ is not ast.Load:  # a comprehension's own variable: None
                self._stored.setdefault(node.id, []).append(None if comprehended
                                                           else (statement.lineno, statement.col_offset))
                if not nested:
                    value, assigned = simple.get(id(node), (None, False))
                    self._values.setdefault(node.id, []).append(value)
                    if assigned and value.__class__ in (ast.List, ast.Call):
                        self._lists.setdefault(node.id, []).append(value)
            elif cls is ast.NamedExpr and node.target.__class__ is ast.Name:
                self._stored.setdefault(node.target.id, []).append(None)
                simple[id(node.target)] = (node.value, True)
                if nested:  # it binds in the scope around the comprehension: maybe this function's
                    self._bound_otherwise.add(node.target.id)
            elif cls is ast.Assign:
                simple.update((id(target), (node.value, True)) for target in node.targets if target.__class__ is ast.Name)
            elif cls is ast.AnnAssign and node.value is not None:
                simple[id(node.target)] = (node.value, True)
            elif cls is ast.AugAssign:
                simple[id(node.target)] = (node.value, False)
            elif cls in (ast.Attribute, ast.Subscript) and node.ctx.__class__ is not ast.Load:
                head = _head(node)
                if head is not None:
                    self._attributes_stored.add(head)
            elif cls in _FOR and not nested:
                targets = list(ast.walk(node.target))
                if all(target.__class__ in _LOOP_TARGETS for target in targets):  # no `for h.a in X`, `for h[i] in X`
                    for target in targets:
                        if target.__class__ is ast.Name:
                            self._iterated.setdefault(target.id, []).append(node.iter)
            elif cls in BINDERS:  # global/nonlocal, defs, imports, handlers, a nested function's or lambda's
                bindings(node, self._bound_otherwise)  # parameters, `case Point(x=x)`, `case {**rest}`
            elif cls is ast.Call and last_name(node.func) in GUARD_CALLS:  # (whatever the class: a module's
                for arg in node.args:  # narrows `x` to a module, and `x.weight` is then a parameter)
                    self._guarded.update(n.id for n in ast.walk(arg) if n.__class__ is ast.Name)
                tensor_guard(node, False, self._tensor_guards)
            elif cls is ast.Compare and node.left.__class__ is ast.Call and last_name(node.left.func) == "type":
                tensor_guard(node.left, True, self._tensor_guards)  # `type(x) is torch.Tensor`
            comprehended = comprehended or cls in _COMPREHENSIONS
            nested = nested or cls in _SCOPES
            stack.extend((child, child if isinstance(child, ast.stmt) else statement, comprehended, nested)
                         for child in children(node))

    def guard_held(self, name: str, assumed: Optional[Set[str]]) -> bool:
        """No guard narrows ``name`` to a tensor, given the conditions it adds to ``assumed``."""
        return held(self._tensor_guards.get(name, SURE), assumed)

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

    def never_assigned(self, name: str) -> bool:
        """This function binds ``name`` (a parameter, or a statement of its own: not only a comprehension's variable,
        whose scope is the comprehension's) and never to a value as is: only as a loop's target, an unpacking's
        part, ``with ... as``, an annotation alone or ``del`` (no ``=``, ``:=`` or augmented assignment); not
        declared ``global``/``nonlocal``, imported, caught or bound by a nested scope. TCL120 (index_shapes.py)."""
        if name in self._bound_otherwise:
            return False
        values = self._values.get(name, ())
        if any(value is not None for value in values):
            return False
        return name in self._params or any(at is not None for at in self._stored.get(name, ()))

    def never_tensor(self, name: str, at: "Optional[Site]" = None, assumed: Optional[Set[str]] = None) -> bool:
        """The model cannot call ``name`` a tensor at ``at``: a parameter with no annotation (or one that is
        never a tensor's: ``annotation_conditions``), not bound again before the read and never narrowed; or a name
        every binding of which in this function is such a parameter or a value that is never a tensor
        (``never_bound``)."""
        if self.only_parameter(name, at) and self.guard_held(name, assumed) \
                and held(self._annotated_class[name], assumed):
            return True
        if at is not None and assumed is not None and not self.binds(name) and self.guard_held(name, assumed):
            assumed.add("d" + name)  # the module's: never a tensor if only top-level displays bind it (structure.py)
            return True
        return at is not None and self.never_bound(name, at, assumed, set())

    def only_iterated(self, name: str) -> bool:
        """Every binding of ``name`` in this function is a loop's (``for name in X``, ``for i, name in enumerate(X)``)
        over items the model calls a tensor or nothing it knows, never an instance of a class (``_items_unread``),
        and no guard narrows it."""
        iterables = self._iterated.get(name)
        return bool(iterables) and len(iterables) == len(self._values.get(name, ())) and name not in self._params \
            and name not in self._bound_otherwise and name not in self._guarded and all(map(_items_unread, iterables))

    def never_bound(self, name: str, at: "Site", assumed: Optional[Set[str]], visiting: Set[str]) -> bool:
        """Every binding of ``name`` this function makes is a value the model never calls a tensor (whichever
        of them reaches a read, the read's value is their join: never a tensor), and no guard narrows it. A name
        this function does not bind is the enclosing scopes' (anything). ``visiting``: the names whose bindings
        are being read (a name bound from itself, ``n = n + 1``, adds nothing); with ``STRICT`` among them, the value's
        attributes are read too (a guard's module has parameters): any guard keeps it."""
        if name in visiting:
            return True
        if len(visiting) > _MAX_NAMES or name in self._bound_otherwise \
                or (name in self._guarded if STRICT in visiting else not self.guard_held(name, assumed)):
            return False
        if name in self._params:
            if not held(self._annotated_safe.get(name), assumed):
                return False  # `self`, or annotated with a class that may be a tensor's
        elif name not in self._values:
            return False
        values = self._values.get(name, ())
        if None in values:
            return False
        visiting.add(name)
        return not any(may_be_tensor(value, at, assumed, visiting) for value in values)  # type: ignore[arg-type]

    def never_list(self, name: str, at: "Site", assumed: Optional[Set[str]]) -> bool:
        """TCL107 cannot call ``name`` a list of tensors: it does so only where every binding reaching the read is
        an assignment of a display or a call's result that the model calls a list of tensors, and this function
        binds ``name`` with none such: no display but one with an element that is never a tensor, no call but
        one ``never_call`` answers (a number, a string, a mapping: never a list, ``list``/``tuple`` aside)."""
        if name in self._bound_otherwise or name not in self._params and name not in self._values:
            return False
        for value in self._lists.get(name, ()):
            if value.__class__ is ast.List:
                if all(may_be_tensor(element, at, assumed, set()) for element in value.elts):  # type: ignore[attr-defined]
                    return False  # (`[]`, filled by appends, and displays of tensors)
            elif assumed is None or value.func.__class__ is ast.Name and value.func.id in ("list", "tuple") \
                    or not never_call(value, self, assumed):  # type: ignore[attr-defined]
                return False
        return True

    def binds(self, name: str) -> bool:
        """Whether this function (or a scope in it) binds ``name``."""
        return name in self._values or name in self._params or name in self._bound_otherwise


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


def may_be_tensor(expr: ast.AST, at: At, assumed: Optional[Set[str]] = None,
                  visiting: Optional[Set[str]] = None) -> bool:
    """Whether the model may call ``expr`` a tensor (``at``: where it is read, None: unknown). ``assumed``: where
    given, an answer of no may rest on names the rest of the file must not bind (``never_call``), added to it;
    ``visiting``: ``expr`` is a binding's value that ``ArgumentScope.never_bound`` reads (not a read at ``at``)."""
    cls = expr.__class__
    if cls in _NEVER_TENSOR:
        return False
    if cls is ast.Name:
        if at is None:
            return True
        if visiting is None:
            return not at.scope.never_tensor(expr.id, at, assumed)  # type: ignore[attr-defined]
        return not at.scope.never_bound(expr.id, at, assumed, visiting)  # type: ignore[attr-defined]
    if cls is ast.Call:
        return at is None or assumed is None or not never_call(expr, at.scope, assumed)  # type: ignore[arg-type]
    if cls is ast.Attribute:
        return at is None or assumed is None or not _never_attribute(expr, at, assumed, visiting)  # type: ignore[arg-type]
    if cls is ast.UnaryOp:
        return expr.op.__class__ is not ast.Not and may_be_tensor(expr.operand, at, assumed, visiting)  # type: ignore[attr-defined]
    if cls is ast.BinOp:
        return may_be_tensor(expr.left, at, assumed, visiting) \
            or may_be_tensor(expr.right, at, assumed, visiting)  # type: ignore[attr-defined]
    if cls is ast.IfExp:
        return any(may_be_tensor(branch, at, assumed, visiting)
                   for branch in (expr.body, expr.orelse)  # type: ignore[attr-defined]
                   if not (branch.__class__ is ast.Constant and branch.value is None))  # type: ignore[attr-defined]
    if cls is ast.NamedExpr:
        return may_be_tensor(expr.value, at, assumed, visiting)  # type: ignore[attr-defined]
    if cls is ast.Compare:
        return len(expr.ops) == 1 and expr.ops[0].__class__ in _ELEMENTWISE and (  # type: ignore[attr-defined]
            may_be_tensor(expr.left, at, assumed, visiting)  # type: ignore[attr-defined]
            or may_be_tensor(expr.comparators[0], at, assumed, visiting))  # type: ignore[attr-defined]
    return True


def _head(expr: ast.AST) -> Optional[str]:
    """``h`` of ``h.a.b``, ``h[i].a``; None where the chain starts with no name."""
    while expr.__class__ in (ast.Attribute, ast.Subscript):
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if expr.__class__ is ast.Name else None  # type: ignore[attr-defined]


def _never_attribute(expr: ast.Attribute, at: "Site", assumed: Set[str], visiting: Optional[Set[str]]) -> bool:
    """Whether the model never calls ``h.a.b`` a tensor (semantic/evaluate.py ``attribute``): an attribute of
    codes.NOT_TENSOR_ATTRIBUTES (whatever its receiver); or, given that ``h`` is no import (``i`` + ``h``) and that
    the file stores no instance of its own classes in ``.a`` or ``.b`` (``f`` + ``a``: semantic/field_types.py), a
    chain of attributes of a name ``h`` (not ``self``: its class's attributes) whose attributes and items this
    function never stores (no binding of the chain to read), and every binding of which is never a tensor (those
    values: numbers, strings, displays, mappings, lists, unknown parameters, have no attribute the model knows) or a
    loop's over items that are tensors or unknown (``only_iterated``), none of the chain's attributes one the model
    may call a tensor on those. (A guard on ``h.a`` names ``h``: ``never_bound`` is then no.)"""
    if expr.attr in NOT_TENSOR_ATTRIBUTES:
        return True
    base = chain_root(expr)
    if base.__class__ is not ast.Name or base.id == "self" or base.id in at.scope._attributes_stored:  # type: ignore[attr-defined]
        return False
    names = []
    while expr.__class__ is ast.Attribute:
        names.append(expr.attr)
        expr = expr.value  # type: ignore[assignment]
    scope = at.scope
    visiting = set() if visiting is None else visiting
    visiting.add(STRICT)
    if not scope.never_bound(base.id, at, assumed, visiting) and not (
            scope.only_iterated(base.id) and not any(map(_tensor_attribute, names))):
        return False
    assumed.add("i" + base.id)  # type: ignore[attr-defined]
    assumed.update("f" + name for name in names)
    return True


def _items_unread(iterable: ast.AST) -> bool:
    """Whether the model reads no class instance from the items of ``iterable`` (semantic/evaluate.py ``iterated``,
    ``element``, ``tuple_items``): not a display's or a comprehension's elements, nor a mapping's ``.values()`` or
    ``.items()``, nor those of an iterable ``enumerate``/``zip`` pairs them from; the rest are tensors or unknown."""
    cls = iterable.__class__
    if cls is ast.Starred:
        return _items_unread(iterable.value)  # type: ignore[attr-defined]
    if cls in _ITEMS_READ:
        return False
    if cls is ast.Call:
        name = last_name(iterable.func)  # type: ignore[attr-defined]
        if name in ("values", "items"):
            return False
        if name in ("enumerate", "zip"):
            return all(map(_items_unread, iterable.args))  # type: ignore[attr-defined]
    return True


def _tensor_attribute(name: str) -> bool:
    """Whether the model may call attribute ``name`` of a tensor (or of a module) a tensor."""
    return name in _TENSOR_ATTRIBUTES or knowledge.lookup("tensor_attributes", name) is not None


def never_call(call: ast.Call, scope: "ArgumentScope", assumed: Set[str]) -> bool:
    """Whether the model never calls ``call``'s result a tensor, given the names it adds to ``assumed``: a builtin
    of codes.NUMBER_BUILTINS/NOT_TENSOR_BUILTINS (``b`` + its name: the file binds and imports it nowhere, so
    semantic/calls.py ``named`` reaches the builtins), or a method of codes.NUMBER_METHODS/NOT_TENSOR_METHODS
    (``i`` + the name its receiver starts with, if a name: no import of the file makes the call a qualified one's)."""
    func = call.func
    if func.__class__ is ast.Name:
        name = func.id  # type: ignore[attr-defined]
        if (name in NUMBER_BUILTINS or name in NOT_TENSOR_BUILTINS) and not scope.binds(name):
            assumed.add("b" + name)
            return True
        return False
    if func.__class__ is ast.Attribute and (func.attr in NUMBER_METHODS or func.attr in NOT_TENSOR_METHODS):  # type: ignore[attr-defined]
        head = chain_root(func)
        if head.__class__ is ast.Name:
            assumed.add("i" + head.id)  # type: ignore[attr-defined]
        return True
    return False


def may_be_tensor_list(expr: ast.AST, at: At, assumed: Optional[Set[str]] = None) -> bool:
    """Whether TCL107 may call ``expr`` a list of tensors: a display of elements that may each be a tensor, a
    name (a local list filled with tensors: not a parameter), or ``list(...)``/``tuple(...)``."""
    cls = expr.__class__
    if cls in (ast.List, ast.Tuple):
        elements = expr.elts  # type: ignore[attr-defined]
        return bool(elements) and all(e.__class__ is not ast.Starred and may_be_tensor(e, at, assumed)
                                      for e in elements)
    if cls is ast.Name:
        return at is None or not (at.scope.only_parameter(expr.id, at)  # type: ignore[attr-defined]
                                  or at.scope.never_list(expr.id, at, assumed))  # type: ignore[attr-defined]
    if cls is ast.Call:
        return expr.func.__class__ is ast.Name and expr.func.id in ("list", "tuple")  # type: ignore[attr-defined]
    return False
