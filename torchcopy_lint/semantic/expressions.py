"""The forward pass over expressions: every read recorded with what reaches it.

What it knows: evaluation order inside an expression, where narrowing applies (the right side of
``and``/``or``, the arms of a conditional expression, comprehension conditions), which names are not
reads (attribute names, keyword names, lambda parameters), the scopes of comprehensions and lambdas,
walrus bindings, and the calls each statement (and each enclosing loop) makes.
"""

from __future__ import annotations

import libcst as cst

from ..imports import dotted_name
from ..walk import child_fields
from .guards import FALSY
from .scopes import Binding, Read, Scope, State
from .syntax import all_params

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


class ExpressionWalker:
    """Mixed into FlowPass: ``expr`` walks an expression in ``state``, recording its reads."""

    falsy_seen = False  # a FALSY fact was set in this pass: only then are they looked up and forgotten

    def record(self, key: str, node: cst.CSTNode, state: State, scope: Scope) -> None:
        falsy = self.falsy_seen and state.fact(FALSY + key) is True
        read = self.reads[id(node)] = Read(key, node, state.get(key), state.fact(key), scope, self.cfg, falsy)
        self.scope.reads.append(read)

    def narrow(self, state: State, test: cst.BaseExpression, positive: bool) -> None:
        for key, value in self.model.guards.facts(test, positive, state).items():
            state.facts[key] = value
            if key.startswith(FALSY):
                self.falsy_seen = True

    def forget_falsy(self, state: State, keys) -> None:
        """What a test said of ``keys`` no longer holds: rebound, handed to a call, touched in a loop or try."""
        if self.falsy_seen:
            for key in keys:
                if key is not None and state.fact(FALSY + key) is not None:
                    state.facts[FALSY + key] = None

    def _call_forgets(self, call: cst.Call, state: State) -> None:
        """A call may fill what it is given (its receiver, its arguments): ``len(xs)`` does not."""
        func = call.func
        if isinstance(func, cst.Name) and func.value == "len":
            return
        keys = [dotted_name(arg.value) for arg in call.args]
        if isinstance(func, cst.Attribute):
            keys.append(dotted_name(func.value))
        self.forget_falsy(state, keys)

    def expr(self, e: cst.CSTNode, state: State, scope: Scope) -> None:
        t = type(e)
        if t is cst.Name:
            self.record(e.value, e, state, scope)
        elif t is cst.Attribute:
            key = dotted_name(e)
            if key is not None:
                self.record(key, e, state, scope)
            self.expr(e.value, state, scope)
        elif t is cst.Call:
            self.expr(e.func, state, scope)
            for arg in e.args:
                self.expr(arg.value, state, scope)
            if self.falsy_seen:
                self._call_forgets(e, state)
            if self.cfg >= 0:
                self.scope.calls[self.cfg].append(e)
            for loop, *_ in self.loops:
                loop.calls.append(e)
        elif t is cst.Arg:
            self.expr(e.value, state, scope)
        elif t is cst.BooleanOperation:
            self.expr(e.left, state, scope)
            right = state.child()
            self.narrow(right, e.left, isinstance(e.operator, cst.And))
            self.expr(e.right, right, scope)
        elif t is cst.IfExp:
            self.expr(e.test, state, scope)
            for arm, positive in ((e.body, True), (e.orelse, False)):
                inner = state.child()
                self.narrow(inner, e.test, positive)
                self.expr(arm, inner, scope)
        elif t in _COMPREHENSIONS:
            self.comprehension(e, state, scope)
        elif t is cst.Lambda:
            inner_scope = Scope(e, "lambda", scope)
            inner = state.child()
            params = e.params
            for param in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
                if param.default is not None:
                    self.expr(param.default, state, scope)
            for param in all_params(params):
                key = param.name.value
                self.bind(inner, inner_scope, key, Binding(key, "unknown", param, inner_scope, self.cfg))
            self.expr(e.body, inner, inner_scope)
        elif t is cst.NamedExpr:
            self.expr(e.value, state, scope)
            self.bind_target(e.target, state, scope, "assign", e.value, e)
        else:
            for name in child_fields(t):
                value = getattr(e, name)
                if isinstance(value, cst.CSTNode):
                    self.expr(value, state, scope)
                elif isinstance(value, (tuple, list)):
                    for item in value:
                        if isinstance(item, cst.CSTNode):
                            self.expr(item, state, scope)

    def comprehension(self, e, state: State, scope: Scope) -> None:
        inner_scope = Scope(e, "comprehension", scope)
        inner = state.child()
        comp = e.for_in
        first = True
        while comp is not None:
            self.expr(comp.iter, state if first else inner, scope if first else inner_scope)
            first = False
            self.bind_target(comp.target, inner, inner_scope, "iter", comp.iter, comp)
            for cond in comp.ifs:
                self.expr(cond.test, inner, inner_scope)
                self.narrow(inner, cond.test, True)
            comp = comp.inner_for_in
        if isinstance(e, cst.DictComp):
            self.expr(e.key, inner, inner_scope)
            self.expr(e.value, inner, inner_scope)
        else:
            self.expr(e.elt, inner, inner_scope)

