"""The lint engine: one file's source in, its diagnostics out.

Cost model (see benchmarks/bench.py): most files cannot match any rule, so a regex prefilter
derived from the rules' own ``triggers`` (codes.py) skips them; of the rest, CPython's tree (source/precheck.py) tells
which rules can fire and which top-level statements need LibCST at all (plan/structure.py), so a file
no rule can fire in is answered without importing LibCST. The rest is parsed (rulepass/parsing.py: pruned by parse/,
then LibCST) and walked once by every active rule (rulepass/rule.py), and positions are computed only for
files that produced a violation (rulepass/fix_safety.py makes them diagnostics).

This module owns that order and the guards around it (a deep stack, no garbage collection while
a tree is alive, TCL001 for what cannot be parsed); it imports nothing of LibCST itself. The
names rule modules and others import from here (``Rule``, ``parse``, ``ParsedFile``, ...) are
handed on from the modules that own them on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Type, Union

from .diagnostics import Diagnostic
from .source.precheck import call_with_deep_stack, cpython_tree, decode_diagnostic, gc_paused, syntax_error_diagnostic
from .plan.structure import Plan, plan as structural_plan

if TYPE_CHECKING:
    from .parse.reparse import Reparser
    from .rulepass.rule import Rule
    from .semantic.project import ProjectIndex

Source = Union[str, bytes]

#: Names importable from here, and the module that owns each (imported on first use: LibCST).
_HANDED_ON = {
    "Rule": "rulepass.rule", "FileContext": "rulepass.rule", "Violation": "rulepass.rule",
    "NodeFix": "rulepass.rule", "run_rules": "rulepass.rule",
    "ParsedFile": "rulepass.parsing", "parse": "rulepass.parsing", "parse_active": "rulepass.parsing",
    "_decode_lines": "rulepass.parsing", "kept_statement_lines": "rulepass.parsing",
    "effective_applicability": "rulepass.fix_safety", "to_diagnostics": "rulepass.fix_safety",
    # what this module's namespace held before the split, for modules written against it
    "Binding": "semantic", "Kind": "semantic", "Loop": "semantic", "Read": "semantic", "SemanticModel": "semantic",
    "Value": "semantic", "ImportMap": "imports", "ProjectIndex": "semantic.project", "Applicability": "diagnostics",
    "Fix": "diagnostics", "Reparser": "parse.reparse",
}


def __getattr__(name: str) -> Any:
    owner = _HANDED_ON.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{owner}", __package__), name)
    globals()[name] = value
    return value


def lint_source(source: Source, path: str, rule_types: Sequence[Type["Rule"]], prune: bool = True,
                project: Optional["ProjectIndex"] = None, prefiltered: bool = False,
                reparser: Optional["Reparser"] = None, structural: bool = True,
                plan: Optional[Plan] = None) -> List[Diagnostic]:
    """All diagnostics for one file's source. Never raises for bad input: it reports TCL001.

    A file Python cannot decode is reported even when no rule could match it; the parse
    and the rules run on a thread with a deep stack (precheck.py). ``project`` is the file's
    project index (default: found from ``path``); pass one to read afterwards which other
    files the result depended on (``project.dependencies()``). ``prefiltered``: every rule
    of ``rule_types`` passed the prefilter on ``source`` already (the runner ran it once).
    ``reparser``: re-use the parse of the statements unchanged since its last parse (the editor).
    ``structural``: run the structural prefilter (structure.py) on CPython's tree, unless ``plan``
    is its answer already (the runner's, with the tree, which the engine then lets go of).
    """
    problem = decode_diagnostic(path, source) if isinstance(source, bytes) else None
    if problem is not None:
        return [problem]
    active = list(rule_types) if prefiltered else [r for r in rule_types if r.may_match(source)]
    if plan is not None:
        active = [r for r in active if r.code in plan.codes]
    if not active:
        return []
    if project is None:
        from .semantic.project import ProjectIndex

        project = ProjectIndex.for_path(path)
    return call_with_deep_stack(_lint_parsed, source, path, active, prune, project, reparser, structural, plan)


def _lint_parsed(source: Source, path: str, active: Sequence[Type["Rule"]], prune: bool,
                 project: "ProjectIndex", reparser: Optional["Reparser"] = None, structural: bool = True,
                 plan: Optional[Plan] = None) -> List[Diagnostic]:
    with gc_paused():
        try:
            if plan is None and structural:
                plan = _plan(source, active, reparser)
                active = [r for r in active if r.code in plan.codes]
                if not active:
                    return []  # no rule can fire: LibCST is not even imported
        except SyntaxError as error:  # TooDeeplyNested
            return [syntax_error_diagnostic(path, error, source)]
        import libcst as cst

        from .rulepass.fix_safety import to_diagnostics
        from .rulepass.parsing import parse_active

        try:
            parsed = parse_active(source, active, prune, path, project, reparser, plan)
        except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as error:  # TooDeeplyNested too
            return [syntax_error_diagnostic(path, error, source)]
        plan = None
        diagnostics = to_diagnostics(path, parsed) if parsed.violations else []
        del parsed  # freed before collection resumes: its nodes, all young, would be walked once more
        return diagnostics


def _plan(source: Source, active: Sequence[Type["Rule"]], reparser: Optional["Reparser"] = None) -> Plan:
    """The structural prefilter's plan for ``source``; every rule (and no drop) when CPython rejects it.
    ``reparser``: an editor's buffer's (its CPython tree is compiled again only where an edit changed
    it, and the shapes of its unchanged statements are re-used)."""
    codes = frozenset(r.code for r in active)
    tree = reparser.cpython_tree(source) if reparser is not None and isinstance(source, bytes) \
        else cpython_tree(source)  # raises TooDeeplyNested
    return structural_plan(tree, source, codes, reparser is not None) if tree is not None else Plan(codes)
