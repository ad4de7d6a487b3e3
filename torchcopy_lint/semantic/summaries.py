"""What one module says about itself, without following its imports: its summary.

A summary is built with the stdlib ``ast`` (fast, torch-free, no LibCST) from a
file's bytes alone, so it can be cached by content hash and shared by every file
that imports the module. It holds, as plain JSON:

- ``imports``: local name -> imported target (``"torch.nn"``; relative targets keep
  their leading dots, ``".models.yolo.Model"``, and are resolved by the project index,
  which knows where the module lives); ``star``: modules imported with ``*``;
- ``symbols``: each module-level name -> how it is bound (``class``, ``def``,
  ``import``, ``value``), several entries when it is bound more than once;
- ``classes``: bases and decorators (as facts/dotted names), record fields
  (namedtuple, NamedTuple, dataclass), attributes assigned to ``self`` in any method
  (with class-level annotations), attributes on which a module-only method is called,
  the methods' summaries, and ``holds``/``made``/``dflt``: what else may give the class parameters, which
  attributes hold a parameter with a plain default (held_parameters.py);
- ``functions``: parameters, decorators, return annotation, the facts of what each
  ``return`` gives back, and ``ng``: what "nothing it returns requires grad" rests on (grad_returns.py).

How values are described (facts) is in semantic/facts.py.

``classes`` and ``functions`` are ``LazyEntries`` (lazy.py): each class or function is summarized when first asked for
(a cold run asks for a few dozen of the thousands that the modules it imports define: torch's own sources,
147 modules read, ~2 s of CPU summarized whole). ``as_json`` forces them; a summary kept on disk holds
``null`` for an entry not summarized yet, summarized from the file's bytes when asked for (``from_json``).
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..source.precheck import parsed_or_none
from .lazy import LazyEntries, Text
from .grad_returns import may_turn_grad_off, no_grad_names
from .held_parameters import class_holdings
from .facts import NONE, UNKNOWN, Fact, Scope, annotation, bound_names, dotted, own_nodes, target_names

SUMMARY_FORMAT = 6  # bump when the shape of a summary changes (it is part of the disk cache key)
MODULE_ONLY_METHODS = frozenset(
    """parameters named_parameters modules named_modules children named_children buffers named_buffers
    train eval register_forward_hook register_forward_pre_hook register_full_backward_hook
    register_buffer register_parameter add_module""".split()
)
"""Methods of ``nn.Module`` that a tensor does not have (``self.ema.parameters()`` says module)."""


def empty_summary() -> Dict[str, Any]:
    return {"imports": {}, "star": [], "symbols": {}, "classes": {}, "functions": {}}


def summarize(source: bytes) -> Dict[str, Any]:
    """The summary of a module's source; an empty one when it does not parse."""
    tree = parsed_or_none(source)
    if tree is None:
        return empty_summary()
    try:
        return _ModuleSummarizer(Text(source)).run(tree)
    except RecursionError:
        return empty_summary()


def from_json(summary: Dict[str, Any], source: bytes) -> Dict[str, Any]:
    """A summary read back from JSON: entries that were not summarized are, from ``source``, when asked for."""
    pending = [(key, name) for key in ("classes", "functions") for name, value in summary[key].items() if value is None]
    if not pending:
        return summary
    parsed: List[Optional[Dict[str, Any]]] = []

    def fresh(key_name: Tuple[str, str]) -> Dict[str, Any]:
        if not parsed:
            tree = parsed_or_none(source)
            parsed.append(_ModuleSummarizer(Text(source)).run(tree) if tree is not None else None)
        again = parsed[0]
        key, name = key_name
        return again[key][name] if again is not None and name in again[key] else {}

    for key in ("classes", "functions"):
        entries = LazyEntries()
        for name, value in summary[key].items():
            if value is None:
                entries.define(name, fresh, (key, name))
            else:
                entries[name] = value
        summary[key] = entries
    return summary


def import_bindings(node: ast.AST) -> List[tuple]:
    """(local name, target) for an import statement; relative targets keep their dots."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out.append((alias.asname, alias.name))
            else:
                top = alias.name.split(".")[0]
                out.append((top, top))
    elif isinstance(node, ast.ImportFrom):
        base = "." * (node.level or 0) + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                out.append(("*", base))
                continue
            sep = "" if base.endswith(".") else "."
            out.append((alias.asname or alias.name, base + sep + alias.name))
    return out


def _compound_bodies(stmt: ast.stmt) -> List[Sequence[ast.stmt]]:
    """Statement lists nested in a compound statement that is not a def or class."""
    bodies = []
    for name in ("body", "orelse", "finalbody"):
        value = getattr(stmt, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            bodies.append(value)
    for handler in getattr(stmt, "handlers", ()) or ():
        bodies.append(handler.body)
    for case in getattr(stmt, "cases", ()) or ():
        bodies.append(case.body)
    return bodies


def walk_statements(body: Sequence[ast.stmt]):
    """Every statement of ``body`` and of the compound statements in it, not entering defs/classes."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in _compound_bodies(stmt):
                yield from walk_statements(inner)


class _ModuleSummarizer:
    def __init__(self, text: "Text") -> None:
        self.text = text
        self.summary = empty_summary()
        self.summary["classes"], self.summary["functions"] = LazyEntries(), LazyEntries()

    def _bind(self, name: str, binding: list) -> None:
        self.summary["symbols"].setdefault(name, []).append(binding)

    def run(self, tree: ast.Module) -> Dict[str, Any]:
        module_scope = Scope(None, [], 0, {})
        for stmt in walk_statements(tree.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for local, target in import_bindings(stmt):
                    if local == "*":
                        self.summary["star"].append(target)
                    else:
                        self.summary["imports"][local] = target
                        self._bind(local, ["import", target])
            elif isinstance(stmt, ast.ClassDef):
                self.summary["classes"].define(stmt.name, _module_class_summary, self.text.locate(stmt))
                self._bind(stmt.name, ["class"])
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.summary["functions"].define(stmt.name, _module_function_summary, self.text.locate(stmt))
                self._bind(stmt.name, ["def"])
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self._assignment(stmt, module_scope)
            else:
                for name in bound_names(stmt):
                    self._bind(name, ["value", UNKNOWN])
        return self.summary

    def _assignment(self, stmt: ast.stmt, scope: "Scope") -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        for target in targets:
            if isinstance(target, ast.Name):
                record = _record_factory(value)
                if record is not None:
                    self.summary["classes"][target.id] = record
                    self._bind(target.id, ["class"])
                elif value is not None:
                    self._bind(target.id, ["value", scope.fact(value)])
                elif isinstance(stmt, ast.AnnAssign):
                    self._bind(target.id, ["value", ["ann", annotation(stmt.annotation)]])
            else:
                for name in target_names(target):
                    self._bind(name, ["value", UNKNOWN])


def _record_factory(value: Optional[ast.AST]) -> Optional[Dict[str, Any]]:
    """A class summary for ``X = namedtuple("X", ...)`` / ``NamedTuple("X", [...])``, else None."""
    if not isinstance(value, ast.Call) or len(value.args) < 2:
        return None
    callee = dotted(value.func) or ""
    if callee.rsplit(".", 1)[-1] not in ("namedtuple", "NamedTuple"):
        return None
    spec = value.args[1]
    fields: List[str] = []
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        fields = spec.value.replace(",", " ").split()
    elif isinstance(spec, (ast.List, ast.Tuple)):
        for el in spec.elts:
            if isinstance(el, ast.Constant) and isinstance(el.value, str):
                fields.append(el.value)
            elif isinstance(el, ast.Tuple) and el.elts and isinstance(el.elts[0], ast.Constant):
                fields.append(str(el.elts[0].value))
    return {"bases": [], "factory": callee, "deco": [], "fields": fields, "attrs": {}, "methods": {},
            "module_used": []}


def class_bases(node: ast.ClassDef) -> List[Any]:
    """A class's bases as data: ``["name", dotted]``, ``["record", fields, factory]`` or unknown."""
    bases = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value  # Generic[T], NamedTuple[...]
        if isinstance(base, ast.Call):
            record = _record_factory(base)
            bases.append(["record", record["fields"], record["factory"]] if record else UNKNOWN)
        else:
            name = dotted(base)
            bases.append(["name", name] if name else UNKNOWN)
    return bases


def decorators(node: ast.AST) -> List[Optional[str]]:
    return [dotted(d.func if isinstance(d, ast.Call) else d) for d in getattr(node, "decorator_list", ())]


def _class_summary(node: ast.ClassDef, module_scope: "Scope") -> Dict[str, Any]:
    summary: Dict[str, Any] = {
        "bases": class_bases(node), "deco": decorators(node),
        "fields": [], "attrs": {}, "methods": {}, "module_used": [], **class_holdings(node),
    }
    attrs: Dict[str, List[Fact]] = summary["attrs"]
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            summary["fields"].append(stmt.target.id)
            attrs.setdefault(stmt.target.id, []).append(["ann", annotation(stmt.annotation)])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            method = _function_summary(stmt, method=True)
            summary["methods"][stmt.name] = method
            for attr, facts in method.pop("self_attrs").items():
                attrs.setdefault(attr, []).extend(facts)
            for attr in method.pop("module_used"):
                if attr not in summary["module_used"]:
                    summary["module_used"].append(attr)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    attrs.setdefault(target.id, []).append(module_scope.fact(stmt.value))
    return summary


def _module_function_summary(node: ast.AST) -> Dict[str, Any]:
    return _function_summary(node, method=False)


def _module_class_summary(node: ast.AST) -> Dict[str, Any]:
    return _class_summary(node, Scope(None, [], 0, {}))  # type: ignore[arg-type]


def _function_summary(node: ast.AST, method: bool) -> Dict[str, Any]:
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    deco, receiver, params, names = signature(node, method)
    args = node.args
    annotations = {p.arg: annotation(p.annotation) for p in params + list(args.kwonlyargs)}
    scope = Scope(receiver, names, len(params), annotations)
    for star in (args.vararg, args.kwarg):
        if star is not None:
            scope.locals[star.arg] = [None]
    local_imports: Dict[str, str] = {}
    returns: List[Fact] = []
    self_attrs: Dict[str, List[Fact]] = {}
    module_used: List[str] = []
    generator = False
    buffers: List[tuple] = []
    hopeful = bool(deco)  # something may turn grad mode off, or detach (grad_returns.py, asked only then)
    for sub in own_nodes(node):
        if isinstance(sub, (ast.Yield, ast.YieldFrom)):
            generator = True
        elif may_turn_grad_off(sub):
            hopeful = True
        elif isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            scope.locals.setdefault(sub.target.id, []).append(sub.value)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            scope.locals.setdefault(sub.name, []).append(None)
        elif receiver is not None and _is_register_buffer(sub, receiver):
            value = sub.args[1] if len(sub.args) > 1 else None  # type: ignore[attr-defined]
            buffers.append((sub.args[0].value, value))  # type: ignore[attr-defined]
        elif receiver is not None and isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                and sub.func.attr in MODULE_ONLY_METHODS:
            owner = sub.func.value
            if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) \
                    and owner.value.id == receiver and owner.attr not in module_used:
                module_used.append(owner.attr)
    for stmt in _own_statements(node.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, target in import_bindings(stmt):
                if local != "*":
                    local_imports[local] = target
        scope.collect(stmt)
    scope.imports = local_imports
    for stmt in _own_statements(node.body):
        if isinstance(stmt, ast.Return):
            returns.append(scope.fact(stmt.value) if stmt.value is not None else NONE)
        if receiver is not None:
            _self_assignments(stmt, receiver, scope, self_attrs)
    for name, value in buffers:
        self_attrs.setdefault(name, []).append(scope.fact(value) if value is not None else ["k", "tensor"])
    summary: Dict[str, Any] = {
        "params": names, "deco": deco, "ann": annotation(node.returns),
        "ret": returns, "gen": generator, "async": isinstance(node, ast.AsyncFunctionDef),
        "ng": no_grad_names(node, scanned=True) if hopeful and not generator else None,
    }
    if method:
        summary["self_attrs"] = self_attrs
        summary["module_used"] = module_used
    return summary


def signature(node: ast.AST, method: bool) -> Tuple[List[Optional[str]], Optional[str], List[ast.arg], List[str]]:
    """(decorators, receiver name of a method, positional parameters after it, every parameter name)."""
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    deco = decorators(node)
    args = node.args
    params = list(getattr(args, "posonlyargs", [])) + list(args.args)
    receiver = None
    if method and params and "staticmethod" not in deco:
        receiver = params[0].arg
        params = params[1:]
    return deco, receiver, params, [p.arg for p in params] + [a.arg for a in args.kwonlyargs]


def _is_register_buffer(node: ast.AST, receiver: str) -> bool:
    """``self.register_buffer("name", value)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "register_buffer" and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == receiver and bool(node.args) \
        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def _own_statements(body: Sequence[ast.stmt]):
    return walk_statements(body)


def _self_assignments(stmt: ast.stmt, receiver: str, scope: "Scope", out: Dict[str, List[Fact]]) -> None:
    if isinstance(stmt, ast.Assign):
        pairs = [(t, stmt.value) for t in stmt.targets]
    elif isinstance(stmt, ast.AnnAssign):
        pairs = [(stmt.target, stmt.value)]
    elif isinstance(stmt, ast.AugAssign):
        pairs = [(stmt.target, None)]
    else:
        return
    for target, value in pairs:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == receiver:
            if isinstance(stmt, ast.AnnAssign) and stmt.annotation is not None and value is None:
                fact: Fact = ["ann", annotation(stmt.annotation)]
            elif value is None:
                fact = UNKNOWN
            else:
                fact = scope.fact(value)
            out.setdefault(target.attr, []).append(fact)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                if isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) and el.value.id == receiver:
                    out.setdefault(el.attr, []).append(UNKNOWN)


