"""Facts about requires_grad that the flow graph and the file's hook registrations give.

- ``switched_off(binding, read)``: ``x.requires_grad = False`` or ``x.requires_grad_(False)`` runs on
  every path from the binding of ``x`` to the read (``= True`` / ``requires_grad_()`` turn it back on);
- ``hook_gradient(binding)``: the parameter is a gradient a backward hook receives (a function or
  lambda passed to ``register_hook``, ``register_full_backward_hook``...; a forward hook's output is not).
Gradients require grad only under ``backward(create_graph=True)``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set

import libcst as cst

from ..imports import dotted_name
from ..walk import children

# Hook registrations whose hook receives gradients, and where (positions among the hook's parameters
# after ``self``): a tensor's hook gets its gradient, a module's backward hooks (module, grad_in, grad_out).
_GRAD_HOOKS = {"register_hook": (0,), "register_full_backward_hook": (1, 2), "register_backward_hook": (1, 2),
               "register_module_full_backward_hook": (1, 2), "register_module_backward_hook": (1, 2),
               "register_full_backward_pre_hook": (1,), "register_module_full_backward_pre_hook": (1,),
               "register_prehook": (0,)}


def literal(expr: cst.BaseExpression) -> Optional[bool]:
    """``True``/``False`` written out, else None."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


class GradFacts:
    def __init__(self, model) -> None:
        self.model = model
        self._hooks: Optional[Dict[str, Sequence[int]]] = None
        self._hook_lambdas: Dict[int, Sequence[int]] = {}
        self._switches: Dict[tuple, Dict[int, bool]] = {}

    # --- hooks ------------------------------------------------------------------------------------

    def hook_gradient(self, b) -> bool:
        """A parameter of a function (or lambda) registered as a hook that receives gradients."""
        if self._hooks is None:
            self._find_hooks()
        owner = b.scope.node if isinstance(b.scope.node, cst.Lambda) else b.owner
        if isinstance(owner, cst.Lambda):
            positions = self._hook_lambdas.get(id(owner))
            params = list(owner.params.params)
        elif isinstance(owner, cst.FunctionDef):
            positions = self._hooks.get(owner.name.value)
            params = [p for p in owner.params.params if p.name.value != "self"]
        else:
            return False
        return positions is not None and any(i < len(params) and params[i] is b.node for i in positions)

    def _find_hooks(self) -> None:
        self._hooks = {}
        pending: List[cst.CSTNode] = [self.model.module]
        while pending:
            node = pending.pop()
            pending.extend(children(node))
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.args):
                continue
            positions = _GRAD_HOOKS.get(node.func.attr.value)
            if positions is None:
                continue
            hook = node.args[0].value
            if isinstance(hook, cst.Lambda):
                self._hook_lambdas[id(hook)] = positions
            name = dotted_name(hook)
            if name is not None:
                self._hooks[name.rsplit(".", 1)[-1]] = positions

    def switched_off(self, b, read) -> bool:
        """``x.requires_grad = False`` or ``x.requires_grad_(False)`` on every path from ``b`` to ``read``
        (``= True`` / ``requires_grad_()`` turn it back on)."""
        flow = b.scope.flow
        if read.scope.flow is not flow or b.cfg < 0 or read.cfg < 0:
            return False
        switches = self._switches_of(flow, b.key)
        if not any(not on for on in switches.values()):
            return False
        kills: Set[int] = {x.cfg for x in flow.bindings.get(b.key, ()) if x.how != "phi"}
        seen = set()
        pending = [(s, False) for s in flow.succ[b.cfg]]
        while pending:
            node, off = pending.pop()
            if node == read.cfg and not off:
                return False
            if (node, off) in seen or node in kills:
                continue
            seen.add((node, off))
            off = not switches[node] if node in switches else off
            pending.extend((s, off) for s in flow.succ[node])
        return True

    def _switches_of(self, flow, key: str) -> Dict[int, bool]:
        """cfg node -> whether it turns ``key``'s requires_grad on (True) or off (False)."""
        memo = self._switches.get((id(flow), key))
        if memo is not None:
            return memo
        found: Dict[int, bool] = {}
        for b in flow.bindings.get(key + ".requires_grad", ()):
            flag = literal(b.value) if b.how == "assign" and b.value is not None and not b.path else None
            if flag is not None:
                found[b.cfg] = flag
        for node, calls in enumerate(flow.calls):
            for call in calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" \
                        and dotted_name(func.value) == key:
                    flag = literal(call.args[0].value) if call.args else True
                    if flag is not None:
                        found[node] = flag
        self._switches[(id(flow), key)] = found
        return found
