"""Forward pre-hooks: evidence that a write to the hooked module's own tensor comes before any use of it.

A forward pre-hook (``m.register_forward_pre_hook(hook)``) runs before ``m.forward``, while a graph is being
recorded, but before the module's forward has used its own parameters in this call. A write through ``.data``
to a tensor reached from the hook's first parameter (the hooked module: ``mod.weight``, ``getattr(mod, name)``,
``p`` of ``for p in mod.parameters()``; ``self.`` tensors too, for a hook ``self._h`` registered on ``self``)
that nothing in the hook used before the write changes what this call computes: backward then differentiates
exactly that (``TCL104-pre-hook-write-before-use``). That is evidence that no recorded graph saved the tensor,
unless the module runs twice in one forward (weight reuse): the pre-hook of the second call then writes what
the first call saved (``TCL104-pre-hook-second-call-corrupts``). The file shows that much where the module
the hook is registered on is called twice in one function (or in a loop, for a ``self.`` attribute); tied
weights (another module sharing the parameter and run before it) are not seen.

A forward hook, a backward hook, and a pre-hook writing anything else (a global, another module's tensor)
give no such evidence. API: ``PreHooks(module).unsaved(stack, index, top, written)``.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..imports import dotted_name
from ..walk import children, nodes_of_type
from .syntax import all_params
from .training_order import not_recorded, reached_tensor

_FORWARD_PRE = frozenset({"register_forward_pre_hook", "register_module_forward_pre_hook"})
# Module methods that read its structure, not run it: `for p in mod.parameters()`.
_STRUCTURE = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
                        "children", "named_children", "extra_repr", "state_dict"})
_ITERATED = {"parameters": (), "buffers": (), "named_parameters": ((1, 2),), "named_buffers": ((1, 2),)}
# (the registering method, its receiver, whether the hook was passed as `self.<name>`, positional partial args)
Registration = Tuple[str, str, bool, int]


def name_words(name: str) -> Set[str]:
    """The lower-cased words of a function's name, split at ``_`` and camel case."""
    return {w.lower() for w in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name) if w}


def _key(expr: cst.CSTNode) -> Optional[str]:
    """``mod.weight`` for a name or an attribute chain, ``getattr(mod, 'w')`` for a getattr call."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr" \
            and len(expr.args) >= 2:
        base = dotted_name(expr.args[0].value)
        return None if base is None else f"getattr({base}, {cst.Module([]).code_for_node(expr.args[1].value)})"
    return dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None


class PreHooks:
    """The file's hook registrations, read once; ``unsaved`` answers for one write."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._registrations: Optional[Dict[str, List[Registration]]] = None
        self._calls: Optional[Dict[str, int]] = None

    def unsaved(self, stack: Sequence[cst.CSTNode], index: int, top: int, written: cst.BaseExpression) -> bool:
        """The function ``stack[index]`` is a forward pre-hook, ``written`` is reached from the hooked module,
        nothing before the write in the hook uses it, and the module is not seen to run twice in one forward."""
        fn = stack[index]
        if not isinstance(fn, cst.FunctionDef):
            return False
        roots = self._module_roots(fn, isinstance(stack[index - 2], cst.ClassDef) if index >= 2 else False)
        if not roots:
            return False
        aliases = _aliases(fn)
        tensor = reached_tensor(written)
        if not _rooted(tensor, roots, aliases, 0):
            return False
        return not _used_before(fn, stack, top, tensor, roots, aliases)

    # --- which functions are forward pre-hooks, on what ---------------------------------------------------

    def _module_roots(self, fn: cst.FunctionDef, method: bool) -> Set[str]:
        """The names that hold the hooked module in ``fn``, if it is a forward pre-hook run once per forward."""
        registrations = self.registrations().get(fn.name.value, [])
        if registrations:
            if any(how not in _FORWARD_PRE or partial for how, _, _, partial in registrations):
                return set()
            if any(self._runs_twice(receiver) for _, receiver, _, _ in registrations):
                return set()  # a pre-hook of the second call writes what the first one saved
        elif not {"forward", "pre", "hook"} <= name_words(fn.name.value) or "backward" in name_words(fn.name.value):
            return set()
        params = [p.name.value for p in all_params(fn.params) if p.star not in ("*", "**")]
        if method and params and params[0] in ("self", "cls"):
            params = params[1:]
        roots = set(params[:1])
        if method and registrations and all(receiver == "self" and bound for _, receiver, bound, _ in registrations):
            roots.add("self")  # self.register_forward_pre_hook(self._renorm): self is the hooked module
        return roots

    def registrations(self) -> Dict[str, List[Registration]]:
        """Hook name -> how it is registered in this file (``x.register_*hook*(f)``)."""
        if self._registrations is None:
            self._registrations = {}
            for call in nodes_of_type(self.module, cst.Call):
                func = call.func
                if not isinstance(func, cst.Attribute) or not func.attr.value.startswith("register_") \
                        or "hook" not in func.attr.value or not call.args:
                    continue
                hook, partial = call.args[0].value, 0
                if isinstance(hook, cst.Call) and hook.args and (dotted_name(hook.func) or "").endswith("partial"):
                    partial = sum(1 for a in hook.args[1:] if a.keyword is None)
                    hook = hook.args[0].value
                name = dotted_name(hook)
                if name is not None:
                    self._registrations.setdefault(name.rsplit(".", 1)[-1], []).append(
                        (func.attr.value, dotted_name(func.value) or "", name.startswith("self."), partial))
        return self._registrations

    def optimizer_step_hook(self, name: str) -> bool:
        """``name`` is registered in this file, and only as an optimizer's step hook (``register_step_pre_hook``,
        ``register_step_post_hook``): it runs in ``optimizer.step()``, not while a forward records a graph."""
        found = self.registrations().get(name)
        return bool(found) and all(method.startswith("register_step_") for method, _, _, _ in found)

    def _runs_twice(self, receiver: str) -> bool:
        """The module the hook is registered on is called twice in one function of the file, or in a loop
        (an attribute of ``self``, the same module every pass)."""
        if self._calls is None:
            self._calls = {}
            for fn in nodes_of_type(self.module, cst.FunctionDef):
                counts: Dict[str, int] = {}
                pending: List[Tuple[cst.CSTNode, bool]] = [(fn.body, False)]
                while pending:
                    node, looped = pending.pop()
                    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                        continue
                    if isinstance(node, cst.Call):
                        name = dotted_name(node.func)
                        if name is not None:
                            counts[name] = counts.get(name, 0) + (2 if looped and name.startswith("self.") else 1)
                    inner = looped or isinstance(node, (cst.For, cst.While))
                    pending.extend((child, inner) for child in children(node))
                for name, count in counts.items():
                    self._calls[name] = max(self._calls.get(name, 0), count)
        return bool(receiver) and self._calls.get(receiver, 0) >= 2


def _aliases(fn: cst.FunctionDef) -> Dict[str, List[Tuple[cst.BaseExpression, tuple]]]:
    """Names bound in the hook to a tensor reference: ``weight = mod.weight`` (path ``None``), and loop
    targets over a module's tensors: ``for p in mod.parameters()`` (the iterated call and the target's path)."""
    found: Dict[str, List[Tuple[cst.BaseExpression, tuple]]] = {}
    for node in nodes_of_type(fn.body, cst.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            found.setdefault(node.targets[0].target.value, []).append((node.value, None))  # type: ignore[arg-type]
    for node in nodes_of_type(fn.body, cst.For):
        target = node.target
        if isinstance(target, cst.Name):
            found.setdefault(target.value, []).append((node.iter, ()))
        elif isinstance(target, cst.Tuple) and len(target.elements) == 2 \
                and isinstance(target.elements[1].value, cst.Name):
            found.setdefault(target.elements[1].value.value, []).append((node.iter, ((1, 2),)))
    return found


def _rooted(expr: cst.BaseExpression, roots: Set[str], aliases, depth: int) -> bool:
    """``expr`` is a tensor of the hooked module: reached from a root by attributes, subscripts, ``getattr``,
    or a name every binding in the hook gives such a tensor (or iterates the module's tensors)."""
    while True:
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call) and _key(expr) is not None and expr.args:
            expr = expr.args[0].value  # getattr(mod, name)
        else:
            break
    if not isinstance(expr, cst.Name):
        return False
    if expr.value in roots:
        return True
    bindings = aliases.get(expr.value, [])
    return bool(bindings) and depth < 3 and all(_bound_to_module(value, path, roots, aliases, depth)
                                                 for value, path in bindings)


def _bound_to_module(value: cst.BaseExpression, path, roots: Set[str], aliases, depth: int) -> bool:
    if path is None:
        return _key(value) is not None and _rooted(value, roots, aliases, depth + 1)
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and _ITERATED.get(value.func.attr.value) == path and _rooted(value.func.value, roots, aliases, depth + 1)


def _used_before(fn: cst.FunctionDef, stack: Sequence[cst.CSTNode], top: int, tensor: cst.BaseExpression,
                 roots: Set[str], aliases) -> bool:
    """Something in the hook before the write (or in a loop around it) can have recorded the tensor: a read of
    it or of a name bound to it, a call of the module or a part of it, the module passed to a call. Reads in
    the write's own statement build the value written, whose graph the write drops."""
    names = {_key(tensor)} - {None}
    for _ in range(3):  # weight = mod.weight; w = weight: the names of the same tensor
        for name, bindings in aliases.items():
            sources = {_key(value) for value, path in bindings if path is None}
            if name in names:
                names |= sources - {None}
            elif sources and sources <= names:
                names.add(name)
    statement = next((node for node in reversed(stack[:top + 1]) if isinstance(node, cst.BaseSmallStatement)), None)
    loops = {id(node) for node in stack[:top] if isinstance(node, (cst.For, cst.While))}
    passed = False
    pending: List[Tuple[cst.CSTNode, Optional[cst.CSTNode], bool]] = [(fn.body, fn, False)]
    while pending:
        node, parent, looped = pending.pop()
        if node is statement or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            passed = passed or node is statement
            continue
        if (not passed or looped) and _uses(node, parent, names, roots):
            return True
        if isinstance(node, cst.Call) and _key(node) is not None:
            continue  # getattr(mod, name): read as a whole, its arguments are no use of the module
        inner = looped or id(node) in loops
        kept = [c for c in children(node) if not (isinstance(node, cst.For) and c is node.target)]  # binds, no read
        pending.extend((child, node, inner) for child in reversed(kept))
    return False


def _uses(node: cst.CSTNode, parent: Optional[cst.CSTNode], names: Set[str], roots: Set[str]) -> bool:
    key = _key(node)
    if key is None or isinstance(parent, cst.Attribute) and parent.value is node and key not in names:
        return False  # mod.training, mod.weight.device: a longer chain is read (checked on its own)
    if key in names:
        pure = isinstance(parent, cst.Assign) and parent.value is node  # weight = mod.weight: a name, no op
        return not pure and not not_recorded(node, parent)
    head = key.split("(")[-1].split(",")[0].split(".")[0]
    if head not in roots:
        return False
    if isinstance(parent, cst.Call) and parent.func is node:  # mod(x), mod.fc(x); not mod.parameters()
        return key.rsplit(".", 1)[-1] not in _STRUCTURE and not key.rsplit(".", 1)[-1].startswith("register_")
    return isinstance(parent, cst.Arg) and (key in roots or any(n.startswith(key + ".") for n in names))
