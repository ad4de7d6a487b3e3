"""What an installed package's module says, from its annotations and class bases only.

The summary has the shape of a project module's (semantic/summaries.py), so that the project
index answers questions about installed classes and functions as it does about the project's
own: ``imports``/``star``/``symbols`` as there; ``classes`` with bases, decorators, fields and
class-level annotations (no method bodies: no ``self.x = ...`` attributes); ``functions`` and
methods with parameters, decorators and the return annotation, and a single unknown ``ret``, so
that the annotation is all that is known. Bodies are never flowed: a package's code says what it
does, not what it promises, and reading it would make the cost of a run grow with the environment.

An annotation that does not promise one thing is dropped (unknown): ``Union``/``Optional``/``X | Y``
anywhere in it, iterators and generators, ``Any``; so is a function defined more than once
(``@overload``, a version switch) with different annotations.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List

from ..source.precheck import parsed_or_none
from .facts import UNKNOWN, annotation, bound_names, dotted, target_names
from .summaries import _record_factory, class_bases, decorators, empty_summary, import_bindings, signature, walk_statements

LIBRARY_FORMAT = 1  # bump when the shape or the rules of a library summary change (disk cache key)
_VAGUE = frozenset("""Union Optional Any Iterator Iterable Generator AsyncIterator AsyncIterable AsyncGenerator
    Awaitable Coroutine TypeGuard TypeIs Callable""".split())


def summarize_library(source: bytes) -> Dict[str, Any]:
    """The annotation-only summary of an installed module's source; empty when it does not parse."""
    tree = parsed_or_none(source)
    if tree is None:
        return empty_summary()
    try:
        return _module(tree)
    except RecursionError:
        return empty_summary()


def definite(ann: Any) -> Any:
    """``ann`` when it promises one thing; None for a union, an optional, an iterator, ``Any``."""
    if ann is None:
        return None
    if isinstance(ann, str):
        return None if ann.rsplit(".", 1)[-1] in _VAGUE else ann
    outer, inner = ann[0], ann[1]
    if outer is None or outer.rsplit(".", 1)[-1] in _VAGUE or any(definite(a) is None for a in inner if a != "..."):
        return None
    return ann


def _module(tree: ast.Module) -> Dict[str, Any]:
    summary = empty_summary()
    symbols = summary["symbols"]
    functions: Dict[str, List[Dict[str, Any]]] = {}
    for stmt in walk_statements(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, target in import_bindings(stmt):
                if local == "*":
                    summary["star"].append(target)
                else:
                    summary["imports"][local] = target
                    symbols.setdefault(local, []).append(["import", target])
        elif isinstance(stmt, ast.ClassDef):
            summary["classes"][stmt.name] = _class(stmt)
            symbols.setdefault(stmt.name, []).append(["class"])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(stmt.name, []).append(_function(stmt, method=False))
            if ["def"] not in symbols.get(stmt.name, ()):
                symbols.setdefault(stmt.name, []).append(["def"])
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            _assignment(stmt, summary)
        else:
            for name in bound_names(stmt):
                symbols.setdefault(name, []).append(["value", UNKNOWN])
    summary["functions"] = {name: _one(defs) for name, defs in functions.items()}
    return summary


def _assignment(stmt: ast.stmt, summary: Dict[str, Any]) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    value = stmt.value
    for target in targets:
        if not isinstance(target, ast.Name):
            for name in target_names(target):
                summary["symbols"].setdefault(name, []).append(["value", UNKNOWN])
            continue
        record = _record_factory(value)
        if record is not None:
            summary["classes"][target.id] = record
            fact: List[Any] = ["class"]
        elif value is not None and dotted(value):
            fact = ["value", ["name", dotted(value)]]  # an alias: ``Conv = GraphConv``
        elif value is None and isinstance(stmt, ast.AnnAssign) and definite(annotation(stmt.annotation)):
            fact = ["value", ["ann", annotation(stmt.annotation)]]
        else:
            fact = ["value", UNKNOWN]
        summary["symbols"].setdefault(target.id, []).append(fact)


def _class(node: ast.ClassDef) -> Dict[str, Any]:
    summary: Dict[str, Any] = {"bases": class_bases(node), "deco": decorators(node), "fields": [], "attrs": {},
                               "methods": {}, "module_used": []}
    methods: Dict[str, List[Dict[str, Any]]] = {}
    for stmt in walk_statements(node.body):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            summary["fields"].append(stmt.target.id)
            ann = definite(annotation(stmt.annotation))
            summary["attrs"].setdefault(stmt.target.id, []).append(["ann", ann] if ann is not None else UNKNOWN)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.setdefault(stmt.name, []).append(_function(stmt, method=True))
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in target_names(target):
                    summary["attrs"].setdefault(name, []).append(UNKNOWN)
    summary["methods"] = {name: _one(defs) for name, defs in methods.items()}
    return summary


def _function(node: ast.AST, method: bool) -> Dict[str, Any]:
    deco, _, _, names = signature(node, method)
    return {"params": names, "deco": deco, "ann": definite(annotation(node.returns)),  # type: ignore[attr-defined]
            "ret": [UNKNOWN], "gen": False, "async": isinstance(node, ast.AsyncFunctionDef)}


def _one(defs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One summary for a name defined several times (overloads, version switches): the annotation
    only when every definition agrees; the implementation's (the last) decorators and parameters."""
    last = dict(defs[-1])
    if any(d["ann"] != last["ann"] or d["async"] != last["async"] for d in defs):
        last["ann"] = None
    implementation = [d for d in defs if "overload" not in d["deco"] and "typing.overload" not in d["deco"]]
    if implementation:
        last["deco"] = implementation[-1]["deco"]
    return last
