"""Across modules: whether nothing a project function or method returns requires grad, and whether a project
module class holds no parameter (``holds_no_parameters``: calling it then gives what its inputs give).

The summary of the function (``ng``, semantic/grad_returns.py) lists the names that answer rests on as
written in its module: each grad-mode context or decorator must be torch's (``torch.no_grad``,
``inference_mode``, ``set_grad_enabled``) and each namespace of a function called torch's own
(``torch``, ``torch.nn.functional``...), as the module's imports resolve them.
"""

from __future__ import annotations

from typing import Any, List, Optional

from .project_kinds import evaluate
from .project_names import Ctx, class_kind, class_summary, instance, lookup, symbol_in
from .project_store import ProjectStore
from .vocabulary import NO_GRAD_CONTEXTS, PARAMETERLESS_LAYERS, SET_GRAD_ENABLED

_OFF = NO_GRAD_CONTEXTS | SET_GRAD_ENABLED
_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft"})


def returns_without_grad(store: ProjectStore, qualified: str) -> bool:
    """``qualified`` (a project function or method) returns only values that do not require grad."""
    sym = lookup(store, qualified)
    if sym is None or sym[0] not in ("def", "method"):
        return False
    module = sym[2]
    fn = module.summary["functions"][sym[3]] if sym[0] == "def" else \
        module.summary["classes"][sym[3]]["methods"][sym[4]]
    names = fn.get("ng")
    if names is None:
        return False
    ctx = Ctx(store, module)
    for name, role in names:
        found = symbol_in(ctx, name)
        target = found[1] if found is not None and found[0] == "external" else None
        if target not in (_OFF if role == "off" else _NAMESPACES):
            return False
    return True


_NN_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def parameterless_layer(qualified: str) -> bool:
    """A ``torch.nn`` layer that never holds a parameter (vocabulary.py)."""
    head, _, last = qualified.rpartition(".")
    return head.startswith("torch.nn") and last in PARAMETERLESS_LAYERS


def holds_no_parameters(store: ProjectStore, qualified: str) -> bool:
    """The class (of the project, or a parameterless ``torch.nn`` layer) holds no parameter: its bases are
    ``nn.Module`` or such classes, every ``self.x = ...`` is a plain value (a number, a literal, a tensor made
    here, a parameter with a plain default), and nothing else adds one (held_parameters.py)."""
    return bool(store.memoised(("noparams", qualified), lambda: _holds_none(store, qualified)))


def _holds_none(store: ProjectStore, qualified: str) -> bool:
    sym = lookup(store, qualified)
    if sym is not None and sym[0] == "external":
        return parameterless_layer(sym[1])
    summary = class_summary(sym)
    if summary is None or summary.get("holds", True) or summary.get("made") is None or "factory" in summary:
        return False
    ctx = Ctx(store, sym[2], cls=sym[1], receiver=instance(store, sym[1]))
    for base in summary["bases"]:
        found = symbol_in(ctx, base[1]) if base[0] == "name" else None
        if found is None or found[0] not in ("class", "external") or \
                not (found[1] in _NN_MODULE or holds_no_parameters(store, found[1])):
            return False
    if not all(_made_ok(store, symbol_in(ctx, name)) for name in summary["made"]):
        return False
    defaulted = set(summary.get("dflt", ()))
    return all(_plain(ctx, fact, attr in defaulted) for attr, facts in summary["attrs"].items() for fact in facts)


_NOT_LAYERS = frozenset("builtins numpy math collections typing enum dataclasses functools itertools".split())


def _made_ok(store: ProjectStore, found: Optional[tuple]) -> bool:
    """A class its code calls cannot be a layer with parameters: a project class that is not a module or holds
    none, a parameterless ``torch.nn`` layer, a class of torch outside ``torch.nn`` or of the standard library."""
    if found is None:
        return False
    if found[0] == "class":
        return class_kind(store, found[1]) != "module" or holds_no_parameters(store, found[1])
    if found[0] != "external":
        return False
    root = found[1].split(".")[0]
    return parameterless_layer(found[1]) or root in _NOT_LAYERS or \
        root == "torch" and not found[1].startswith("torch.nn.")


def _plain(ctx: Ctx, fact: List[Any], defaulted: bool) -> bool:
    """What ``self.x = <fact>`` holds is not a module, a parameter or a tensor handed in from outside."""
    if fact[0] == "any":
        return all(_plain(ctx, sub, defaulted) for sub in fact[1])
    if fact[0] == "arg" and not fact[2] and fact[3] is None:
        return defaulted  # an unannotated parameter: what its default is
    if fact[0] == "list":
        return all(_plain(ctx, sub, False) for sub in fact[1])  # a tuple of sizes
    kind = evaluate(ctx, fact)[0]
    if kind == "tensor":
        return not _handed_in(ctx, fact)
    return kind in ("number", "none") or kind == "not-tensor" and fact[0] == "k"


def _handed_in(ctx: Ctx, fact: Any) -> bool:
    """A parameter annotated as a tensor, or a parameter of a module, goes into the value: it may require grad.
    (An unannotated parameter computed with, ``base ** torch.arange(dim)``, is taken for the number it is meant
    to be; one stored as it is must have a plain default: ``_plain``.)"""
    if isinstance(fact, dict):
        return any(_handed_in(ctx, sub) for sub in fact.values())  # a call's keyword arguments
    if not isinstance(fact, list) or not fact:
        return False
    if not isinstance(fact[0], str):
        return any(_handed_in(ctx, sub) for sub in fact)  # a call's arguments
    if fact[0] in ("arg", "self", "attr") and evaluate(ctx, fact)[0] in ("tensor", "parameter"):
        return fact[0] == "arg" or evaluate(ctx, fact)[0] == "parameter"
    return any(_handed_in(ctx, sub) for sub in fact[1:])
