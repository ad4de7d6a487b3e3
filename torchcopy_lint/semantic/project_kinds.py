"""Kinds across a project: what functions return and what attributes hold, from module summaries.

A value is a pair ``(kind, class)``: the class (a qualified project class name) is kept so
that a method call or an attribute on an instance can be looked up in that class and its
project bases. A function's returns are kept symbolic where they depend on the call
(``("arg", 0, "module", annotation)``, ``("self", path)``), memoised once per function, and
substituted with the caller's arguments at each call. Names and classes: project_names.py.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set

from .. import knowledge
from . import external
from .project_calls import module_call
from .project_store import ProjectStore
from .project_names import UNKNOWN, Ctx, Value, class_summary, find_method, instance, lookup, symbol_in

NOT_TENSOR_KINDS = frozenset(["not-tensor", "record", "mapping", "number"])
MODULE_PRESERVING = frozenset("eval train to cuda cpu float double half bfloat16 requires_grad_ share_memory".split())
MODULE_NOT_TENSOR_METHODS = frozenset(
    "parameters named_parameters modules named_modules children named_children buffers named_buffers".split()
)


# --- attributes -------------------------------------------------------------------------------------

def attribute_kind(store: ProjectStore, cls: str, attr: str) -> Optional[str]:
    return public_kind(attribute_value(store, cls, attr))


def attribute_value(store: ProjectStore, cls: str, attr: str) -> Value:
    return store.memoised(("attr", cls, attr), lambda: _attribute_value(store, cls, attr)) or UNKNOWN


def _attribute_value(store: ProjectStore, cls: str, attr: str) -> Value:
    sym = lookup(store, cls)
    summary = class_summary(sym)
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
    if kind == "module" and (cls is None or cls.startswith("torch.nn.")) and attr in ("weight", "bias"):
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
    ctx = Ctx(store, module, cls=cls, params=fn["params"], receiver=instance(store, cls) if cls else None)
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
    if tag == "call" and fact[1][0] == "name":
        sym = symbol_in(ctx, fact[1][1])
        if sym is not None and sym[0] == "external" and sym[1] in external.COPY_FUNCTIONS and fact[2]:
            return _alternatives(ctx, fact[2][0], path)  # a copy is what it copies
        if sym is not None and sym[0] == "def":
            passed = _passed_through(ctx, sym, fact[2], fact[3], path)
            if passed is not None:
                return passed
    value = evaluate(ctx, fact)
    for attr in path.split(".") if path else ():
        value = attr_of(ctx, value, attr)
    return [("v",) + value]


def _passed_through(ctx: Ctx, sym: tuple, args: Sequence[Any], kwargs: Dict, path: str) -> Optional[List[tuple]]:
    """``return de_parallel(model)``: a call of a function that returns its argument returns ours."""
    raw = function_alternatives_raw(ctx.store, sym[1])
    if not any(alt[0] == "arg" for alt in raw) or any(alt[0] == "self" for alt in raw):
        return None
    params = sym[2].summary["functions"][sym[3]]["params"]
    out: List[tuple] = []
    for alt in raw:
        if alt[0] == "v":
            out.append(alt)
            continue
        found = _argument(args, kwargs, params, alt[1])
        if found is None:
            return None
        out.extend(_alternatives(ctx, found, ".".join(p for p in (alt[2], path) if p)))
    return out


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
    sym = lookup(store, qualified)
    if sym is not None and sym[0] == "external":
        return external.call_kind(sym[1]) if sym[1] not in external.COPY_FUNCTIONS else "arg:0"
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
    if tag == "list":
        items = {evaluate(ctx, sub)[0] for sub in fact[1]}
        return ("tensor-list", None) if items and items <= {"tensor", "parameter"} else ("not-tensor", None)
    if tag == "op":
        kinds = {evaluate(ctx, sub)[0] for sub in fact[1:]}
        if kinds & {"tensor", "parameter"}:
            return ("tensor", None)
        return ("number", None) if kinds == {"number"} else UNKNOWN
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
        return (kind, sym[1] if kind == "module" else None) if kind else UNKNOWN
    if sym[0] == "value":  # `net(x)` for a module-level `net = Net()`
        return module_call(ctx, evaluate(ctx, callee), args, kwargs, call_function)
    return UNKNOWN


def _method_call(ctx: Ctx, receiver: Value, method: str, args: Sequence[Any]) -> Value:
    kind, cls = receiver
    if cls is not None:
        found = find_method(ctx.store, cls, method)
        if found is not None:
            if "staticmethod" in found[1]["deco"] or "classmethod" in found[1]["deco"]:
                return call_function(ctx.store, found[0], ctx, args, {})
            return call_function(ctx.store, found[0], ctx, args, {}, receiver=receiver)
    if kind == "module" and cls is not None and method not in MODULE_PRESERVING:
        held = attribute_value(ctx.store, cls, method)  # `self.fc(x)`: calling a module attribute
        if held[0] == "module":
            return module_call(ctx, held, args, {}, call_function)
    if kind == "module":
        if method in MODULE_PRESERVING:
            return receiver
        if method in MODULE_NOT_TENSOR_METHODS:
            return ("not-tensor", None)
        return ("mapping", None) if method == "state_dict" else UNKNOWN
    if kind in ("tensor", "parameter") and knowledge.plain_kind("tensor_methods", method) in ("tensor", "number"):
        return (knowledge.plain_kind("tensor_methods", method), None)  # what torch's annotations say
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


def instance_call(store, cls: str) -> Optional[str]:
    """The kind calling an instance of the project class ``cls`` returns (``ProjectIndex.call_kind``)."""
    sym = lookup(store, cls)
    if sym is None or sym[0] != "class":
        return None
    return public_kind(module_call(Ctx(store, sym[2]), instance(store, sym[1]), (), {}, call_function))
