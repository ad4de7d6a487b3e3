"""Shape tokens: what one top-level statement holds, read from CPython's ``ast`` (structure.py's input).

``shape_of`` walks a statement once and collects tokens that say which call shapes, attribute names and
statement forms occur in it; structure.NEEDS says which tokens each rule needs. Every token is a
superset of what its rule reports: the rule's own visitor (on LibCST) asks more, never less.

- ``call:NAME`` (a call of ``NAME(...)`` or ``x.NAME(...)``; ``name_call:NAME`` for a plain name, which
  ``structure.resolved`` maps through import aliases), ``data:NAME`` / ``tensors:NAME`` (such a call whose
  data argument may be a tensor / a list of tensors), ``one_arg:NAME`` (its one argument may be a tensor; all
  three from arguments.py, which reads a def's parameters for the calls of TCL101/TCL107/TCL108),
  ``method:NAME`` (``x.NAME(...)``),
  ``detach_of:NAME`` (``NAME(...).detach()``), ``attr:NAME`` (any ``x.NAME``);
- ``conv_of:NAME``: a dtype/device conversion (codes.CONVERSION_METHODS) called on the result of a call of
  ``NAME`` (``torch.zeros(n).to(d)``, ``x.clone().float()``: TCL116, TCL118);
- ``data_write``: ``.data`` stored to, changed in place or passed to a function (TCL104, TCL119);
- ``write``: an in-place write as semantic/storage.py counts one: a method or function ending in ``_``
  (not codes.NOT_WRITES), a subscript assignment, an augmented assignment, ``out=``, a ``step()`` call;
  with ``written:KEY``, the name whose storage it writes (``w`` for ``w.data[0] += 1``, ``w[i].add_(..)``,
  ``zeros_(w)``: views, subscripts and sharing calls looked through, as storage.py does);
- ``stmt_conversion``: a statement that is a conversion call and nothing else (``x.to(d)``: TCL111);
  ``stmt_index_write`` (index_shapes.py): an in-place call on a subscript (``h[idx].zero_()``: TCL120);
- the aliases of TCL112-TCL115, keyed by the names whose storage a write must reach for a hazard (storage.py
  asks for a write *by that name*: ``Write.key == Side.key``), which structure.resolved joins with ``written:``:
  ``listmul:XS`` (``XS = [e] * n``, one element that is not a constant), ``bridge:A`` and ``bridge:T``
  (``A = T.numpy()``, ``T = torch.from_numpy(A)``, ...), ``detach_alias:Y`` (``Y = x.detach()`` / ``x.data``,
  views around it), ``kept:W`` (TCL114's intent: a snapshot-named name assigned ``W``, a store of ``W`` into or
  an ``append`` to a snapshot- or history-named container, any assignment of ``W`` under a "best so far" test);
- ``form:augadd`` (``+=``) and ``form:add`` (a binary ``+``): TCL110.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from .binding_names import BINDERS, LOAD, bindings
from .arguments import REFINED_CALLS, REFINED_TOKENS, argument_tokens, last_name, scoped_argument_tokens
from .training import PLACED_CALLS, training_call_tokens
from .index_shapes import indexed_write
from ..codes import (BEST_NAME, CONVERSION_METHODS, DISCARDABLE_METHODS, HISTORY_NAME, LEGACY_CONSTRUCTORS,
                     SHARING_NAMES, SNAPSHOT_NAME, VIEW_ATTRIBUTES, VIEW_METHODS, is_in_place)

_CONVERSION_SET = frozenset(CONVERSION_METHODS)
_DISCARDABLE_SET = frozenset(DISCARDABLE_METHODS)
_COMPARISONS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_INERT_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# Nodes that make a statement more than data: scopes, walrus bindings, calls (side effects the
# semantic model may read: `xs.append(t)`), generators.
_ACTIVE = frozenset({ast.Call, ast.NamedExpr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                     ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


#: Fields that never hold a statement or an expression (names, operators, contexts, flags).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "asname", "type_comment",
                          "kind", "conversion", "level", "is_async", "simple", "tag", "names"})


def _fields(cls: type) -> Tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(f for f in getattr(cls, "_fields", ()) if f not in _LEAF_FIELDS)
    return found


@dataclass
class Shape:
    """What one top-level statement holds: shape tokens, its Name identifiers, whether it is inert."""

    tokens: Set[str]
    names: Set[str]
    inert: bool
    #: the names it binds in any scope (stores, parameters, definitions, imports, handlers, captures,
    #: global/nonlocal) and the names it imports: what arguments.UNLESS tokens must not find (structure.resolved)
    bound: FrozenSet[str] = frozenset()
    imported: FrozenSet[str] = frozenset()


#: The keyed tokens of an alias (``kept:W`` ...), and the token a write of its storage (``written:W``) joins them
#: into (structure.resolved; scope_groups.py reads them too).
ALIAS_JOINS = {"kept": "kept_written", "listmul": "listmul_written", "detach_alias": "detach_written",
               "bridge": "bridge_written"}


def shape_of(statement: ast.stmt, aliases: Dict[str, str], scoped: bool = True, as_method: bool = False) -> Shape:
    """Walk ``statement`` once (iteratively: no recursion limit); ``aliases`` collects local import
    names -> the name they import (``import a.b as c``: c -> b; ``from m import x as y``: y -> x).
    ``scoped``: refine the tokens of TCL101/TCL107/TCL108 by the function they are in (arguments.py);
    ``as_method``: ``statement`` is a def that may be a method."""
    tokens: Set[str] = set()
    names: Set[str] = set()
    inert = isinstance(statement, _INERT_STATEMENTS)
    add, add_name = tokens.add, names.add
    arguments: Set[str] = set()  # TCL101/TCL107/TCL108's tokens, refined by scope in a def or class (arguments.py)
    add_argument = arguments.add
    refined_lines: List[int] = []  # the first lines of the calls arguments.py refines
    placed_lines: List[int] = []  # ... and of those whose place training.py reads
    Constant, Name, Attribute, Call = ast.Constant, ast.Name, ast.Attribute, ast.Call
    AST = ast.AST
    stack: List[ast.AST] = [statement]
    pop, push = stack.pop, stack.append
    bound: Set[str] = set()
    imported: Set[str] = set()
    load = LOAD
    names_bound = (bound, imported)
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Name:
            add_name(node.id)  # type: ignore[attr-defined]
            if node.ctx is not load:  # type: ignore[attr-defined]
                bound.add(node.id)  # type: ignore[attr-defined]
            continue
        if cls is Attribute:
            add("attr:" + node.attr)  # type: ignore[attr-defined]
            if node.attr == "data" and node.ctx.__class__ is ast.Store:  # type: ignore[attr-defined]
                add("data_write")  # p.data = v, p.data += v
        elif cls is Call:
            _call_shapes(node, add)  # type: ignore[arg-type]
            called = last_name(node.func)  # type: ignore[attr-defined]
            if called in REFINED_CALLS:
                refined_lines.append(node.lineno)  # type: ignore[attr-defined]
                argument_tokens(node, add_argument, None)  # type: ignore[arg-type]
            elif node.func.__class__ is Name:  # type: ignore[attr-defined]
                argument_tokens(node, add_argument, None)  # type: ignore[arg-type]  # maybe one under another name
                if called in PLACED_CALLS:
                    placed_lines.append(node.lineno)  # type: ignore[attr-defined]
            elif called in PLACED_CALLS:
                placed_lines.append(node.lineno)  # type: ignore[attr-defined]
        else:
            handle = _HANDLERS.get(cls)
            if handle is not None:
                handle(node, add, aliases, names_bound)
        if inert and cls in _ACTIVE:
            inert = False
        for name in _fields(cls):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST) and item.__class__ is not Constant:
                        push(item)
            elif isinstance(value, AST) and value.__class__ is not Constant:
                push(value)
    if not scoped and any(token.startswith("name_call:") for token in tokens):
        training_call_tokens(statement, add)  # TCL105: where the copy is (training.py), under any name
    elif placed_lines:
        training_call_tokens(statement, add, sorted(placed_lines))  # TCL105: where the copy is (training.py)
    if arguments:
        if scoped and isinstance(statement, _DEFINITIONS) and not arguments.isdisjoint(REFINED_TOKENS):
            tokens |= {token for token in arguments if token.rpartition(":")[2] not in REFINED_CALLS}
            scoped_argument_tokens(statement, add, sorted(refined_lines), as_method)
        else:
            tokens |= arguments
    return Shape(tokens, names, inert, frozenset(bound), frozenset(imported))


def _subscript(node, add, aliases, names_bound) -> None:
    if node.ctx.__class__ is ast.Store and _is_data(node.value):
        add("data_write")  # p.data[i] = v


def _augmented(node, add, aliases, names_bound) -> None:
    add("write")
    _written(node.target, add)
    if node.op.__class__ is ast.Add:
        add("form:augadd")


def _binary(node, add, aliases, names_bound) -> None:
    if node.op.__class__ is ast.Add:
        add("form:add")


def _keyword(node, add, aliases, names_bound) -> None:
    if node.arg == "out":
        add("write")
        _written(node.value, add)


def _import(node, add, aliases, names_bound) -> None:
    for alias in node.names:
        if alias.asname:
            aliases[alias.asname] = alias.name.rsplit(".", 1)[-1]
    bindings(node, *names_bound)


def _is_data(node: ast.AST) -> bool:
    return node.__class__ is ast.Attribute and node.attr == "data"  # type: ignore[attr-defined]


def _call_shapes(call: ast.Call, add) -> None:
    func = call.func
    arity = len(call.args) + len(call.keywords)
    if func.__class__ is ast.Attribute:
        name = func.attr  # type: ignore[attr-defined]
        add("method:" + name)
        if name == "step":
            add("write")
        elif is_in_place(name):
            add("write")
            _written(func.value, add)  # type: ignore[attr-defined]  # x.add_(1)
            if call.args:
                _written(call.args[0], add)  # torch.nn.init.zeros_(w)
        if name in _CONVERSION_SET and func.value.__class__ is ast.Call:  # type: ignore[attr-defined]
            made = func.value.func  # type: ignore[attr-defined]
            if made.__class__ is ast.Attribute:
                add("conv_of:" + made.attr)
            elif made.__class__ is ast.Name:
                add("conv_of:" + made.id)
                add("name_conv_of:" + made.id)
        add("call:" + name)
        if _is_data(func.value) and name.endswith("_") and not name.startswith("__"):  # type: ignore[attr-defined]
            add("data_write")  # p.data.add_(v)
        inner = func.value  # type: ignore[attr-defined]
        if name == "detach" and arity == 0 and inner.__class__ is ast.Call:  # t.clone().detach()
            if inner.func.__class__ is ast.Attribute:
                add("detach_of:" + inner.func.attr)
            elif inner.func.__class__ is ast.Name:
                add("detach_of:" + inner.func.id)
                add("name_detach_of:" + inner.func.id)
    elif func.__class__ is ast.Name:
        name = func.id  # type: ignore[attr-defined]
        if is_in_place(name):
            add("write")  # zeros_(w), imported by name
            if call.args:
                _written(call.args[0], add)
        add("call:" + name)
        add("name_call:" + name)
    if any(_is_data(a) for a in call.args[:1]) or any(_is_data(k.value) for k in call.keywords):
        add("data_write")  # torch.nn.init.zeros_(p.data): a function may write it


def _last_part(expr: ast.AST) -> Optional[str]:
    """The last name of a dotted chain (``b`` of ``self.a.b``); None for anything else."""
    key = _dotted(expr)
    return key.rpartition(".")[2] if key is not None else None


def _plain_reference(value: ast.AST) -> bool:
    """``w``, ``self.w``, ``w.data`` or ``w.detach()`` (TCL114's snapshot values)."""
    if value.__class__ is ast.Call and not value.args and not value.keywords \
            and value.func.__class__ is ast.Attribute and value.func.attr == "detach":  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    return _last_part(value) is not None


def _assign_shapes(node: ast.Assign, add) -> None:
    targets = node.targets
    for target in targets:
        if target.__class__ is ast.Subscript:
            add("write")  # x[i] = v
            _written(target, add)
    if len(targets) != 1:
        return
    target, value = targets[0], node.value
    if target.__class__ is ast.Subscript:
        last = _last_part(target.value)  # type: ignore[attr-defined]
        if last is not None and (SNAPSHOT_NAME.search(last) or HISTORY_NAME.search(last)):
            _kept(value, add)  # log[k] = x
        return
    key = _dotted(target)
    if key is None:
        return
    if SNAPSHOT_NAME.search(key.rpartition(".")[2]) and _plain_reference(value):
        _kept(value, add)  # best = w
    if value.__class__ is ast.BinOp and value.op.__class__ is ast.Mult \
            and (_one_element(value.left) or _one_element(value.right)):  # type: ignore[attr-defined]
        add("listmul:" + key)  # xs = [t] * n
    root, hows = _alias_root(value)  # y = x.detach(), y = x.data[0], a = t.numpy(), t = from_numpy(a)
    if "detach" in hows or "data" in hows:
        add("detach_alias:" + key)
    if "numpy" in hows or _SHARED in hows:
        add("bridge:" + key)
        source = _dotted(root)
        if source is not None:
            add("bridge:" + source)


def _may_share(func: ast.AST) -> bool:
    """``torch.from_numpy`` / ``as_tensor`` / ``np.asarray``, or a plain name that may be one imported under
    another name."""
    return func.__class__ is ast.Name or func.__class__ is ast.Attribute \
        and (func.attr in SHARING_NAMES or func.attr in LEGACY_CONSTRUCTORS)  # type: ignore[attr-defined]


def _dotted(expr: ast.AST) -> Optional[str]:
    """``a.b.c`` for a chain of names; None for anything else."""
    parts = []
    while expr.__class__ is ast.Attribute:
        parts.append(expr.attr)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if expr.__class__ is not ast.Name:
        return None
    parts.append(expr.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


_SHARED = "(a sharing call)"


def _alias_root(expr: ast.AST) -> Tuple[ast.AST, Set[str]]:
    """What ``expr`` shares storage with, as semantic/storage.py's ``alias_of`` follows it, with every
    subscript and possible sharing call looked through (a superset), and the views and attributes passed on
    the way (``_SHARED`` for a sharing call)."""
    hows: Set[str] = set()
    while True:
        cls = expr.__class__
        if cls is ast.Subscript:
            expr = expr.value  # type: ignore[attr-defined]
        elif cls is ast.Attribute and expr.attr in VIEW_ATTRIBUTES:  # type: ignore[attr-defined]
            hows.add(expr.attr)  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        elif cls is ast.Call and expr.func.__class__ is ast.Attribute \
                and expr.func.attr in VIEW_METHODS:  # type: ignore[attr-defined]
            hows.add(expr.func.attr)  # type: ignore[attr-defined]
            expr = expr.func.value  # type: ignore[attr-defined]
        elif cls is ast.Call and len(expr.args) == 1 and _may_share(expr.func):  # type: ignore[attr-defined]
            hows.add(_SHARED)
            expr = expr.args[0]  # type: ignore[attr-defined]
        else:
            return expr, hows


def _storage_key(expr: ast.AST) -> Optional[str]:
    """The name whose storage ``expr`` is, as semantic/storage.py finds it (``w`` for ``w.data[0]``,
    ``w.detach().view(-1)``, ``torch.from_numpy(w)``); None when it is not a chain of names."""
    return _dotted(_alias_root(expr)[0])


def _written(expr: ast.AST, add) -> None:
    key = _storage_key(expr)
    if key is not None:
        add("written:" + key)


def _kept(value: ast.AST, add) -> None:
    """TCL114: ``value`` is stored with intent; its storage must be written for a hazard."""
    key = _storage_key(value)
    if key is not None:
        add("kept:" + key)


def _one_element(side: ast.AST) -> bool:
    return side.__class__ is ast.List and len(side.elts) == 1 \
        and side.elts[0].__class__ not in (ast.Constant, ast.Starred)  # type: ignore[attr-defined]


def _expression_statement_shapes(value: ast.AST, add) -> None:
    indexed_write(value, add)  # h[idx].zero_(), zeros_(w[idx]) (TCL120: index_shapes.py)
    if value.__class__ is not ast.Call or value.func.__class__ is not ast.Attribute:  # type: ignore[attr-defined]
        return
    func = value.func  # type: ignore[attr-defined]
    if func.attr in _DISCARDABLE_SET:
        add("stmt_conversion")  # x.to(device)
    elif func.attr == "append" and value.args:  # type: ignore[attr-defined]
        last = _last_part(func.value)
        if last is not None and (SNAPSHOT_NAME.search(last) or HISTORY_NAME.search(last)):
            _kept(value.args[0], add)  # type: ignore[attr-defined]  # history.append(x)


def _best_so_far(node: ast.If, add) -> None:
    """``if acc > best_acc:`` (TCL114: every assignment under it may keep "the best" by reference)."""
    test = node.test
    if test.__class__ is not ast.Compare or not any(op.__class__ in _COMPARISONS for op in test.ops):  # type: ignore[attr-defined]
        return
    if not any(BEST_NAME.search(_last_part(operand) or "") for operand in (test.left, *test.comparators)):  # type: ignore[attr-defined]
        return
    pending: List[ast.AST] = list(node.body)
    while pending:
        current = pending.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if current.__class__ is ast.Assign and len(current.targets) == 1:  # type: ignore[attr-defined]
            _kept(current.value, add)  # type: ignore[attr-defined]
        pending.extend(ast.iter_child_nodes(current))


#: shape_of's handlers of the node types other than names, attributes and calls.
_HANDLERS = {
    ast.Subscript: _subscript, ast.Assign: lambda node, add, aliases, names_bound: _assign_shapes(node, add),
    ast.Expr: lambda node, add, aliases, names_bound: _expression_statement_shapes(node.value, add),
    ast.AugAssign: _augmented, ast.BinOp: _binary, ast.keyword: _keyword, ast.Import: _import, ast.ImportFrom: _import,
    ast.If: lambda node, add, aliases, names_bound: _best_so_far(node, add),
    **{binder: lambda node, add, aliases, names_bound: bindings(node, *names_bound)
       for binder in BINDERS if binder not in (ast.Import, ast.ImportFrom)},
}
