"""Autograd context: whether a graph that saved a tensor is live at a statement.

A write that bypasses autograd's version counter (``p.data.add_()``) only corrupts gradients where a graph that
saved the tensor can still be backpropagated. Each answer rests on evidence, one way or the other; where there is
none the context is *unknown* (not live: a diagnostic must not say a graph is live without evidence for it).

Evidence that a graph is live (``GraphContext.live``):

- the enclosing function is a module's ``forward`` (or a method only called from one) and something before
  the write in it, after any ``backward()`` it runs on every path to the write, uses the tensor (``used_before``:
  a write before every use changes what this forward computes, no saved value), or a hook (registered with
  ``register_*hook``, or named as a forward/backward hook; not a forward pre-hook's write to the hooked module's
  own tensor before any use of it: ``pre_hooks.py``);
- the write runs after a forward of the written tensor's module and before the ``backward()`` of that
  step (``training_order.py``; the context's ``evidence`` holds the two calls).

Evidence that no graph can be live, innermost first:

- the written tensor is a ``.grad`` buffer (``p.grad.data.zero_()``);
- the write is an argument of ``torch.nn.init.*`` (which runs under ``no_grad``);
- a ``with torch.no_grad()`` / ``torch.inference_mode()`` / ``torch.set_grad_enabled(False)`` block, or a function
  decorated with one (``torch.enable_grad()`` / ``set_grad_enabled(True)`` turn recording on again: then only the
  training order can tell);
- the enclosing function: ``__init__``, an initialiser (``reset_parameters``, ``_init_weights``, ``init_*``...;
  never a test function, whatever its name), a function passed to ``Module.apply`` (or timm's ``named_apply``), a
  weight loading or conversion helper (``load_*``, ``convert_*``, ``fuse``, ``merge_*``, a state-dict hook...),
  the ``step()`` of an ``Optimizer`` subclass; a method whose every call in its class (``self.m(...)``), and a
  nested function whose every call in its enclosing function, is graph-free.

API (``SemanticModel.autograd``): ``context(stack, written=None) -> GraphContext`` for the node at the top of
``stack`` (a rule's ``context.stack``); ``written``: the tensor expression written, if any (the training order
needs it to link the write to a forward).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..imports import dotted_name
from ..walk import children, nodes_of_type
from .pre_hooks import PreHooks, name_words
from .training_order import TrainingOrder, reached_tensor
from .vocabulary import NO_GRAD_CONTEXTS, SET_GRAD_ENABLED


@dataclass(frozen=True)
class GraphContext:
    """``live``: evidence says a graph is live here. ``kind``: forward, hook, step (live); no_grad, grad, nn.init,
    init, apply, load, optimizer (graph-free); unknown (no evidence either way). ``where``: a phrase for messages.
    ``evidence``: for ``step``, the forward call and the backward call around it. ``from_callers``: the context is
    the one of every call of the enclosing function in its class or module, not of a block or decorator around
    the code itself (a caller in another file may differ)."""

    live: bool
    kind: str
    where: str
    evidence: Tuple[cst.CSTNode, ...] = ()
    from_callers: bool = False

    @property
    def graph_free(self) -> bool:
        return not self.live and self.kind != "unknown"


UNKNOWN = GraphContext(False, "unknown", "where nothing shows whether a graph is live")
FORWARD = GraphContext(True, "forward", "in `forward`, where a graph is being recorded")
UNSAVED = GraphContext(False, "unknown", "in a forward, before anything in it uses the tensor")
HOOK = GraphContext(True, "hook", "in a hook, which runs while a graph is being recorded")
PRE_HOOK = GraphContext(False, "unknown", "in a forward pre-hook, before the hooked module's forward uses it")
NO_GRAD = GraphContext(False, "no_grad", "under `torch.no_grad()`")
GRAD = GraphContext(False, "grad", "on a `.grad` buffer")
NN_INIT = GraphContext(False, "nn.init", "in `nn.init`, which runs under no_grad")
APPLY = GraphContext(False, "apply", "in a function passed to `Module.apply`")
OPTIMIZER = GraphContext(False, "optimizer", "in an optimizer's `step()`")

_NO_GRAD = NO_GRAD_CONTEXTS
_ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
_SET_GRAD = SET_GRAD_ENABLED
# Words of a function's name (split at `_`) that say it initialises, loads or converts weights.
_INIT_WORDS = frozenset({"init", "initialize", "initialise", "initialization", "initialisation", "reinit",
                         "reinitialize", "initialized"})
_LOAD_WORDS = frozenset({"load", "loading", "unload", "convert", "conversion", "fuse", "fused", "unfuse",
                         "reparameterize", "reparameterise", "reparam", "deploy", "merge", "unmerge", "freeze",
                         "unfreeze", "quantize", "dequantize", "resize", "resized", "setstate"})
_LIVE_WORDS = frozenset({"hidden", "state", "states", "forward", "hook", "step", "backward", "train", "loss"})
_STATE_DICT_WORDS = frozenset({"load", "save", "dict", "checkpoint"})
_APPLY = re.compile(r"(?:^|\.)(?:named_)?apply$")


def _named(name: str) -> Optional[GraphContext]:
    """The context a function's name gives, if any."""
    if name == "__init__":
        return GraphContext(False, "init", "in `__init__`, before any forward")
    words = name_words(name)
    if name == "forward":  # (not ``__call__``: initialisers and transforms define it too)
        return FORWARD
    if "hook" in words:
        if words & _STATE_DICT_WORDS:  # _load_state_dict_pre_hook: runs in load_state_dict, not in a forward
            return GraphContext(False, "load", f"in the state-dict hook `{name}`")
        return HOOK
    if name.startswith("test") or words & _LIVE_WORDS:  # a test is not an initialiser for its name
        return None
    if words & _INIT_WORDS or "reset" in words and any(w.startswith("param") for w in words):
        return GraphContext(False, "init", f"in the initialiser `{name}`")
    if words & _LOAD_WORDS:
        return GraphContext(False, "load", f"in the weight loading/conversion helper `{name}`")
    return None


class AutogradContexts:
    """Answers ``context(stack, written)``; each function's context is computed once."""

    def __init__(self, model) -> None:
        self.model, self.pre_hooks = model, PreHooks(model.module)
        self.order = TrainingOrder(model, self._recording)
        self._functions: Dict[int, Optional[GraphContext]] = {}
        self._applied: Optional[Set[str]] = None
        self._hooked: Set[str] = set()
        self._refs: Dict[int, Dict[str, List[Tuple[bool, List[cst.CSTNode]]]]] = {}
        self._off_by_callers: Dict[int, bool] = {}
        self._attr_counts: Optional[Dict[str, int]] = None

    # --- the query ----------------------------------------------------------------------------------

    def context(self, stack: Sequence[cst.CSTNode], written: Optional[cst.BaseExpression] = None) -> GraphContext:
        if written is not None and _is_grad(written):
            return GRAD
        return self._at(list(stack), len(stack) - 1, written)

    def _at(self, stack: List[cst.CSTNode], top: int, written: Optional[cst.BaseExpression] = None) -> GraphContext:
        """The context of ``stack[top]``, looking outward from it."""
        recording = False  # inside enable_grad(): an outer no_grad says nothing
        for i in range(top - 1, -1, -1):
            node, child = stack[i], stack[i + 1]
            if isinstance(node, cst.Call) and isinstance(child, cst.Arg) and self._is_nn_init(node):
                return NN_INIT
            if isinstance(node, cst.With) and child is node.body and not recording:
                mode = self._with_mode(node)
                if mode is not None and mode.kind == "no_grad":
                    return mode
                recording = mode is not None
            if isinstance(node, cst.Lambda):
                return UNKNOWN
            if isinstance(node, cst.FunctionDef) and child is node.body:
                found = self._function(stack, i)
                if found.kind == "hook" and self.pre_hooks.optimizer_step_hook(node.name.value):
                    found = UNKNOWN  # optimizer.register_step_post_hook(hook): runs in step(), after backward
                if recording and found.graph_free:
                    found = UNKNOWN
                if found.kind == "forward" and written is not None and not self._saved_before(stack, top, i, written):
                    return UNSAVED  # before anything in the forward uses it: the write shapes what it computes
                if found.kind == "hook" and written is not None and self.pre_hooks.unsaved(stack, i, top, written):
                    return PRE_HOOK  # the hooked module's own tensor, before its forward runs
                return found if found is not UNKNOWN else self._ordered(stack, top, i, written)
        return self._ordered(stack, top, 0, written) if stack and isinstance(stack[0], cst.Module) else UNKNOWN

    def grad_off(self, stack: Sequence[cst.CSTNode], top: Optional[int] = None) -> bool:
        """Grad mode is off at ``stack[top]`` (the last node by default): a ``with`` block or a decorator turns it
        off, or the function around it is private (``_name``; or nested in a function), called in its class
        (``self._name(...)``), module or enclosing function only, at least once, and every call is where grad
        mode is off (``_regression_prediction``, called only from a ``no_grad`` method)."""
        top = len(stack) - 1 if top is None else top
        for i in range(top - 1, -1, -1):
            node, child = stack[i], stack[i + 1]
            if isinstance(node, cst.With) and child is node.body:
                mode = self._with_mode(node)
                if mode is not None:
                    return mode.kind == "no_grad"
            elif isinstance(node, cst.Lambda):
                return False
            elif isinstance(node, cst.FunctionDef) and child is node.body:
                modes = [m for m in (self._grad_mode(d.decorator) for d in node.decorators) if m is not None]
                if modes:
                    return modes[0].kind == "no_grad"
                memo = self._off_by_callers.get(id(node))
                if memo is None:
                    self._off_by_callers[id(node)] = False  # busy: a cycle of calls proves nothing
                    memo = self._off_by_callers[id(node)] = self._callers_off(list(stack), i)
                return memo
        return False

    def _callers_off(self, stack: List[cst.CSTNode], index: int) -> bool:
        fn: cst.FunctionDef = stack[index]  # type: ignore[assignment]
        name = fn.name.value
        owner = stack[index - 2] if index >= 2 and isinstance(stack[index - 1], cst.IndentedBlock) else None
        enclosing = next((i for i in range(index - 1, -1, -1) if isinstance(stack[i], cst.FunctionDef)), None)
        if enclosing is not None and not isinstance(owner, cst.ClassDef):
            uses = self._references(stack[:enclosing + 1], stack[enclosing]).get(name, [])
        elif not name.startswith("_") or name.startswith("__"):
            return False  # public: callers in other files are expected
        elif isinstance(owner, cst.ClassDef):
            uses = self._references(stack[:index - 1], owner).get(f"self.{name}", [])
            if len(uses) != self._attribute_count(name):
                return False  # `obj._name` elsewhere in the file: a caller not followed
        elif index == 1 and isinstance(stack[0], cst.Module):
            uses = self._references(stack[:1], stack[0]).get(name, [])
        else:
            return False
        return bool(uses) and all(is_call and self.grad_off(path) for is_call, path in uses)

    def _attribute_count(self, attr: str) -> int:
        """How many ``x.<attr>`` the file has (any receiver)."""
        if self._attr_counts is None:
            self._attr_counts = {}
            for node in nodes_of_type(self.model.module, cst.Attribute):
                self._attr_counts[node.attr.value] = self._attr_counts.get(node.attr.value, 0) + 1
        return self._attr_counts.get(attr, 0)

    def _saved_before(self, stack: List[cst.CSTNode], top: int, index: int, written: cst.BaseExpression) -> bool:
        """Whether the forward (or the method called from one) at ``stack[index]`` uses ``written`` before the
        write at ``stack[top]``; for a method and a ``self.`` tensor, also whether a forward calling it used the
        tensor before the call (``self.proj(x); self._setup()``)."""
        if self.order.used_before(stack, top, index, written):
            return True
        fn = stack[index]
        name = dotted_name(reached_tensor(written)) or ""
        owner = stack[index - 2] if index >= 2 else None
        if not isinstance(fn, cst.FunctionDef) or fn.name.value == "forward" or not name.startswith("self.") \
                or not isinstance(owner, cst.ClassDef):
            return False
        for is_call, path in self._references(stack[:index - 1], owner).get(f"self.{fn.name.value}", []):
            caller = max((i for i, node in enumerate(path) if isinstance(node, cst.FunctionDef)), default=None)
            if is_call and caller is not None and self._at(path, len(path) - 1).kind == "forward" \
                    and self.order.used_before(path, len(path) - 1, caller, written):
                return True
        return False

    def _ordered(self, stack: List[cst.CSTNode], top: int, scope: int,
                 written: Optional[cst.BaseExpression]) -> GraphContext:
        """Live where the write runs between a forward of its module and that step's backward."""
        around = self.order.live_between(stack, top, scope, written)
        if around is None:
            return UNKNOWN
        return GraphContext(True, "step", "between a forward and its backward", around)

    # --- grad mode ------------------------------------------------------------------------------------

    def _qualified(self, expr: cst.BaseExpression) -> str:
        return self.model.imports.qualified_name(expr) or dotted_name(expr) or ""

    def _grad_mode(self, expr: cst.BaseExpression) -> Optional[GraphContext]:
        """``torch.no_grad()`` (or the bare decorator) -> NO_GRAD, ``enable_grad()`` -> live, else None."""
        call = expr if isinstance(expr, cst.Call) else None
        q = self._qualified(call.func if call is not None else expr)
        if q in _NO_GRAD:
            if q.endswith("inference_mode") and call is not None and call.args \
                    and _false(call.args[0].value):
                return GraphContext(False, "unknown", "under `inference_mode(False)`")
            return NO_GRAD
        if q in _ENABLE_GRAD:
            return GraphContext(False, "unknown", "under `torch.enable_grad()`")
        if q in _SET_GRAD and call is not None and call.args:
            if _false(call.args[0].value):
                return GraphContext(False, "no_grad", "under `torch.set_grad_enabled(False)`")
            if isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "True":
                return GraphContext(False, "unknown", "under `torch.set_grad_enabled(True)`")
        return None

    def _with_mode(self, node: cst.With) -> Optional[GraphContext]:
        for item in node.items:
            mode = self._grad_mode(item.item)
            if mode is not None:
                return mode
        return None

    def _recording(self, node: cst.With) -> Optional[bool]:
        """Whether a with block turns recording off (False), on again (True), or neither (None)."""
        mode = self._with_mode(node)
        return None if mode is None else mode.kind != "no_grad"

    def _is_nn_init(self, call: cst.Call) -> bool:
        return self._qualified(call.func).startswith("torch.nn.init.")

    # --- functions --------------------------------------------------------------------------------------

    def _function(self, stack: List[cst.CSTNode], index: int) -> GraphContext:
        fn = stack[index]
        memo = self._functions.get(id(fn))
        if memo is None and id(fn) not in self._functions:
            self._functions[id(fn)] = None  # busy: a cycle of calls gives no evidence
            memo = self._functions[id(fn)] = self._function_context(stack, index)
        return memo if memo is not None else UNKNOWN

    def _function_context(self, stack: List[cst.CSTNode], index: int) -> GraphContext:
        fn: cst.FunctionDef = stack[index]  # type: ignore[assignment]
        for decorator in fn.decorators:
            mode = self._grad_mode(decorator.decorator)
            if mode is not None:
                return mode
        name = fn.name.value
        named = _named(name)
        if named is not None:
            return named
        owner = stack[index - 2] if index >= 2 and isinstance(stack[index - 1], cst.IndentedBlock) else None
        if isinstance(owner, cst.ClassDef) and name == "step" and self._is_optimizer_class(owner):
            return OPTIMIZER
        if name in self._applied_names():
            return APPLY
        if name in self._hooked:
            return HOOK
        if isinstance(owner, cst.ClassDef):
            return self._from_callers(stack[:index - 1], owner, f"self.{name}") or UNKNOWN
        enclosing = next((i for i in range(index - 1, -1, -1) if isinstance(stack[i], cst.FunctionDef)), None)
        if enclosing is not None:
            return self._from_callers(stack[:enclosing + 1], stack[enclosing], name) or UNKNOWN
        if index == 1 and isinstance(stack[0], cst.Module):  # a top-level function: its callers in the module
            return self._from_callers(stack[:1], stack[0], name) or UNKNOWN  # (YOLOv4's create_modules, from __init__)
        return UNKNOWN

    def _applied_names(self) -> Set[str]:
        """Names of functions passed to ``x.apply(f)`` / ``named_apply(f, m)`` (maybe in ``partial``) in this file;
        ``_hooked``: those passed to ``register_*hook*(f)`` (for the message)."""
        if self._applied is None:
            self._applied = set()
            for node in nodes_of_type(self.model.module, cst.Call):
                func = dotted_name(node.func) or ""
                applied = _APPLY.search(func)
                last = func.rsplit(".", 1)[-1]
                if not node.args or not applied and ("hook" not in last or "state_dict" in last):
                    continue
                arg = node.args[0].value
                if isinstance(arg, cst.Call) and arg.args and (dotted_name(arg.func) or "").endswith("partial"):
                    arg = arg.args[0].value
                name = dotted_name(arg)
                if name is not None:
                    (self._applied if applied else self._hooked).add(name.rsplit(".", 1)[-1])
        return self._applied

    def _is_optimizer_class(self, cls: cst.ClassDef) -> bool:
        for base in cls.bases:
            q = self._qualified(base.value)
            if q.startswith("torch.optim.") and "lr_scheduler" not in q or q.rsplit(".", 1)[-1] == "Optimizer":
                return True
        return False

    def _from_callers(self, outer: List[cst.CSTNode], scope: cst.CSTNode, callee: str) -> Optional[GraphContext]:
        """Graph-free when ``callee`` (``self.m`` in a class, a name in a function) is only ever called in
        ``scope`` (no other use: a hook registration passes it), at least once, and every call is graph-free;
        live when one of those calls is in a forward or a hook."""
        uses = self._references(outer, scope).get(callee, [])
        if not uses or any(not is_call for is_call, _ in uses):
            return None  # never called here, or referenced otherwise: passed somewhere, stored, rebound
        contexts = [self._at(path, len(path) - 1) for _, path in uses]
        live = next((c for c in contexts if c.live and c.kind in ("forward", "hook")), None)
        if live is not None:
            return GraphContext(True, live.kind, f"in `{callee}`, called {live.where}", from_callers=True)
        if any(not c.graph_free for c in contexts):
            return None
        return GraphContext(False, contexts[0].kind, f"in `{callee}`, called only {contexts[0].where}",
                            from_callers=True)

    def _references(self, outer: List[cst.CSTNode], scope: cst.CSTNode) -> Dict[str, List[Tuple[bool, List[cst.CSTNode]]]]:
        """Every use in ``scope`` of ``self.<name>`` (a class) or of a plain name (a function), once per scope:
        (whether it is the called function of a call, the path to the call or the use)."""
        found = self._refs.get(id(scope))
        if found is not None:
            return found
        found = self._refs[id(scope)] = {}
        in_class = isinstance(scope, cst.ClassDef)
        path: List[cst.CSTNode] = list(outer)
        pending: List[Optional[cst.CSTNode]] = [scope]
        while pending:
            node = pending.pop()
            if node is None:
                path.pop()
                continue
            key = None
            if in_class and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                    and node.value.value == "self":
                key = "self." + node.attr.value
            elif not in_class and isinstance(node, cst.Name):
                parent = path[-1]
                if not (isinstance(parent, cst.Attribute) and parent.attr is node
                        or isinstance(parent, cst.FunctionDef) and parent.name is node):
                    key = node.value
            if key is not None:
                parent = path[-1]
                is_call = isinstance(parent, cst.Call) and parent.func is node
                found.setdefault(key, []).append((is_call, list(path) if is_call else []))
                if in_class:
                    continue
            path.append(node)
            pending.append(None)
            pending.extend(reversed(list(children(node))))
        return found


def _false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _is_grad(expr: cst.BaseExpression) -> bool:
    """``p.grad``, ``p._grad``, ``p.grad[...]`` (the tensor written is a gradient buffer)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return isinstance(expr, cst.Attribute) and expr.attr.value in ("grad", "_grad")
