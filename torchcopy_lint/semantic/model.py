"""The semantic model of one file: scopes analysed on demand, and the queries rules ask.

What it knows: which scope a node is in (from the rule's stack of ancestors), and it runs the forward
pass (flow.py) once per module or function scope, the first time a question needs it. Rules ask:
the value or kind of an expression at a point, the bindings that reach a read and the reads a
binding reaches, the loop around a statement and the calls in its body, and whether a training step
(``.backward()``, ``torch.autograd.backward``, ``<optimizer>.step()``) can run between a binding and
a read along some path of the flow graph.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..imports import ImportMap, dotted_name
from ..walk import block_paths, descendants
from .autograd import AutogradContexts
from .calls import Calls
from .classes import Classes
from .evaluate import Evaluator
from .flow import FlowPass
from .syntax import all_params, buffer_key, target_keys
from .field_types import FieldTypes
from .guards import Guards
from .library import ModuleCalls
from .kinds import UNKNOWN, Kind, Value, join, known
from .tensordict import TensorDictUses
from .scopes import Binding, Loop, Read, Scope, State
from . import vocabulary as v

_SCOPES = (cst.FunctionDef, cst.Module)


class SemanticModel:
    def __init__(self, module: cst.Module, imports: ImportMap, project=None, source=None, whole_source=None) -> None:
        """``source``: the text (str or bytes) ``module`` was parsed from, when the caller has it: some
        questions are answered from it for free (whether the file has a walrus at all). ``whole_source``: the
        file's whole text, where ``source`` had statements cut out (field_types.py reads every store)."""
        self.module = module
        self.source = source
        self.whole_source = whole_source if whole_source is not None else source
        self._whole_text: Optional[str] = None
        self.imports = imports
        self.project = project
        own = getattr(project, "module_name", None) or ""
        self.own_package = own.split(".")[0]  # linting timm itself: timm.* names are the project's
        self.reads: Dict[int, Read] = {}
        self.loops: Dict[int, Loop] = {}
        self.class_scopes: Dict[int, Scope] = {}
        self.module_classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
        self.truncations = 0
        self._functions: Dict[int, Tuple[cst.FunctionDef, Scope, Optional[cst.ClassDef]]] = {}
        self._function_scopes: Dict[int, Optional[Scope]] = {}
        self._module_scope: Optional[Scope] = None
        self._bound: Dict[int, Set[str]] = {}
        self._has_walrus: Optional[bool] = None
        self._flat: Dict[int, Tuple[Binding, ...]] = {}
        self._reads_of: Dict[int, Dict[int, List[Read]]] = {}
        self.guards = Guards(self)
        self.evaluator = Evaluator(self)
        self.classes = Classes(self)
        self.calls = Calls(self)
        self.module_calls = ModuleCalls(self)
        self.tensordicts = TensorDictUses(self)
        self.field_types = FieldTypes(self)
        self.autograd = AutogradContexts(self)
        self._storage = None
        self._grads = None

    @property
    def storage(self):
        """Storage identity: aliases, in-place writes and reads after them (storage.py), made on first use."""
        if self._storage is None:
            from .storage import Storage
            self._storage = Storage(self)
        return self._storage

    @property
    def grads(self):
        """Requires-grad evidence (requires_grad.py), made on first use."""
        if self._grads is None:
            from .requires_grad import RequiresGrad
            self._grads = RequiresGrad(self)
        return self._grads

    def outside_project(self, qualified: str) -> bool:
        """Whether ``qualified`` names a well-known library the index need not be asked about
        (``vocabulary.NON_PROJECT_ROOTS``), unless that library is the project being linted."""
        root = qualified.split(".")[0]
        return root in v.NON_PROJECT_ROOTS and root != self.own_package

    def release(self) -> None:
        """Let go of everything: the model's parts point back at it, its scopes at their bindings and reads
        and back (a flow scope at itself). Broken here, a file's tree is freed when its diagnostics are made,
        not by a collection that walks all of it once more. The model answers nothing afterwards."""
        scopes = {id(s): s for s in (self._module_scope, *self.class_scopes.values(),
                                     *self._function_scopes.values()) if s is not None}
        for read in self.reads.values():
            scopes.setdefault(id(read.scope), read.scope)
        for scope in list(scopes.values()):
            for bindings in scope.bindings.values():
                for binding in bindings:
                    scopes.setdefault(id(binding.scope), binding.scope)
        for scope in scopes.values():
            scope.__dict__.clear()
        self.__dict__.clear()

    # --- scopes ----------------------------------------------------------------------------------

    def module_scope(self) -> Scope:
        if self._module_scope is None:
            scope = self._module_scope = Scope(self.module, "module", None)
            FlowPass(self, scope).block(self.module.body, State(), scope)
        return self._module_scope

    def register_function(self, fn: cst.FunctionDef, enclosing: Scope, owner: Optional[cst.ClassDef]) -> None:
        self._functions[id(fn)] = (fn, enclosing, owner)

    def function_scope(self, fn: cst.FunctionDef) -> Optional[Scope]:
        """The analysed scope of a function whose enclosing scope has been analysed, else None."""
        if id(fn) in self._function_scopes:
            return self._function_scopes[id(fn)]
        self.module_scope()
        info = self._functions.get(id(fn))
        if info is None:
            return None
        _, enclosing, owner = info
        scope = Scope(fn, "function", enclosing, owner)
        self._function_scopes[id(fn)] = scope
        flow = FlowPass(self, scope)
        state = State()
        flow.node(fn, state)
        for index, param in enumerate(all_params(fn.params)):
            key = param.name.value
            flow.bind(state, scope, key, Binding(key, "param", param, scope, flow.cfg, path=(index,), owner=fn))
        flow.suite(fn.body, state, scope)
        return scope

    @property
    def whole_text(self) -> Optional[str]:
        """``whole_source`` as text, decoded once per file (bytes as latin-1: the rules search it for ASCII names,
        ``set_default_dtype``, ``with torch.device(``); None when the caller gave no text."""
        if self._whole_text is None and self.whole_source is not None:
            source = self.whole_source
            self._whole_text = source.decode("latin-1") if isinstance(source, bytes) else source
        return self._whole_text

    def ensure(self, stack: Sequence[cst.CSTNode]) -> None:
        """Analyse the scopes enclosing the node at the top of ``stack`` (module first)."""
        self.module_scope()
        for node in stack:
            if isinstance(node, cst.FunctionDef):
                self.function_scope(node)

    def _walrus_bound(self, stmt: cst.CSTNode) -> Set[str]:
        """Names that ``(name := ...)`` binds anywhere in ``stmt`` (a comprehension's walrus binds in
        the enclosing scope; functions, classes and lambdas are other scopes). Skipped, at the cost of
        one look at the text, in the files that have no walrus at all (without the source, the text is
        generated from the tree: as costly as a third of the parse)."""
        if self._has_walrus is None:
            text = self.source if self.source is not None else self.module.code
            self._has_walrus = (b":=" if isinstance(text, bytes) else ":=") in text
        scopes = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        if not self._has_walrus or isinstance(stmt, scopes):
            return set()
        scopes = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        return {n.target.value for n in descendants(stmt, stop=lambda n: isinstance(n, scopes))
                if isinstance(n, cst.NamedExpr) and isinstance(n.target, cst.Name)}

    def bound_keys(self, suite: cst.CSTNode) -> Set[str]:
        """Names and chains a block of statements binds (nested scopes excluded), memoized."""
        found = self._bound.get(id(suite))
        if found is None:
            found = set()
            for stmt in getattr(suite, "body", ()):
                found |= self._stmt_bound(stmt)
            self._bound[id(suite)] = found
        return found

    def _stmt_bound(self, stmt: cst.CSTNode) -> Set[str]:
        found = self._walrus_bound(stmt)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        found |= target_keys(t.target)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    found |= target_keys(small.target)
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        local = dotted_name(alias.asname.name if alias.asname else alias.name)
                        if local:
                            found.add(local.split(".")[0])
                elif isinstance(small, (cst.Del, cst.Global, cst.Nonlocal)):
                    found |= target_keys(small.target) if isinstance(small, cst.Del) \
                        else {n.name.value for n in small.names}
                elif isinstance(small, cst.Expr):
                    key = buffer_key(small.value)
                    if key is not None:
                        found.add(key)
            return found
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return {stmt.name.value}
        if isinstance(stmt, cst.For):
            found |= target_keys(stmt.target)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    found |= target_keys(item.asname.name)
        for handler in getattr(stmt, "handlers", ()) or ():
            if handler.name is not None:
                found |= target_keys(handler.name.name)
        for path in block_paths(stmt, []):
            found |= self.bound_keys(path[-1])
        return found

    # --- reaching definitions --------------------------------------------------------------------

    def flatten(self, defs) -> Tuple[Binding, ...]:
        """Real bindings behind a tuple of definitions: loop-head phis are expanded (memoized)."""
        if all(b.how != "phi" for b in defs):
            return tuple(defs)
        out: Dict[int, Binding] = {}
        for b in defs:
            for real in (self._flat_phi(b, set()) if b.how == "phi" else (b,)):
                out.setdefault(id(real), real)
        return tuple(out.values())

    def _flat_phi(self, phi: Binding, busy: Set[int]) -> Tuple[Binding, ...]:
        memo = self._flat.get(id(phi))
        if memo is not None:
            return memo
        busy.add(id(phi))
        out: Dict[int, Binding] = {}
        for b in phi.previous or ():
            if b.how == "phi":
                if id(b) in busy:
                    continue
                for real in self._flat_phi(b, busy):
                    out.setdefault(id(real), real)
            else:
                out.setdefault(id(b), b)
        result = tuple(out.values())
        if len(busy) == 1:
            self._flat[id(phi)] = result
        busy.discard(id(phi))
        return result

    def free_bindings(self, read: Read) -> List[Binding]:
        """Bindings of a name the read's scope does not bind before it: the enclosing scopes' (all of
        them, flow-insensitive: a function may run at any time)."""
        key = read.key
        if "." in key:
            return []
        scope: Optional[Scope] = read.scope.flow
        if key in scope.bindings and key not in scope.declared_global:
            return []
        scope = scope.parent.flow if scope.parent is not None else None
        while scope is not None:
            found = scope.bindings.get(key)
            if found:
                return list(found)
            scope = scope.parent.flow if scope.parent is not None else None
        return []

    def bindings_of_read(self, read: Read) -> List[Binding]:
        if read.defs is not None:
            return list(self.flatten(read.defs))
        return self.free_bindings(read)

    def free_value(self, read: Read, depth: int) -> Optional[Value]:
        found = self.free_bindings(read)
        return join([self.evaluator.binding(b, depth) for b in found]) if found else UNKNOWN

    # --- queries for rules -----------------------------------------------------------------------

    def value_of(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> Value:
        self.ensure(stack)
        return known(self.evaluator.value(expr))

    def kind_of(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> Kind:
        return self.value_of(expr, stack).kind.coarse

    def read_of(self, node: cst.CSTNode, stack: Sequence[cst.CSTNode]) -> Optional[Read]:
        self.ensure(stack)
        return self.reads.get(id(node))

    def reaching(self, node: cst.CSTNode, stack: Sequence[cst.CSTNode]) -> List[Binding]:
        """The bindings that can reach the read ``node`` (a Name or attribute chain)."""
        read = self.read_of(node, stack)
        return self.bindings_of_read(read) if read is not None else []

    def reads_of(self, binding: Binding) -> List[Read]:
        """Every read of the binding's scope that the binding can reach."""
        flow = binding.scope.flow
        index = self._reads_of.get(id(flow))
        if index is None:
            index = self._reads_of[id(flow)] = {}
            for read in flow.reads:
                if read.defs is not None:
                    for b in self.flatten(read.defs):
                        index.setdefault(id(b), []).append(read)
        return index.get(id(binding), [])

    def loop_of(self, stack: Sequence[cst.CSTNode]) -> Optional[Loop]:
        """The innermost ``for``/``while`` of the current function (or module) around the node."""
        self.ensure(stack)
        for node in reversed(stack):
            if isinstance(node, (cst.For, cst.While)):
                return self.loops.get(id(node))
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
        return None

    def is_backward(self, call: cst.Call) -> bool:
        """``x.backward(...)`` or ``torch.autograd.backward(...)``."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "backward" \
            or self.imports.qualified_name(func) == "torch.autograd.backward"

    def is_training_step(self, call: cst.Call) -> bool:
        """``x.backward(...)``, ``torch.autograd.backward(...)`` or ``opt.step()`` on a known optimizer."""
        if self.is_backward(call):
            return True
        func = call.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value == "step" and not call.args:
            return known(self.evaluator.value(func.value)).kind is Kind.OPTIMIZER
        return False

    def step_between(self, binding: Binding, read: Read, is_step=None) -> bool:
        """Whether some path from ``binding`` to ``read`` that does not rebind its key runs a statement
        with a call for which ``is_step`` holds (default: ``is_training_step``)."""
        flow = binding.scope.flow
        if read.scope.flow is not flow or binding.cfg < 0 or read.cfg < 0:
            return False
        is_step = is_step or self.is_training_step
        # Every binding of the key kills the path, this one included: coming back to it through a loop's
        # back edge means the key was bound anew (a fresh value, not the one read later).
        kills = {b.cfg for b in flow.bindings.get(binding.key, ()) if b.how != "phi"}
        stepping: Dict[int, bool] = {}

        def steps(node: int) -> bool:
            if node not in stepping:
                stepping[node] = any(is_step(c) for c in flow.calls[node])
            return stepping[node]

        seen = set()
        pending = [(s, False) for s in flow.succ[binding.cfg]]
        while pending:
            node, stepped = pending.pop()
            if node == read.cfg and stepped:
                return True
            if (node, stepped) in seen or node in kills:
                continue
            seen.add((node, stepped))
            now = stepped or steps(node)
            pending.extend((s, now) for s in flow.succ[node])
        return False
