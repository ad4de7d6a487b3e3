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
from typing import Dict, FrozenSet, List, Set

from .ast_children import FIELDS, child_fields, children
from .binding_names import BINDERS, LOAD, bindings
from .arguments import REFINED_CALLS, REFINED_TOKENS, argument_tokens, scoped_argument_tokens
from .training import PLACED_CALLS, training_call_tokens
from .alias_shapes import add_kept, add_written, assign_shapes, last_part
from .index_shapes import BY_NAMES, indexed_write, scoped_index_tokens
from ..codes import BEST_NAME, CONVERSION_METHODS, DISCARDABLE_METHODS, HISTORY_NAME, SNAPSHOT_NAME, is_in_place

_CONVERSION_SET = frozenset(CONVERSION_METHODS)
_DISCARDABLE_SET = frozenset(DISCARDABLE_METHODS)
_COMPARISONS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_INERT_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# Nodes that make a statement more than data: scopes, walrus bindings, calls (side effects the
# semantic model may read: `xs.append(t)`), generators.
_ACTIVE = frozenset({ast.Call, ast.NamedExpr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                     ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom})
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
    Constant, Name, Attribute, Call, Store, Arg = (ast.Constant, ast.Name, ast.Attribute, ast.Call, ast.Store,
                                                   ast.arg)
    AST = ast.AST
    stack: List[ast.AST] = [statement]
    pop, push = stack.pop, stack.append
    bound: Set[str] = set()
    imported: Set[str] = set()
    add_bound = bound.add
    load = LOAD
    names_bound = (bound, imported)
    fields_of, handlers, active, refined, placed = FIELDS, _HANDLERS, _ACTIVE, REFINED_CALLS, PLACED_CALLS
    # by node class, the commonest first: a name, an attribute (one child), a call (its three fields); the rest
    # by their handlers and remembered fields (ast_children.py), in the order of ``ast.iter_child_nodes``. A name
    # child is read where it is met (what a name gives, two sets, does not depend on the order)
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Name:
            add_name(node.id)  # type: ignore[attr-defined]
            if node.ctx is not load:  # type: ignore[attr-defined]
                add_bound(node.id)  # type: ignore[attr-defined]
            continue
        if cls is Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            add("attr:" + attr)
            if attr == "data" and node.ctx.__class__ is Store:  # type: ignore[attr-defined]
                add("data_write")  # p.data = v, p.data += v
            value = node.value  # type: ignore[attr-defined]
            if value.__class__ is Name:
                add_name(value.id)  # type: ignore[attr-defined]
                if value.ctx is not load:  # type: ignore[attr-defined]
                    add_bound(value.id)  # type: ignore[attr-defined]
            elif value.__class__ is not Constant:
                push(value)
            continue
        if cls is Call:
            func = node.func  # type: ignore[attr-defined]
            _call_shapes(node, func, add)  # type: ignore[arg-type]
            func_cls = func.__class__
            called = func.attr if func_cls is Attribute else func.id if func_cls is Name else None
            if called in refined:
                refined_lines.append(node.lineno)  # type: ignore[attr-defined]
                argument_tokens(node, add_argument, None)  # type: ignore[arg-type]
            elif func_cls is Name:
                argument_tokens(node, add_argument, None)  # type: ignore[arg-type]  # maybe one under another name
                if called in placed:
                    placed_lines.append(node.lineno)  # type: ignore[attr-defined]
            elif called in placed:
                placed_lines.append(node.lineno)  # type: ignore[attr-defined]
            inert = False
            if func_cls is Name:
                add_name(called)  # type: ignore[arg-type]
                if func.ctx is not load:  # type: ignore[attr-defined]
                    add_bound(called)  # type: ignore[arg-type]
            elif func_cls is not Constant:
                push(func)
            values = node.args  # type: ignore[attr-defined]
            keywords = node.keywords  # type: ignore[attr-defined]
            if keywords:  # (read here: _keyword, then its value)
                values = values + [keyword.value for keyword in keywords]
                for keyword in keywords:
                    if keyword.arg == "out":
                        add("write")
                        add_written(keyword.value, add)
            for item in values:
                item_cls = item.__class__
                if item_cls is Name:
                    add_name(item.id)  # type: ignore[attr-defined]
                    if item.ctx is not load:  # type: ignore[attr-defined]
                        add_bound(item.id)  # type: ignore[attr-defined]
                elif item_cls is not Constant:
                    push(item)
            continue
        if cls is Arg:  # a parameter: it binds its name; its annotation
            add_bound(node.arg)  # type: ignore[attr-defined]
            value = node.annotation  # type: ignore[attr-defined]
            if value is not None and value.__class__ is not Constant:
                push(value)
            continue
        handle = handlers.get(cls)
        if handle is not None:
            handle(node, add, aliases, names_bound)
        if inert and cls in active:
            inert = False
        fields = fields_of.get(cls)
        if fields is None:
            fields = child_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            value_cls = value.__class__
            if value_cls is list:
                for item in value:
                    item_cls = item.__class__
                    if item_cls is Name:
                        add_name(item.id)
                        if item.ctx is not load:
                            add_bound(item.id)
                    elif item_cls is not Constant and isinstance(item, AST):
                        push(item)
            elif value_cls is Name:
                add_name(value.id)  # type: ignore[attr-defined]
                if value.ctx is not load:  # type: ignore[attr-defined]
                    add_bound(value.id)  # type: ignore[attr-defined]
            elif value_cls is not Constant and isinstance(value, AST):
                push(value)
    if BY_NAMES in tokens and statement.__class__ in _DEFINITIONS:
        tokens.discard(BY_NAMES)
        tokens.discard("stmt_index_write")
        scoped_index_tokens(statement, add)  # TCL120: h[i].zero_() where the def never assigns `i`
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
    add_written(node.target, add)
    if node.op.__class__ is ast.Add:
        add("form:augadd")


def _binary(node, add, aliases, names_bound) -> None:
    if node.op.__class__ is ast.Add:
        add("form:add")


def _keyword(node, add, aliases, names_bound) -> None:
    if node.arg == "out":
        add("write")
        add_written(node.value, add)


def _import(node, add, aliases, names_bound) -> None:
    for alias in node.names:
        if alias.asname:
            aliases[alias.asname] = alias.name.rsplit(".", 1)[-1]
    bindings(node, *names_bound)


def _is_data(node: ast.AST) -> bool:
    return node.__class__ is ast.Attribute and node.attr == "data"  # type: ignore[attr-defined]


def _call_shapes(call: ast.Call, func: ast.expr, add) -> None:
    if func.__class__ is ast.Attribute:
        name = func.attr  # type: ignore[attr-defined]
        add("method:" + name)
        if name == "step":
            add("write")
        elif is_in_place(name):
            add("write")
            add_written(func.value, add)  # type: ignore[attr-defined]  # x.add_(1)
            if call.args:
                add_written(call.args[0], add)  # torch.nn.init.zeros_(w)
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
        if name == "detach" and not call.args and not call.keywords and inner.__class__ is ast.Call:  # t.clone().detach()
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
                add_written(call.args[0], add)
        add("call:" + name)
        add("name_call:" + name)
    args = call.args
    if args and _is_data(args[0]):
        add("data_write")  # torch.nn.init.zeros_(p.data): a function may write it
    else:
        for keyword in call.keywords:
            if _is_data(keyword.value):
                add("data_write")
                break


def _expression_statement_shapes(value: ast.AST, add) -> None:
    indexed_write(value, add)  # h[idx].zero_(), zeros_(w[idx]) (TCL120: index_shapes.py)
    if value.__class__ is not ast.Call or value.func.__class__ is not ast.Attribute:  # type: ignore[attr-defined]
        return
    func = value.func  # type: ignore[attr-defined]
    if func.attr in _DISCARDABLE_SET:
        add("stmt_conversion")  # x.to(device)
    elif func.attr == "append" and value.args:  # type: ignore[attr-defined]
        last = last_part(func.value)
        if last is not None and (SNAPSHOT_NAME.search(last) or HISTORY_NAME.search(last)):
            add_kept(value.args[0], add)  # type: ignore[attr-defined]  # history.append(x)


def _best_so_far(node: ast.If, add) -> None:
    """``if acc > best_acc:`` (TCL114: every assignment under it may keep "the best" by reference)."""
    test = node.test
    if test.__class__ is not ast.Compare or not any(op.__class__ in _COMPARISONS for op in test.ops):  # type: ignore[attr-defined]
        return
    if not any(BEST_NAME.search(last_part(operand) or "") for operand in (test.left, *test.comparators)):  # type: ignore[attr-defined]
        return
    pending: List[ast.AST] = list(node.body)
    while pending:
        current = pending.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if current.__class__ is ast.Assign and len(current.targets) == 1:  # type: ignore[attr-defined]
            add_kept(current.value, add)  # type: ignore[attr-defined]
        pending.extend(children(current))


#: shape_of's handlers of the node types other than names, attributes and calls.
_HANDLERS = {
    ast.Subscript: _subscript, ast.Assign: lambda node, add, aliases, names_bound: assign_shapes(node, add),
    ast.Expr: lambda node, add, aliases, names_bound: _expression_statement_shapes(node.value, add),
    ast.AugAssign: _augmented, ast.BinOp: _binary, ast.keyword: _keyword, ast.Import: _import, ast.ImportFrom: _import,
    ast.If: lambda node, add, aliases, names_bound: _best_so_far(node, add),
    **{binder: lambda node, add, aliases, names_bound: bindings(node, *names_bound)
       for binder in BINDERS if binder not in (ast.Import, ast.ImportFrom)},
}
