"""Names and classes across a project: what a qualified name is, and what kind of class.

Names are looked up through each module's own bindings (summary ``symbols``), following
imports (relative ones made absolute from where the module lives), aliases (``Model =
DetectionModel``), submodules of packages and star imports, to the defining module, as the
import system would. A class is an ``nn.Module`` (or tensor, optimizer) subclass when a base
is, through any depth of project classes, and a known non-tensor when every base is known
and none is. Every step that can recurse across modules goes through ``ProjectStore.memoised``,
which bounds depth, cuts cycles and records the files each answer used.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import external
from .project_files import ModuleFile
from .project_store import ProjectStore

Value = Tuple[str, Optional[str]]  # (kind, qualified class of the instance, when known)
UNKNOWN: Value = ("unknown", None)


class Ctx:
    """Where a fact is evaluated: a module, the class of ``self`` (if in a method), and for a call
    being evaluated, the caller's arguments (facts, evaluated in the caller's context)."""

    __slots__ = ("store", "module", "cls", "receiver", "args", "kwargs", "params", "caller")

    def __init__(self, store: ProjectStore, module: ModuleFile, cls: Optional[str] = None,
                 receiver: Optional[Value] = None, args: Sequence[Any] = (), kwargs: Optional[Dict] = None,
                 params: Sequence[str] = (), caller: Optional["Ctx"] = None) -> None:
        self.store, self.module, self.cls, self.receiver = store, module, cls, receiver
        self.args, self.kwargs, self.params, self.caller = args, kwargs or {}, params, caller


# --- names ----------------------------------------------------------------------------------------

def lookup(store: ProjectStore, qualified: str) -> Optional[tuple]:
    """``(what, defining name, module, ...)`` for a qualified name; ``("external", name)`` outside."""
    return store.memoised(("lookup", qualified), lambda: _lookup(store, qualified))


def _lookup(store: ProjectStore, qualified: str) -> Optional[tuple]:
    parts = qualified.split(".")
    top = store.module(parts[0])
    return walk(store, top, parts[1:]) if top is not None else ("external", qualified)


def walk(store: ProjectStore, current: ModuleFile, parts: Sequence[str]) -> Optional[tuple]:
    """Attributes ``parts`` of a module, as the import system finds them: a name bound in the module
    wins over a submodule of the same name."""
    for i, name in enumerate(parts):
        if name not in current.summary["symbols"] and current.is_package:
            sub = store.module(f"{current.name}.{name}")
            if sub is not None:
                current = sub
                continue
        return member(store, current, name, parts[i + 1:])
    return ("module", current.name, current)


def member(store: ProjectStore, module: ModuleFile, name: str, rest: Sequence[str]) -> Optional[tuple]:
    """What ``name`` (then attributes ``rest``) means in ``module``."""
    summary = module.summary
    bindings = summary["symbols"].get(name)
    if bindings:
        kinds = {b[0] for b in bindings}
        if len(bindings) > 1 and len(kinds) > 1 or (kinds == {"import"} and len({b[1] for b in bindings}) > 1):
            return None  # bound to different things (a try/except import fallback): unknown
        binding = bindings[-1]
        if binding[0] == "import":
            target = module.absolute(binding[1])
            if target == f"{module.name}.{name}":  # ``from . import sub`` in the package itself
                sub = store.module(target)
                return walk(store, sub, rest) if sub is not None else None
            return lookup(store, ".".join([target, *rest])) if target else None
        qualified = f"{module.name}.{name}"
        if binding[0] == "class":
            if not rest:
                return ("class", qualified, module, name)
            methods = summary["classes"][name]["methods"]
            return ("method", f"{qualified}.{rest[0]}", module, name, rest[0]) \
                if len(rest) == 1 and rest[0] in methods else None
        if binding[0] == "value" and binding[1][0] == "name":  # an alias: ``Model = DetectionModel``
            alias = ".".join([binding[1][1], *rest])
            return store.memoised(("alias", module.name, alias), lambda: symbol_in(Ctx(store, module), alias))
        if rest:
            return None
        return (binding[0], qualified, module, name)  # "def" or "value"
    if module.is_package and store.module(f"{module.name}.{name}") is not None:
        return lookup(store, ".".join([module.name, name, *rest]))
    for star in summary["star"]:
        target = module.absolute(star)
        starred = store.module(target) if target else None
        if starred is not None and starred.name != module.name:
            found = store.memoised(("member", starred.name, name), lambda: member(store, starred, name, ()))
            if found is not None:
                return lookup(store, ".".join([found[1], *rest]))
    return None


def symbol_in(ctx: Ctx, dotted: str) -> Optional[tuple]:
    """A dotted name as written in ``ctx.module`` (``@target``: a function-local import)."""
    if dotted.startswith("@"):
        target = ctx.module.absolute(dotted[1:])
        return lookup(ctx.store, target) if target else None
    head, _, rest = dotted.partition(".")
    found = member(ctx.store, ctx.module, head, rest.split(".") if rest else ())
    if found is None and head in external.BUILTIN_NAMES and head not in ctx.module.summary["symbols"]:
        return ("external", f"builtins.{dotted}")
    return found


def class_summary(sym: Optional[tuple]) -> Optional[Dict[str, Any]]:
    return sym[2].summary["classes"].get(sym[3]) if sym is not None and sym[0] == "class" else None


# --- classes ----------------------------------------------------------------------------------------

def class_kind(store: ProjectStore, qualified: str) -> Optional[str]:
    return store.memoised(("class", qualified), lambda: _class_kind(store, qualified))


def _class_kind(store: ProjectStore, qualified: str) -> Optional[str]:
    sym = lookup(store, qualified)
    if sym is not None and sym[0] == "external":
        return external.class_kind(sym[1])
    summary = class_summary(sym)
    if summary is None:
        return None
    if "factory" in summary:
        return "not-tensor"
    ctx = Ctx(store, sym[2])
    kinds = [_base_kind(ctx, base) for base in summary["bases"]]
    decisive = next((k for k in kinds if k in ("module", "tensor", "optimizer")), None)
    if decisive is not None:
        return decisive
    return "not-tensor" if all(k == "not-tensor" for k in kinds) else None


def _base_kind(ctx: Ctx, base: List[Any]) -> Optional[str]:
    if base[0] == "record":
        return "not-tensor"
    if base[0] != "name":
        return None
    sym = symbol_in(ctx, base[1])
    if sym is None or sym[0] not in ("class", "external"):
        return None
    return class_kind(ctx.store, sym[1])


def is_record(store: ProjectStore, qualified: str) -> bool:
    sym = lookup(store, qualified)
    summary = class_summary(sym)
    if summary is None:
        return False
    if "factory" in summary or any(b[0] == "record" for b in summary["bases"]):
        return True
    ctx = Ctx(store, sym[2])
    for name in summary["deco"] + [b[1] for b in summary["bases"] if b[0] == "name"]:
        found = symbol_in(ctx, name) if name else None
        if found is not None and found[0] == "external" and (
                found[1] in external.RECORD_DECORATORS or found[1] in external.RECORD_BASES):
            return True
    return False


def class_fields(store: ProjectStore, qualified: str) -> Optional[List[str]]:
    if not is_record(store, qualified):
        return None
    summary = class_summary(lookup(store, qualified)) or {}
    record_base = next((b for b in summary.get("bases", ()) if b[0] == "record"), None)
    return list(record_base[1]) if record_base is not None else list(summary.get("fields", ()))


def instance(store: ProjectStore, qualified: str) -> Value:
    kind = class_kind(store, qualified)
    if kind == "not-tensor" and is_record(store, qualified):
        kind = "record"
    return (kind or "unknown", qualified)


def find_method(store: ProjectStore, cls: str, name: str, depth: int = 0) -> Optional[Tuple[str, Dict]]:
    """(qualified method, its summary), looked up in ``cls`` and then its project bases."""
    sym = lookup(store, cls)
    summary = class_summary(sym)
    if summary is None or depth > 12:
        return None
    if name in summary["methods"]:
        return f"{sym[1]}.{name}", summary["methods"][name]
    ctx = Ctx(store, sym[2])
    for base in summary["bases"]:
        found = symbol_in(ctx, base[1]) if base[0] == "name" else None
        if found is not None and found[0] == "class":
            method = find_method(store, found[1], name, depth + 1)
            if method is not None:
                return method
    return None


#: What a star import can stand for in the linted file: an outside name (``torch.nn``), a project class, def or module.
_STAR_KINDS = frozenset({"external", "class", "def", "module"})


def star_member(store: ProjectStore, targets: Sequence[str], name: str) -> Optional[str]:
    """What ``name`` stands for through the star imports ``targets`` (absolute module names, "" for one that could
    not be made absolute): the qualified name, or "" when it cannot be told (a star of a module outside the project
    or with an ``__all__``, a name bound to a value or to two things), or None when no starred module binds it."""
    found = set()
    for target in targets:
        module = store.module(target) if target else None
        if module is None or "__all__" in module.summary["symbols"]:
            return ""  # what it exports is not known here
        if name not in module.summary["symbols"]:
            if module.is_package and store.module(f"{module.name}.{name}") is not None:
                return ""  # a submodule: bound only if something imported it
            stars = module.summary["star"]
            inner = store.memoised(("star", module.name, name), lambda: star_member(
                store, [module.absolute(star) or "" for star in stars], name)) if stars else None  # noqa: B023
            if inner == "":
                return ""
            if inner is not None:
                found.add(inner)
            continue
        sym = member(store, module, name, ())
        if sym is None or sym[0] not in _STAR_KINDS:
            return ""  # a value, or bound to two things
        found.add(sym[1])
    if len(found) > 1:
        return ""
    return found.pop() if found else None


def resolve_public(store: ProjectStore, qualified: str) -> Optional[str]:
    sym = lookup(store, qualified)
    if sym is None or (sym[0] == "external" and sym[1] == qualified):
        return None
    return sym[1]
