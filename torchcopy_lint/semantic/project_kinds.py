"""Answers the project index's questions by evaluating module summaries across modules.

Names are looked up through each module's own bindings (``symbols``), following
imports (relative ones made absolute from where the module lives), submodules of
packages and star imports, to the defining module. A value is a pair ``(kind,
class)``: the class (a qualified project class name) is kept so that a method call
or an attribute on an instance can be looked up in that class and its project bases.
Every lookup that can recurse across modules goes through ``ProjectStore.memoised``,
which bounds depth, cuts cycles and records the files each answer used.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from . import external
from .project import ModuleFile, ProjectStore

Value = Tuple[str, Optional[str]]  # (kind, qualified class of the instance, when known)
UNKNOWN: Value = ("unknown", None)
NOT_TENSOR_KINDS = frozenset(["not-tensor", "record", "mapping", "number"])
MODULE_PRESERVING = frozenset("eval train to cuda cpu float double half bfloat16 requires_grad_ share_memory".split())
TENSOR_METHODS = frozenset(
    "clone detach to cuda cpu float double half bfloat16 long int bool contiguous view reshape".split()
)
MODULE_NOT_TENSOR_METHODS = frozenset(
    "parameters named_parameters modules named_modules children named_children buffers named_buffers".split()
)


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


def _class_summary(sym: Optional[tuple]) -> Optional[Dict[str, Any]]:
    return sym[2].summary["classes"].get(sym[3]) if sym is not None and sym[0] == "class" else None


# --- classes ----------------------------------------------------------------------------------------

def class_kind(store: ProjectStore, qualified: str) -> Optional[str]:
    return store.memoised(("class", qualified), lambda: _class_kind(store, qualified))


def _class_kind(store: ProjectStore, qualified: str) -> Optional[str]:
    sym = lookup(store, qualified)
    if sym is not None and sym[0] == "external":
        return external.class_kind(sym[1])
    summary = _class_summary(sym)
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
    summary = _class_summary(sym)
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
    summary = _class_summary(lookup(store, qualified)) or {}
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
    summary = _class_summary(sym)
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


# --- attributes -------------------------------------------------------------------------------------

def attribute_kind(store: ProjectStore, cls: str, attr: str) -> Optional[str]:
    return public_kind(attribute_value(store, cls, attr))


def attribute_value(store: ProjectStore, cls: str, attr: str) -> Value:
    return store.memoised(("attr", cls, attr), lambda: _attribute_value(store, cls, attr)) or UNKNOWN


def _attribute_value(store: ProjectStore, cls: str, attr: str) -> Value:
    sym = lookup(store, cls)
    summary = _class_summary(sym)
    if summary is None:
        return UNKNOWN
    ctx = Ctx(store, sym[2], cls=sym[1], receiver=instance(store, sym[1]))
    facts = summary["attrs"].get(attr)
    value = UNKNOWN
    if facts:
        value = join([evaluate(ctx, fact) for fact in facts])
    elif attr in summary["methods"] and "property" in summary["methods"][attr]["deco"]:
        value = call_function(store, f"{sym[1]}.{attr}", ctx, (), {}, receiver=ctx.receiver)
    else:
        for base in summary["bases"]:
            found = symbol_in(ctx, base[1]) if base[0] == "name" else None
            if found is not None and found[0] == "class":
                value = attribute_value(store, found[1], attr)
                if value[0] != "unknown":
                    break
    if value[0] in ("unknown", "none") and attr in summary["module_used"]:
        return ("module", None)
    return value


def attr_of(ctx: Ctx, value: Value, attr: str) -> Value:
    """``value.attr``."""
    kind, cls = value
    if cls is not None:
        found = attribute_value(ctx.store, cls, attr)
        if found[0] != "unknown":
            return found
    if kind == "module" and attr == "module":
        return ("module", None)  # DataParallel / DistributedDataParallel unwrap
    if kind == "module" and cls is None and attr in ("weight", "bias"):
        return ("parameter", None)
    if kind in ("tensor", "parameter") and attr in ("data", "grad", "T"):
        return ("tensor", None)
    return UNKNOWN


# --- functions --------------------------------------------------------------------------------------

def function_alternatives_raw(store: ProjectStore, qualified: str) -> List[tuple]:
    """What the function returns, each ``return`` separately: ``("v", kind, cls)``, ``("arg", key,
    path, annotation)`` or ``("self", path)``; memoised per function."""
    return store.memoised(("func", qualified), lambda: _function_alternatives(store, qualified)) or [("v",) + UNKNOWN]


def _function_alternatives(store: ProjectStore, qualified: str) -> List[tuple]:
    sym = lookup(store, qualified)
    if sym is None or sym[0] not in ("def", "method"):
        return [("v",) + UNKNOWN]
    module = sym[2]
    if sym[0] == "def":
        fn, cls = module.summary["functions"][sym[3]], None
    else:
        fn, cls = module.summary["classes"][sym[3]]["methods"][sym[4]], f"{module.name}.{sym[3]}"
    if fn["gen"]:
        return [("v", "not-tensor", None)]
    if fn["async"]:
        return [("v",) + UNKNOWN]
    ctx = Ctx(store, module, cls=cls, params=fn["params"])
    out: List[tuple] = []
    for fact in fn["ret"] or [["k", "none"]]:
        out.extend(_alternatives(ctx, fact, ""))
    if fn["ann"] is not None and any(a[0] == "v" and a[1] == "unknown" for a in out):
        annotated = annotation_value(ctx, fn["ann"])
        if annotated[0] != "unknown":
            return [("v",) + annotated]
    return out


def _alternatives(ctx: Ctx, fact: List[Any], path: str) -> List[tuple]:
    """A return fact split into alternatives, keeping arguments and ``self`` symbolic."""
    tag = fact[0]
    if tag == "any":
        return [alt for sub in fact[1] for alt in _alternatives(ctx, sub, path)]
    if tag == "arg":
        joined = ".".join(p for p in (fact[2], path) if p)
        return [("arg", fact[1], joined, fact[3])]
    if tag == "self":
        return [("self", ".".join(p for p in (fact[1], path) if p))]
    if tag == "selfobj":
        return [("self", path)]
    if tag == "attr" and fact[1][0] in ("arg", "self", "selfobj", "any"):
        return _alternatives(ctx, fact[1], ".".join(p for p in (fact[2], path) if p))
    if tag == "call" and fact[2] and fact[1][0] == "name":
        sym = symbol_in(ctx, fact[1][1])
        if sym is not None and sym[0] == "external" and sym[1] in external.COPY_FUNCTIONS:
            return _alternatives(ctx, fact[2][0], path)  # a copy is what it copies
    value = evaluate(ctx, fact)
    for attr in path.split(".") if path else ():
        value = attr_of(ctx, value, attr)
    return [("v",) + value]


def call_function(store: ProjectStore, qualified: str, caller: Ctx, args: Sequence[Any], kwargs: Dict,
                  receiver: Optional[Value] = None) -> Value:
    """The value of calling the project function ``qualified`` from ``caller`` with argument facts."""
    sym = lookup(store, qualified)
    params: Sequence[str] = ()
    if sym is not None and sym[0] in ("def", "method"):
        fn = sym[2].summary["functions"][sym[3]] if sym[0] == "def" \
            else sym[2].summary["classes"][sym[3]]["methods"][sym[4]]
        params = fn["params"]
    values = []
    for alt in function_alternatives_raw(store, qualified):
        if alt[0] == "v":
            values.append((alt[1], alt[2]))
            continue
        if alt[0] == "self":
            value, path = receiver or UNKNOWN, alt[1]
        else:
            key, path = alt[1], alt[2]
            fact = _argument(args, kwargs, params, key)
            value = evaluate(caller, fact) if fact is not None else UNKNOWN
            if value[0] == "unknown" and alt[3] is not None:
                value = annotation_value(Ctx(store, sym[2]), alt[3]) if sym is not None else UNKNOWN
        for attr in path.split(".") if path else ():
            value = attr_of(caller, value, attr)
        values.append(value)
    return join(values)


def _argument(args: Sequence[Any], kwargs: Dict, params: Sequence[str], key: Any) -> Optional[Any]:
    if isinstance(key, int):
        if key < len(args):
            return args[key]
        key = params[key] if key < len(params) else None
    return kwargs.get(key) if key is not None else None


def function_alternatives(store: ProjectStore, qualified: str) -> Set[str]:
    out = set()
    for alt in function_alternatives_raw(store, qualified):
        if alt[0] == "arg":
            out.add(f"arg:{alt[1]}" + (f".{alt[2]}" if alt[2] else ""))
        elif alt[0] == "self":
            sym = lookup(store, qualified.rpartition(".")[0])
            value = instance(store, sym[1]) if sym is not None and sym[0] == "class" else UNKNOWN
            ctx = Ctx(store, sym[2]) if sym is not None and len(sym) > 2 else None
            for attr in alt[1].split(".") if alt[1] and ctx is not None else ():
                value = attr_of(ctx, value, attr)
            out.add(value[0])
        else:
            out.add(alt[1])
    return out


def function_return(store: ProjectStore, qualified: str) -> Optional[str]:
    alternatives = function_alternatives(store, qualified)
    if len(alternatives) > 1:
        alternatives.discard("none")
    args = {a for a in alternatives if a.startswith("arg:")}
    if args and len(args) == len(alternatives):
        bare = {a.split(".")[0] for a in args}
        if len(bare) == 1 and args <= {next(iter(bare)), next(iter(bare)) + ".module"}:
            return next(iter(bare)) if len(args) > 1 else next(iter(args))
        return None
    if args:
        return None
    return public_kind(join([(a, None) for a in alternatives]))


def resolve_public(store: ProjectStore, qualified: str) -> Optional[str]:
    sym = lookup(store, qualified)
    if sym is None or (sym[0] == "external" and sym[1] == qualified):
        return None
    return sym[1]


# --- values -----------------------------------------------------------------------------------------

def join(values: Sequence[Value]) -> Value:
    """The value every alternative agrees on (``None`` alongside others is dropped: Optional)."""
    found = [v for v in values if v[0] != "none"] or list(values)
    if not found:
        return UNKNOWN
    kinds = {v[0] for v in found}
    classes = {v[1] for v in found}
    cls = classes.pop() if len(classes) == 1 else None
    if len(kinds) == 1:
        return (kinds.pop(), cls)
    if kinds <= {"tensor", "parameter"}:
        return ("tensor", None)
    if kinds <= NOT_TENSOR_KINDS:
        return ("not-tensor", None)
    return UNKNOWN


def public_kind(value: Optional[Value]) -> Optional[str]:
    if value is None or value[0] == "unknown":
        return None
    return "not-tensor" if value[0] == "none" else value[0]


def evaluate(ctx: Ctx, fact: List[Any]) -> Value:
    """The value of a fact in ``ctx``."""
    tag = fact[0]
    store = ctx.store
    if tag == "k":
        return (fact[1], None)
    if tag == "any":
        return join([evaluate(ctx, sub) for sub in fact[1]])
    if tag == "name":
        sym = symbol_in(ctx, fact[1])
        if sym is None or sym[0] == "external":
            return UNKNOWN
        if sym[0] == "value":
            return store.memoised(("value", sym[1]), lambda: _module_value(ctx, sym)) or UNKNOWN
        return ("not-tensor", None)  # a class, function or module object
    if tag == "arg":
        value = UNKNOWN
        if ctx.caller is not None:
            found = _argument(ctx.args, ctx.kwargs, ctx.params, fact[1])
            value = evaluate(ctx.caller, found) if found is not None else UNKNOWN
        if value[0] == "unknown" and fact[3] is not None:
            value = annotation_value(ctx, fact[3])
        for attr in fact[2].split(".") if fact[2] else ():
            value = attr_of(ctx, value, attr)
        return value
    if tag == "self":
        return attribute_value(store, ctx.cls, fact[1]) if ctx.cls else UNKNOWN
    if tag == "selfobj":
        return ctx.receiver or UNKNOWN
    if tag == "attr":
        return attr_of(ctx, evaluate(ctx, fact[1]), fact[2])
    if tag == "ann":
        return annotation_value(ctx, fact[1])
    if tag == "call":
        return _call(ctx, fact)
    if tag == "mcall":
        return _method_call(ctx, evaluate(ctx, fact[1]), fact[2], fact[3])
    if tag == "sub":
        return ("tensor", None) if evaluate(ctx, fact[1])[0] in ("tensor", "parameter") else UNKNOWN
    if tag == "op":
        kinds = {evaluate(ctx, sub)[0] for sub in fact[1:]}
        return ("tensor", None) if kinds & {"tensor", "parameter"} else (("number", None) if kinds == {"number"} else UNKNOWN)
    return UNKNOWN


def _module_value(ctx: Ctx, sym: tuple) -> Value:
    module = sym[2]
    inner = Ctx(ctx.store, module)
    facts = [b[1] for b in module.summary["symbols"].get(sym[3], ()) if b[0] == "value"]
    return join([evaluate(inner, f) for f in facts]) if facts else UNKNOWN


def _call(ctx: Ctx, fact: List[Any]) -> Value:
    callee, args, kwargs = fact[1], fact[2], fact[3]
    if callee[0] != "name":
        return UNKNOWN
    sym = symbol_in(ctx, callee[1])
    if sym is None:
        return UNKNOWN
    if sym[0] == "class":
        return instance(ctx.store, sym[1])
    if sym[0] == "def":
        return call_function(ctx.store, sym[1], ctx, args, kwargs)
    if sym[0] == "external":
        if sym[1] in external.COPY_FUNCTIONS:
            return evaluate(ctx, args[0]) if args else UNKNOWN
        kind = external.call_kind(sym[1])
        return (kind, None) if kind else UNKNOWN
    return UNKNOWN


def _method_call(ctx: Ctx, receiver: Value, method: str, args: Sequence[Any]) -> Value:
    kind, cls = receiver
    if cls is not None:
        found = find_method(ctx.store, cls, method)
        if found is not None:
            if "staticmethod" in found[1]["deco"] or "classmethod" in found[1]["deco"]:
                return call_function(ctx.store, found[0], ctx, args, {})
            return call_function(ctx.store, found[0], ctx, args, {}, receiver=receiver)
    if kind == "module":
        if method in MODULE_PRESERVING:
            return receiver
        if method in MODULE_NOT_TENSOR_METHODS:
            return ("not-tensor", None)
        return ("mapping", None) if method == "state_dict" else UNKNOWN
    if kind in ("tensor", "parameter") and method in TENSOR_METHODS:
        return ("tensor", None)
    if kind == "unknown" and method in ("eval", "train"):
        return ("module", None)  # module-only methods that return the module
    return UNKNOWN


def annotation_value(ctx: Ctx, ann: Any) -> Value:
    """The value an annotation promises (``Optional[X]`` is X; ``List[Tensor]`` a tensor list)."""
    if ann is None:
        return UNKNOWN
    if isinstance(ann, str):
        if ann == "None":
            return ("none", None)
        sym = symbol_in(ctx, ann)
        if sym is not None and sym[0] == "class":
            return instance(ctx.store, sym[1])
        kind = external.annotation_kind(sym[1]) if sym is not None and sym[0] == "external" else None
        return (kind, None) if kind else UNKNOWN
    outer, inner = ann[0], ann[1]
    sym = symbol_in(ctx, outer) if outer and outer not in ("Union", "Optional") else None
    name = sym[1] if sym is not None else outer
    if name in ("Union", "Optional", "typing.Union", "typing.Optional"):
        return join([annotation_value(ctx, a) for a in inner] + [("none", None)])
    if name in external.MAPPING_CLASSES:
        return ("mapping", None)
    if name in external.SEQUENCE_ANNOTATIONS:
        items = [annotation_value(ctx, a)[0] for a in inner if a != "..."]
        if items and set(items) <= {"tensor", "parameter"} and not name.endswith(("tuple", "Tuple")):
            return ("tensor-list", None)
        return ("not-tensor", None)
    return UNKNOWN
