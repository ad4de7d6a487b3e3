#!/usr/bin/env python
"""Which call sites keep TCL101/TCL107/TCL108 in files where the lint finds nothing of them, and why.

The structural plan (torchcopy_lint/plan/) drops these rules from a file when it proves every ``torch.tensor(x)``,
``torch.tensor([a, b])`` / ``torch.as_tensor(xs)`` and ``copy.copy(x)`` argument never a tensor (plan/arguments.py,
plan/function_values.py). For every ``.py`` file under the given directories that passes the plan for one of those
rules and in which the whole lint (LibCST + the semantic model, the project index found from the path) reports
nothing of it, this prints each call site whose tokens keep the rule, with the argument's text and the reason the
proof fails, as far as the plan can say; then the reasons counted per rule. A diagnostic: slow (it lints each kept
file once), never imports torch::

    python benchmarks/plan_keepers.py DIR [DIR ...] [--select TCL101,TCL108] [--quiet]
"""

from __future__ import annotations

import argparse
import ast
import collections
import sys
from pathlib import Path
from typing import List, Optional, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchcopy_lint.codes import DEFAULT_CODES, active_codes  # noqa: E402
from torchcopy_lint.engine import lint_source  # noqa: E402
from torchcopy_lint.plan import structure  # noqa: E402
from torchcopy_lint.plan.arguments import (OPAQUE, REFINED_CALLS, argument_tokens, first_argument,  # noqa: E402
                                           placed_calls)
from torchcopy_lint.plan.function_values import Site, may_be_tensor, may_be_tensor_list  # noqa: E402
from torchcopy_lint.plan.unless_conditions import breaks  # noqa: E402
from torchcopy_lint.rules import RULES_BY_CODE  # noqa: E402
from torchcopy_lint.source.precheck import cpython_tree  # noqa: E402

ARGUMENT_CODES = ("TCL101", "TCL107", "TCL108")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _name_reason(name: str, site: Site, strict: bool = False) -> str:
    """Why the scope cannot prove ``name`` never a tensor (function_values.ArgumentScope's own records); ``strict``:
    nor a value with attributes."""
    scope = site.scope
    if strict and name in scope._guarded:
        return "name narrowed by a guard (any: a module's attributes may be tensors)"
    if name in scope._tensor_guards and scope._tensor_guards[name] is None:
        return "name narrowed by a guard that may say tensor (isinstance with a tensor class, is_tensor, type() is)"
    if name in scope._bound_otherwise:
        return "name bound otherwise (global/nonlocal/import/def/handler/nested scope)"
    if name in scope._params:
        if name not in scope._annotated_safe:
            return "the method's first parameter (self)"
        if scope._annotated_class.get(name) is None:
            return "parameter annotated with a class that may be a tensor's"
        if not scope.only_parameter(name, site):
            return "parameter rebound before the read: " + _values_reason(name, site)
        return "parameter (unproved)"
    if not scope.binds(name):
        return "free name (the module's or an enclosing function's)"
    return _values_reason(name, site)


def _values_reason(name: str, site: Site) -> str:
    scope = site.scope
    values = scope._values.get(name, ())
    if name in scope._iterated and len(scope._iterated[name]) == len(values):
        iterables = scope._iterated[name]
        return "loop variable over " + ", ".join(sorted({_kind(i) for i in iterables}))
    if None in values:
        return "bound by a loop, an unpacking, `with ... as`, a comprehension or `del`"
    kinds = sorted({_kind(v) for v in values if may_be_tensor(v, site, set(), {name})})  # type: ignore[arg-type]
    return "bound to " + ", ".join(kinds) if kinds else "bound (unproved)"


def _kind(expr: ast.AST) -> str:
    """A short description of an expression: its class, a call's or an attribute's last name."""
    if expr.__class__ is ast.Call:
        func = expr.func  # type: ignore[attr-defined]
        last = func.attr if func.__class__ is ast.Attribute else getattr(func, "id", "?")
        return f"call {last}()"
    if expr.__class__ is ast.Attribute:
        return f"attribute .{expr.attr}"  # type: ignore[attr-defined]
    return expr.__class__.__name__


def reason(expr: ast.AST, site: Optional[Site], bindings, listed: bool = False) -> str:
    """Why the plan keeps ``expr`` as what the rule needs (``listed``: a list of tensors, TCL107's)."""
    if site is None:
        return "read at module level, in a class body or a lambda (no function scope)"
    assumed: Set[str] = set()
    if not (may_be_tensor_list if listed else may_be_tensor)(expr, site, assumed):
        broken = sorted(name for name in assumed if bindings is None or breaks(name, bindings))
        return "proof rests on conditions the file breaks: " + ", ".join(broken)
    cls = expr.__class__
    if listed:
        if cls in (ast.List, ast.Tuple):
            element = next(e for e in expr.elts if may_be_tensor(e, site, set()))  # type: ignore[attr-defined]
            return "a display, its elements: " + reason(element, site, bindings)
        if cls is ast.Name and site.scope.binds(expr.id):  # type: ignore[attr-defined]
            return "a name bound to a display or call: " + _values_reason(expr.id, site)  # type: ignore[attr-defined]
        return "a list(...)/tuple(...) call or a free name"
    operands = {ast.BinOp: ("left", "right"), ast.UnaryOp: ("operand",), ast.IfExp: ("body", "orelse"),
                ast.Compare: ("left", "comparators"), ast.NamedExpr: ("value",)}.get(cls)
    if operands:
        parts = [p for f in operands for p in (getattr(expr, f) if f == "comparators" else [getattr(expr, f)])]
        inner = next((p for p in parts if may_be_tensor(p, site, set())), None)
        return f"{cls.__name__} of " + (reason(inner, site, bindings) if inner is not None else "?")
    if cls is ast.Name:
        return _name_reason(expr.id, site)  # type: ignore[attr-defined]
    if cls is ast.Attribute:
        root = expr
        while root.__class__ is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if root.__class__ is not ast.Name:
            return f"attribute of a {_kind(root)}"
        if root.id == "self":  # type: ignore[attr-defined]
            return "attribute of self"
        if root.id in site.scope._attributes_stored:  # type: ignore[attr-defined]
            return "attribute of a name whose attributes the function stores"
        return "attribute of a name: " + _name_reason(root.id, site, True)  # type: ignore[attr-defined]
    if cls is ast.Call:
        return "result of " + _kind(expr)
    return f"a {cls.__name__} expression"


def keepers(statement: ast.stmt, code: str, plan: structure.Plan) -> List[Tuple[ast.Call, str]]:
    """The calls in ``statement`` whose own tokens keep ``code``, each with the reason."""
    found = []
    scoped = plan.scoped and isinstance(statement, _DEFINITIONS)
    scopes: dict = {}
    proven: dict = {}
    for call, function, is_method, holder, looping in placed_calls(statement, None, None, False, proven):
        func = call.func
        called = func.attr if func.__class__ is ast.Attribute else getattr(func, "id", None)
        site = None
        if scoped and called in REFINED_CALLS and function is not None and function is not OPAQUE:
            site = Site(scopes, (function, is_method), (holder.lineno, holder.col_offset), looping)
        tokens: Set[str] = set()
        argument_tokens(call, tokens.add, site, proven.get(id(call)) if scoped else None)
        if not structure.can_fire(code, structure.resolved(tokens, plan.aliases, plan.bindings)):
            continue
        first = first_argument(call)
        data = first.value if first.__class__ is ast.keyword else first  # type: ignore[union-attr]
        if code == "TCL108":
            why = reason(call.args[0], site, plan.bindings)
        elif proven.get(id(call)) is not None and scoped and data is call.args[0]:
            why = "a guard arm's condition the file breaks: " + ", ".join(sorted(proven[id(call)][1]))
        else:
            why = reason(data, site, plan.bindings, code == "TCL107")
        found.append((call, why))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="+", type=Path, help="directories")
    parser.add_argument("--select", default=",".join(ARGUMENT_CODES), help="the rules to explain")
    parser.add_argument("--quiet", action="store_true", help="only the counts")
    args = parser.parse_args()
    wanted = frozenset(args.select.split(","))
    counts: collections.Counter = collections.Counter()
    files: collections.Counter = collections.Counter()
    reached = 0
    for path in sorted(p for root in args.roots for p in root.rglob("*.py")):
        source = path.read_bytes()
        codes = active_codes(source, DEFAULT_CODES)
        if not codes:
            continue
        try:
            tree = cpython_tree(source)
        except SyntaxError:
            continue
        if tree is None:
            continue
        plan = structure.plan(tree, source, codes)
        reached += bool(plan.codes)
        kept = plan.codes & wanted
        if not kept:
            continue
        reported = {d.code for d in lint_source(source, str(path), [RULES_BY_CODE[c] for c in sorted(plan.codes)])}
        for code in sorted(kept - reported):
            files[code] += 1
            for statement in tree.body:
                for call, why in keepers(statement, code, plan):
                    counts[code, why] += 1
                    if not args.quiet:
                        text = ast.get_source_segment(source.decode("utf-8", "replace"), call) or "?"
                        print(f"{path}:{call.lineno} {code} {text.splitlines()[0][:100]}  -- {why}")
    print(f"\n{reached} files reach LibCST (default rules)")
    for code in sorted(wanted):
        print(f"{code}: {files[code]} files pass the plan with no finding of it")
        for (each, why), n in counts.most_common():
            if each == code:
                print(f"    {n:5d}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
