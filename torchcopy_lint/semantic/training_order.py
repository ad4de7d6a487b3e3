"""Training-step order: evidence that a graph holding a tensor is live at a statement.

A graph is built by a module's forward (``out = model(x)``), saves the module's parameters, and is
freed by ``loss.backward()`` (unless ``retain_graph=True``). A ``.data`` write to a parameter of
``model`` is therefore hazardous exactly where it runs after such a forward and before that backward:
backward then uses the written values. This module finds that order in one scope (a function's
body, or module-level code), in the order the code reads, without wrapping around loops: in a loop
whose body runs forward, backward, then the write, the next iteration's forward records a new graph
after the write, so nothing is live at it.

Evidence for the forward: a call of a value the semantic model knows is a module (``model(x)``,
``self.encoder(h)``, ``model.forward(x)``), not inside a ``torch.no_grad()``/``inference_mode()``
block, whose name is a prefix of the written tensor's (``model`` and ``model.fc.weight``; a loop
variable over ``model.parameters()``; a name assigned ``model.fc.weight``); a call of a value of unknown
kind whose ``parameters()`` the written tensor comes from (having parameters, it is a module); a call
``self.m(...)`` of an undecorated method of the same class, for the forwards (of ``self.<...>`` values) that ``m``
runs and does not free by its own ``backward()`` (speechbrain's ``predictions = self.compute_forward(batch)``
runs ``self.modules.generator(x)``). Without that link there is no evidence, and the answer is None.
A backward whose loss is bound anew after the write, from nothing the forward returned (``loss = E(l(X), b)``
between them), backpropagates a graph recorded after it: that is no evidence either; ``loss =
crit(predictions, y)`` with ``predictions`` the forward's output is the step's own loss. A forward or backward
in another branch of an ``if`` around the write (``if d_step: ... loss.backward()`` / ``elif g_step:`` the write)
is on no path through it and is not read (step_paths.py).

``used_before`` answers the question a forward asks: is there anything before the write, in its function,
that can have put the written tensor in the graph being recorded (a read of it that is not of its metadata,
a call of a module it belongs to), or is the tensor one of the function's inputs (they come from a graph)?
A write before every use (a parameter clamped, then used; a layer built, then initialised) changes only
what this forward will compute, which is the point of it. A ``backward()`` run on every path to the write (a
statement of a block around it, before it: a training loop's body running forward, backward, step, then the
write) frees what was recorded before it, as in ``live_between``: only what follows it counts, so a method called
from ``forward`` that trains something and writes after its own backward shows no live graph (its caller being a
``forward`` does not outweigh that); a write between its forward and its backward still does.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ..imports import dotted_name
from ..walk import children
from .kinds import Kind
from .step_paths import Parents, bound_names, exclusive, freeing_backward
from .syntax import all_params, mentioned_keys

#: Methods whose result iterates (or is) the module's own tensors: ``for p in model.parameters()``.
_OWN_TENSORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "state_dict", "modules",
                          "named_modules", "children", "named_children"})
#: Attributes and methods that read a tensor's metadata or leave the graph: ``w.device``, ``w.data``, ``w.size()``.
_NOT_RECORDED = frozenset({"device", "dtype", "shape", "size", "dim", "ndim", "ndimension", "numel", "nelement",
                           "data", "detach", "item", "requires_grad", "is_cuda", "is_meta", "grad", "is_leaf",
                           "element_size", "stride", "layout", "is_contiguous", "data_ptr", "storage_offset",
                           "names", "tolist", "is_sparse", "is_floating_point", "is_complex"})
#: Calls a written receiver may pass through and still be the module's tensor: ``model.fc.weight.view(-1)``.
_SAME_TENSOR = frozenset({"view", "view_as", "reshape", "t", "transpose", "permute", "flatten", "squeeze",
                          "unsqueeze", "expand", "narrow", "select", "detach", "data", "values", "items"})

# (order, 'forward' | 'call' | 'backward' | 'bind', the call (the Assign for a bind), the forwarded module's name
# (the called name; the bound name)). A 'call' calls a value of unknown kind: the forward of a module only where the
# written tensor is one of that value's `parameters()`.
Event = Tuple[int, str, cst.CSTNode, str]
Scope = Tuple[Dict[int, int], List[Event], Parents]
Use = Tuple[int, Tuple[int, ...]]  # (order, the ids of the loops around the read)


class TrainingOrder:
    """``live_between(stack, top, written)``: the (forward, backward) calls around the node at
    ``stack[top]`` that show a graph holding ``written`` is live there, or None."""

    def __init__(self, model, grad_mode) -> None:
        self.model = model
        self._grad_mode = grad_mode  # With -> True (turns recording on), False (off) or None (neither)
        self._scopes: Dict[int, Scope] = {}
        self._busy: set = set()  # methods whose events are being read: a cycle of calls adds nothing
        self._uses: Dict[int, Dict[str, List[Use]]] = {}

    def live_between(self, stack: Sequence[cst.CSTNode], top: int, scope_index: int,
                     written: Optional[cst.BaseExpression]) -> Optional[Tuple[cst.Call, cst.Call]]:
        if written is None:
            return None
        iterated: set = set()  # owners whose `parameters()` the written tensor came from: modules, whatever their kind
        owners = self._owners(written, list(stack[:top + 1]), iterated=iterated)
        if not owners:
            return None
        order, events, parents = self._events(list(stack[:scope_index + 1]))
        at = order.get(id(stack[top]))
        if at is None:
            return None
        forward = None
        outputs: set = set()  # names bound from the forward's result, and from those
        rebound: set = set()  # names bound anew after the write, from nothing the forward returned: a loss computed after it
        for position, what, node, name in events:
            if exclusive(parents, node, stack[:top + 1]):
                continue  # another branch of an `if` around the write: not on a path through it
            if what == "bind":
                fed = bool(mentioned_keys(node.value) & outputs)  # type: ignore[attr-defined]
                (outputs.add if fed else outputs.discard)(name)
                if position > at and not fed:
                    rebound.add(name)
            elif position < at:
                if what == "backward":
                    forward = None  # that step's graph is freed: nothing before it is live
                elif what == "forward" and any(owner == name or owner.startswith(name + ".") for owner in owners) \
                        or what == "call" and name in iterated:
                    forward = node
                    outputs = set(bound_names(parents, node))
            elif what == "backward" and forward is not None:
                if _loss_of(node) in rebound:
                    return None  # it backpropagates a graph recorded after the write
                return forward, node  # type: ignore[return-value]
        return None

    def used_before(self, stack: Sequence[cst.CSTNode], top: int, scope_index: int,
                    written: cst.BaseExpression) -> bool:
        """Whether something before the write at ``stack[top]`` in the function ``stack[scope_index]`` can have
        put ``written`` in the graph being recorded (in a loop around the write, anything in that loop)."""
        fn = stack[scope_index]
        direct = reached_tensor(written)
        root = direct
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if isinstance(fn, cst.FunctionDef) and isinstance(root, cst.Name) \
                and root.value in {p.name.value for p in all_params(fn.params)} - {"self", "cls"}:
            return True  # one of the function's inputs (a method's self and cls are not)
        owners = self._owners(written, list(stack[:top + 1]))
        order, events, _ = self._events(list(stack[:scope_index + 1]))
        at = order.get(id(stack[top]))
        if at is None:
            return False
        # A backward() run on every path to the write frees what was recorded before it (and in the passes before
        # of a loop around both); only what follows it, or loops between it and the write, can have saved the tensor.
        freed = freeing_backward(stack, scope_index, top, self._frees)
        start, block = (order.get(id(freed[0]), -1), freed[1]) if freed is not None else (-1, scope_index)
        loops = {id(node) for node in stack[block + 1:top] if isinstance(node, (cst.For, cst.While))}
        if any(what == "forward" and start < position < at and any(o == name or o.startswith(name + ".") for o in owners)
               for position, what, _, name in events):
            return True
        name = dotted_name(direct)
        return name is not None and any(start < position < at or loops & set(around)
                                        for position, around in self._reads(fn, order).get(name, []))

    def _reads(self, scope: cst.CSTNode, order: Dict[int, int]) -> Dict[str, List[Use]]:
        """Each dotted name read in ``scope`` in a way that can record it (not a target, not its metadata)."""
        memo = self._uses.get(id(scope))
        if memo is not None:
            return memo
        found: Dict[str, List[Use]] = {}
        pending: List[Tuple[cst.CSTNode, Optional[cst.CSTNode], Tuple[int, ...]]] = [(scope, None, ())]
        while pending:
            node, parent, loops = pending.pop()
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, (cst.Name, cst.Attribute)) and not not_recorded(node, parent):
                name = dotted_name(node)
                if name is not None:
                    found.setdefault(name, []).append((order.get(id(node), -1), loops))
            inner = loops + (id(node),) if isinstance(node, (cst.For, cst.While)) else loops
            pending.extend((child, node, inner) for child in children(node))
        self._uses[id(scope)] = found
        return found

    # --- the written tensor's module --------------------------------------------------------------

    def _owners(self, written: cst.BaseExpression, stack: List[cst.CSTNode], depth: int = 0,
                iterated: Optional[set] = None) -> List[str]:
        """Dotted names the written tensor is reached through: ``model.fc.weight`` for
        ``model.fc.weight.data``; ``model`` for ``p`` of ``for p in model.parameters()`` (added to ``iterated``:
        a value with parameters is a module, whatever kind the model gives it)."""
        expr = reached_tensor(written)
        name = dotted_name(expr)
        if name is None:
            return []
        if not isinstance(expr, cst.Name) or depth > 2:
            return [name]
        found: List[str] = []
        for binding in self.model.reaching(expr, stack):
            value = binding.value
            if binding.how == "iter" and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in _OWN_TENSORS:
                owner = dotted_name(value.func.value)
                if owner is None:
                    return []
                found.append(owner)
                if iterated is not None and value.func.attr.value in ("parameters", "named_parameters"):
                    iterated.add(owner)
            elif binding.how == "assign" and not binding.path and isinstance(value, cst.BaseExpression):
                inner = self._owners(value, stack, depth + 1, iterated)
                if not inner:
                    return []
                found.extend(inner)
            else:
                return []  # a parameter, an unpacked pair, a loop over something else: no link
        return found

    # --- the scope's forwards and backwards -------------------------------------------------------

    def _events(self, outer: List[cst.CSTNode]) -> Scope:
        """Every node of the scope ``outer[-1]`` numbered in reading order (nested defs, classes and lambdas
        left out: they run elsewhere), its forward and backward calls in that order, and each node's parent."""
        scope = outer[-1]
        memo = self._scopes.get(id(scope))
        if memo is not None:
            return memo
        order: Dict[int, int] = {}
        events: List[Event] = []
        parents: Parents = {}
        path: List[cst.CSTNode] = outer[:-1]
        pending: List[Optional[cst.CSTNode]] = [scope]
        modes: List[Optional[bool]] = []  # the grad modes of the with blocks around, innermost last
        while pending:
            node = pending.pop()
            if node is None:
                if isinstance(path.pop(), cst.With):
                    modes.pop()
                continue
            order[id(node)] = len(order)
            parents[id(node)] = path[-1] if path else None
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Assign):
                events.extend((len(order), "bind", node, target.target.value) for target in node.targets
                              if isinstance(target.target, cst.Name) and target.target.value not in mentioned_keys(node.value))
            if isinstance(node, cst.Call):
                recording_off = next((mode is False for mode in reversed(modes) if mode is not None), False)
                self._classify(node, path + [node], recording_off, len(order), events)
            if isinstance(node, cst.With):
                modes.append(self._grad_mode(node))
            path.append(node)
            pending.append(None)
            pending.extend(reversed(list(children(node))))
        self._scopes[id(scope)] = (order, events, parents)
        return order, events, parents

    def _classify(self, call: cst.Call, stack: List[cst.CSTNode], recording_off: bool, position: int,
                  events: List[Event]) -> None:
        func = call.func
        if self.model.is_backward(call):
            if self._frees(call):
                events.append((position, "backward", call, ""))
            return
        if recording_off:
            return
        callee = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        name = dotted_name(callee)
        if name is None or not isinstance(callee, (cst.Name, cst.Attribute)):
            return
        kind = self.model.value_of(callee, stack).kind
        if kind is Kind.MODULE:
            events.append((position, "forward", call, name))
        elif kind is Kind.UNKNOWN:
            events.append((position, "call", call, name))
            events.extend((position, what, call, inner) for what, inner in self._method_forwards(callee, stack))

    def _frees(self, call: cst.Call) -> bool:
        """A ``backward()`` without ``retain_graph=True``: it frees the graph it backpropagates."""
        return self.model.is_backward(call) and not any(
            arg.keyword is not None and arg.keyword.value == "retain_graph"
            and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")) for arg in call.args)

    def _method_forwards(self, callee: cst.BaseExpression, stack: List[cst.CSTNode]) -> List[Tuple[str, str]]:
        """For ``self.m(...)`` in a method, where ``m`` is one undecorated method of the same class: the forwards
        (and calls) of ``self.<...>`` values that ``m`` runs and no later ``backward()`` in it frees, as
        (what, name) events of the call (``predictions = self.compute_forward(batch)`` runs
        ``self.modules.generator(x)``: ``self`` is the same object in both)."""
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name) and callee.value.value == "self"):
            return []
        at = max((i for i, node in enumerate(stack) if isinstance(node, cst.FunctionDef)), default=0)
        cls = stack[at - 2] if at >= 2 else None
        if not isinstance(cls, cst.ClassDef) or stack[at - 1] is not cls.body:
            return []
        methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == callee.attr.value]
        if len(methods) != 1 or methods[0].decorators or id(methods[0]) in self._busy:
            return []  # a property, a static method, a grad-mode decorator, a recursive call: not followed
        self._busy.add(id(methods[0]))
        try:
            _, inner, _ = self._events(list(stack[:at]) + [methods[0]])
        finally:
            self._busy.discard(id(methods[0]))
        live: Dict[str, str] = {}
        for _, what, _, name in inner:
            if what == "backward":
                live.clear()
            elif what in ("forward", "call") and name.startswith("self."):
                live[name] = what
        return [(what, name) for name, what in live.items()]


def reached_tensor(written: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor a write reaches: ``model.fc.weight`` for ``model.fc.weight.data[0]`` or ``....view(-1)``."""
    expr = written
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_TENSOR:
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            expr = expr.value
        else:
            return expr


def not_recorded(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    """A name in a target position, part of a longer chain, or whose metadata only is read."""
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return parent.attr.value in _NOT_RECORDED
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        return True
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return True
    return isinstance(parent, cst.Attribute) and parent.attr is node


def _loss_of(backward: cst.CSTNode) -> Optional[str]:
    """``loss`` for ``loss.backward()`` or ``torch.autograd.backward(loss)``."""
    if not isinstance(backward, cst.Call):
        return None
    func = backward.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        target = func.value
    elif backward.args:
        target = backward.args[0].value
    else:
        return None
    return target.value if isinstance(target, cst.Name) else None
