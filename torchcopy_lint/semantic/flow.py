"""The forward pass: one walk per scope, in evaluation order, that records what reaches every read.

What it knows: how Python statements move definitions around. Assignments (with tuple targets),
augmented and annotated assignments, ``for``/``while`` (the loop head gets one ``phi`` binding per
name the body binds, resolved after the body from its end and its ``continue``s: each statement is
visited once), ``if``/``try``/``with``/``match`` (arms start from a snapshot and merge where they
join; ``return``/``raise``/``break``/``continue`` end their arm), comprehensions, lambdas and class
bodies (their own scopes, inline), nested functions (bound here, analysed on demand by the model),
and ``isinstance``-style narrowing from tests, asserts and early exits (facts from guards.py).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ..imports import dotted_name
from .expressions import ExpressionWalker
from .syntax import all_params, buffer_key, del_keys, mentioned_keys, pattern_names, target_keys
from .scopes import Binding, Loop, Read, Scope, State, merge_into, union

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_EXITS = (cst.Return, cst.Raise)


class FlowPass(ExpressionWalker):
    """Walks one flow scope (module or function body); the model owns the results."""

    def __init__(self, model, scope: Scope) -> None:
        self.model = model
        self.scope = scope
        self.reads: Dict[int, Read] = model.reads
        self.loops: List[Tuple[Loop, Set[str], List[Dict[str, object]], List[Dict[str, object]]]] = []
        self.cfg = -1

    # --- bindings --------------------------------------------------------------------------------

    def bind(self, state: State, scope: Scope, key: str, binding: Binding) -> None:
        state.defs[key] = (binding,)
        if state.fact(key) is not None:
            state.facts[key] = None
        self.forget_falsy(state, (key,))
        scope.bindings.setdefault(key, []).append(binding)
        if "." in key:
            for i, ch in enumerate(key):
                if ch == ".":
                    scope.dotted.setdefault(key[:i], set()).add(key)
        for chain in scope.dotted.get(key, ()):  # `x = ...` forgets what `x.a = ...` said
            if chain != key and state.get(chain) is not None:
                state.defs[chain] = ()
            if state.fact(chain) is not None:
                state.facts[chain] = None

    def new(self, key: str, how: str, node: cst.CSTNode, scope: Scope, **kw) -> Binding:
        return Binding(key, how, node, scope, self.cfg, **kw)

    def bind_target(self, target: cst.BaseExpression, state: State, scope: Scope, how: str,
                    value: Optional[cst.CSTNode], node: cst.CSTNode, path: Tuple = ()) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            starred = any(isinstance(el, cst.StarredElement) for el in elements)
            for i, el in enumerate(elements):  # (position or -1 starred or -2 unknown, length)
                where = -1 if isinstance(el, cst.StarredElement) else -2 if starred else i
                self.bind_target(el.value, state, scope, how, value, node, path + ((where, len(elements)),))
            return
        if isinstance(target, cst.Subscript):
            self.expr(target, state, scope)
            key = dotted_name(target.value)
            self.forget_falsy(state, (key,))  # `xs[:0] = [t]`
            if key is not None and value is not None and how == "assign" and not path:
                scope.item_stores.setdefault(key, []).append(value)
            return
        key = dotted_name(target)
        if isinstance(target, cst.Attribute):
            self.expr(target.value, state, scope)
        if key is None:
            return
        self.bind(state, scope, key, self.new(key, how, target, scope, value=value, path=path))

    # --- statements ------------------------------------------------------------------------------

    def block(self, body, state: State, scope: Scope) -> None:
        for stmt in body:
            self.stmt(stmt, state, scope)

    def node(self, stmt: cst.CSTNode, state: State) -> None:
        self.cfg = self.scope.new_node(stmt, () if state.dead else state.preds)
        state.preds = (self.cfg,)
        for loop, *_ in self.loops:
            loop.body_cfg.append(self.cfg)

    def stmt(self, stmt: cst.CSTNode, state: State, scope: Scope) -> None:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                self.node(small, state)
                self.small(small, state, scope)
            return
        handler = getattr(self, "stmt_" + type(stmt).__name__, None)
        if handler is not None:
            handler(stmt, state, scope)

    def suite(self, suite: cst.BaseSuite, state: State, scope: Scope) -> None:
        self.block(suite.body, state, scope)

    def small(self, small: cst.CSTNode, state: State, scope: Scope) -> None:
        if isinstance(small, cst.Assign):
            self.expr(small.value, state, scope)
            for target in small.targets:
                self.bind_target(target.target, state, scope, "assign", small.value, small)
        elif isinstance(small, cst.AugAssign):
            self.expr(small.value, state, scope)
            self.expr(small.target, state, scope)
            key = dotted_name(small.target)
            if key is not None:
                previous = list(state.get(key) or ())
                self.bind(state, scope, key, self.new(key, "aug", small.target, scope, value=small.value,
                                                      previous=previous))
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.expr(small.value, state, scope)
            how = "assign" if small.value is not None else "ann"
            self.bind_target(small.target, state, scope, how, small.value or small.annotation, small)
        elif isinstance(small, cst.Expr):
            self.expr(small.value, state, scope)
            self._statement_call(small.value, state, scope)
        elif isinstance(small, _EXITS):
            value = small.value if isinstance(small, cst.Return) else small.exc
            if value is not None:
                self.expr(value, state, scope)
            if isinstance(small, cst.Return):
                scope.returns.append(small.value)
            state.dead, state.preds = True, ()
        elif isinstance(small, (cst.Continue, cst.Break)) and self.loops:
            loop, bound, continues, breaks = self.loops[-1]
            snapshot = {key: state.get(key) for key in bound}
            snapshot["<preds>"] = state.preds
            (continues if isinstance(small, cst.Continue) else breaks).append(snapshot)
            state.dead, state.preds = True, ()
        elif isinstance(small, cst.Assert):
            self.expr(small.test, state, scope)
            self.narrow(state, small.test, True)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            names = small.names if not isinstance(small.names, cst.ImportStar) else ()
            for alias in names:
                local = alias.asname.name if alias.asname is not None else alias.name
                key = dotted_name(local)
                if key is not None:
                    key = key.split(".")[0]
                    self.bind(state, scope, key, self.new(key, "import", small, scope))
        elif isinstance(small, cst.Del):
            for key in del_keys(small.target):
                self.bind(state, scope, key, self.new(key, "unknown", small, scope))
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                scope.declared_global.add(item.name.value)
                self.bind(state, scope, item.name.value, self.new(item.name.value, "unknown", small, scope))

    def _statement_call(self, call: cst.BaseExpression, state: State, scope: Scope) -> None:
        """``self.register_buffer("x", v)`` binds ``self.x``; ``xs.append(v)`` stores an item."""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or not call.args:
            return
        key = buffer_key(call)
        if key is not None and len(call.args) >= 2:
            self.bind(state, scope, key, self.new(key, "buffer", call, scope, value=call.args[1].value))
            return
        receiver = dotted_name(call.func.value)
        if receiver is not None and call.func.attr.value in ("append", "insert", "add"):
            scope.item_stores.setdefault(receiver, []).append(call.args[-1].value)

    def stmt_If(self, stmt: cst.If, state: State, scope: Scope) -> None:
        self.node(stmt.test, state)
        self.expr(stmt.test, state, scope)
        body, other = state.child(), state.child()
        self.narrow(body, stmt.test, True)
        self.narrow(other, stmt.test, False)
        self.suite(stmt.body, body, scope)
        if isinstance(stmt.orelse, cst.Else):
            self.suite(stmt.orelse.body, other, scope)
        elif isinstance(stmt.orelse, cst.If):
            self.stmt_If(stmt.orelse, other, scope)
        merge_into(state, [body, other])

    def stmt_With(self, stmt: cst.With, state: State, scope: Scope) -> None:
        self.node(stmt, state)
        for item in stmt.items:
            self.expr(item.item, state, scope)
            if item.asname is not None:
                self.bind_target(item.asname.name, state, scope, "with", item.item, stmt)
        self.suite(stmt.body, state, scope)

    def stmt_For(self, stmt: cst.For, state: State, scope: Scope) -> None:
        self.expr(stmt.iter, state, scope)
        self._loop(stmt, state, scope, stmt.iter, infinite=False)

    def stmt_While(self, stmt: cst.While, state: State, scope: Scope) -> None:
        test = stmt.test
        infinite = isinstance(test, cst.Name) and test.value == "True" or \
            isinstance(test, cst.Integer) and test.value != "0"
        self._loop(stmt, state, scope, None, infinite=infinite)

    def _loop(self, stmt, state: State, scope: Scope, iterable, infinite: bool) -> None:
        self.forget_falsy(state, mentioned_keys(stmt) if self.falsy_seen else ())  # the body runs again
        bound = self.model.bound_keys(stmt.body)
        if isinstance(stmt, cst.For):
            bound = bound | target_keys(stmt.target)
        for key in bound:  # chains bound in the body are forgotten when their head is rebound
            for i, ch in enumerate(key):
                if ch == ".":
                    scope.dotted.setdefault(key[:i], set()).add(key)
        head = state.child()
        phis: Dict[str, Binding] = {}
        for key in bound:
            previous = list(state.get(key) or ())
            phis[key] = phi = Binding(key, "phi", stmt, scope, -1, previous=previous)
            head.defs[key] = (phi,)
            head.facts[key] = None
        self.node(stmt.target if isinstance(stmt, cst.For) else stmt.test, head)
        loop = Loop(stmt, scope, self.cfg)
        for phi in phis.values():
            phi.cfg = self.cfg
        self.model.loops[id(stmt)] = loop
        continues: List[Dict[str, object]] = []
        breaks: List[Dict[str, object]] = []
        self.loops.append((loop, bound, continues, breaks))
        if isinstance(stmt, cst.For):
            self.bind_target(stmt.target, head, scope, "iter", iterable, stmt)
        else:
            self.expr(stmt.test, head, scope)
        body = head.child()
        if isinstance(stmt, cst.While):
            self.narrow(body, stmt.test, True)
        self.suite(stmt.body, body, scope)
        self.loops.pop()
        ends = ([] if body.dead else [{key: body.get(key) for key in bound} | {"<preds>": body.preds}]) + continues
        for end in ends:
            for key, phi in phis.items():
                phi.previous.extend(b for b in (end.get(key) or ()) if b not in phi.previous)
            scope.add_edges(end["<preds>"], loop.head)
        arms = []
        if not infinite:
            exit_arm = state.child()
            exit_arm.preds = (loop.head,)
            for key, phi in phis.items():
                exit_arm.defs[key] = (phi,)
                exit_arm.facts[key] = None
            if isinstance(stmt, cst.While):
                self.narrow(exit_arm, stmt.test, False)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, exit_arm, scope)
            arms.append(exit_arm)
        for snapshot in breaks:
            arm = state.child()
            arm.preds = snapshot["<preds>"]  # type: ignore[assignment]
            for key in bound:
                arm.defs[key] = snapshot[key] or ()  # type: ignore[assignment]
                arm.facts[key] = None
            arms.append(arm)
        merge_into(state, arms)

    def stmt_Try(self, stmt, state: State, scope: Scope) -> None:
        self.forget_falsy(state, mentioned_keys(stmt.body) if self.falsy_seen else ())  # a handler sees any point
        body = state.child()
        self.suite(stmt.body, body, scope)
        arms = []
        for handler in stmt.handlers:
            arm = state.child()
            for key in body.defs:  # the exception may come before or after any statement of the body
                arm.defs[key] = union([state.get(key), body.get(key)]) or ()
                arm.facts[key] = None
            arm.preds = tuple(dict.fromkeys(state.preds + body.preds))
            arm.dead = False
            self.node(handler, arm)
            if handler.type is not None:
                self.expr(handler.type, arm, scope)
            if handler.name is not None:
                self.bind_target(handler.name.name, arm, scope, "unknown", None, handler)
            self.suite(handler.body, arm, scope)
            arms.append(arm)
        if stmt.orelse is not None:
            self.suite(stmt.orelse.body, body, scope)
        merge_into(state, [body] + arms)
        if stmt.finalbody is not None:
            self.suite(stmt.finalbody.body, state, scope)

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt, state: State, scope: Scope) -> None:
        self.node(stmt.subject, state)
        self.expr(stmt.subject, state, scope)
        arms = [state.child()]  # no case matched
        for case in stmt.cases:
            arm = state.child()
            for name in pattern_names(case.pattern):
                self.bind(arm, scope, name, self.new(name, "unknown", case, scope))
            if case.guard is not None:
                self.expr(case.guard, arm, scope)
            self.suite(case.body, arm, scope)
            arms.append(arm)
        merge_into(state, arms)

    def stmt_FunctionDef(self, stmt: cst.FunctionDef, state: State, scope: Scope) -> None:
        self.node(stmt, state)
        for deco in stmt.decorators:
            self.expr(deco.decorator, state, scope)
        for param in all_params(stmt.params):
            if param.default is not None:
                self.expr(param.default, state, scope)
        owner = scope.node if scope.kind == "class" else None
        self.model.register_function(stmt, scope.flow, owner)
        self.bind(state, scope, stmt.name.value, self.new(stmt.name.value, "def", stmt, scope))

    def stmt_ClassDef(self, stmt: cst.ClassDef, state: State, scope: Scope) -> None:
        self.node(stmt, state)
        for item in list(stmt.bases) + list(stmt.keywords):
            self.expr(item.value, state, scope)
        for deco in stmt.decorators:
            self.expr(deco.decorator, state, scope)
        inner = Scope(stmt, "class", scope)
        self.model.class_scopes[id(stmt)] = inner
        self.suite(stmt.body, state.child(), inner)
        self.bind(state, scope, stmt.name.value, self.new(stmt.name.value, "class", stmt, scope))
