"""Storage identity: which values share memory, where that memory is written in place, and who reads it.

What it knows (verified facts in shared/torch-facts.md, "Aliasing hazards"): ``.detach()``, ``.data``,
``.numpy()``, ``torch.from_numpy``, ``torch.as_tensor``, ``np.asarray``, basic slicing and view methods
(``view``, ``transpose``, ``permute``, ...) give a value over the *same* storage (``alias_of``); a name,
a container item (``xs.append(t)``, ``d[k] = t``) or ``[t] * n`` holds the same tensor. Copies
(``.clone()``, ``torch.tensor``, ``.copy()``, arithmetic) start a new storage: they are not aliases.
``.to()``/``.cpu()``/``.contiguous()``/``reshape`` may or may not copy: unknown, never an alias.

An in-place write (``writes_at``) is a method ending in ``_`` (not ``requires_grad_``/``share_memory_``),
a function ending in ``_`` on its first argument (``nn.init.zeros_(w)``), a subscript store
(``x[i] = v``), an augmented assignment (``x += v``, in place on a tensor or array), ``out=x``, and a
known optimizer's ``step()`` (it writes every parameter it holds). Rebinding (``x = x + 1``) is not one.

The API for rules (``SemanticModel.storage``; every answer is computed at most once per flow scope):

- ``alias_of(expr) -> (how, source) | None``: ``expr`` shares storage with ``source`` (a sub-expression);
  ``how`` is the alias-making method, attribute or function (``"detach"``, ``"data"``, ``"numpy"``,
  ``"from_numpy"``, ``"as_tensor"``, ``"asarray"``, ``"view"``, ``"subscript"``, ...).
- ``root(expr) -> (source_expr, [hows])``: ``alias_of`` followed to the end (``t.detach().numpy()`` -> ``t``).
- ``is_array(expr, stack)``: known to be a numpy array (made by a numpy constructor or ``.numpy()``).
- ``writes_at(flow, cfg) -> [Write]``: the in-place writes of one statement of the flow graph;
  ``Write.key`` the written name or chain (None for an optimizer step), ``Write.read`` its Read,
  ``Write.how`` (method, function, subscript, aug, out, step), ``Write.items`` how many subscripts lie
  between the name and the written tensor (``xs[i].add_()``: 1; ``xs[i] = v``: a subscript store at
  depth 0, which rebinds an element of a list but writes a tensor), ``Write.node`` the statement part.
- ``Side``: one holder of the storage: a key and the bindings that hold it (``side_of_read(read)`` for
  the name read where the alias is made, ``side_of_binding(b)`` for the name it is bound to).
  ``x += v`` keeps a side (it is a write, not a rebinding).
- ``hazard(flow, start, written, read, param_written=False, elements=False) -> (Write, Read) | None``: the
  first path of the flow graph from statement ``start`` on which side ``written`` is written in place and then side
  ``read`` is read (a value read: not ``.shape``/``.dtype``/``len()``, not a store into it, not the
  receiver of ``.append``), neither side rebound on the way; the reads of the writing statement itself come
  before its write (they count when reached again, on a later pass of a loop). ``param_written``: an optimizer step
  counts as a write of ``written`` (it holds the parameters). One walk per question over (statement,
  written yet), only when a written side's key is written somewhere in the scope; all walks of a scope
  together visit at most ``BUDGET_PER_NODE`` states per statement (then: silent), so the cost stays
  linear in the size of the file. ``elements``: a read follows the latest write on its path, and ``x[k]``
  read after a write of ``y[k]`` across a rebinding of ``k`` is not counted (elements.py: another pass's
  element).

For TCL112 (``[t] * n`` then an element written): ``repeated(expr)`` gives ``t`` for ``[t] * n`` /
``n * [t]``; take the list's binding as the side (``side_of_binding``), pass it as both ``written``
and ``read``, and ``items=1`` so that only writes through an element count (``xs[i].add_()``,
``xs[i][j] = v``, ``xs[i] += v``), not ``xs[i] = v`` (a rebinding of an element of a list).
Containers that hold a tensor (``xs.append(t)``, ``d[k] = t``) are sides too: ``side_of_read`` of the
container's read at the storing statement (see rules/tcl114_reference_kept_as_snapshot.py).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import libcst as cst

from ..codes import VIEW_ATTRIBUTES, VIEW_METHODS, is_in_place
from ..imports import dotted_name
from .elements import another_element
from .kinds import Kind, known

#: (The view methods and attributes, VIEW_METHODS and VIEW_ATTRIBUTES, are in codes.py: structure.py reads them.)
#: Functions that share the memory of their (first) argument when called with it alone.
SHARING_FUNCTIONS = {"torch.from_numpy": "from_numpy", "torch.as_tensor": "as_tensor", "numpy.asarray": "asarray",
                     "torch.asarray": "as_tensor"}
#: Attributes and methods whose reading does not observe the values.
METADATA = frozenset("""shape dtype device ndim size dim numel ndimension nelement is_cuda requires_grad grad
    grad_fn is_leaf layout names stride element_size data_ptr itemsize nbytes is_contiguous""".split())
#: Methods of a container that store into it rather than read it.
STORES = frozenset({"append", "extend", "insert", "clear", "__setitem__"})
#: Methods that overwrite the whole receiver without reading it.
OVERWRITES = frozenset({"zero_", "fill_", "copy_", "normal_", "uniform_", "set_", "random_", "bernoulli_",
                        "exponential_", "geometric_", "cauchy_", "log_normal_"})
#: numpy functions that make a new array.
ARRAY_MAKERS = frozenset("""array asarray ascontiguousarray zeros ones empty full zeros_like ones_like empty_like
    full_like arange linspace load frombuffer fromfile stack concatenate vstack hstack copy
    random.rand random.randn random.random random.uniform random.normal random.randint""".split())


#: ``hazard``'s walks over one flow scope visit at most this many states per statement (plus a base): the
#: cost of every question about a scope stays linear in its size, whatever the number of aliases in it.
BUDGET_PER_NODE = 8
BUDGET_BASE = 1000


class Write(NamedTuple):
    key: Optional[str]
    read: Optional[object]  # the Read of the written name (None for an optimizer step)
    how: str
    items: int
    node: cst.CSTNode


class Side(NamedTuple):
    key: str
    defs: FrozenSet[int]  # ids of the bindings that hold the storage (aug bindings added)


class Storage:
    def __init__(self, model) -> None:
        self.model = model
        self._writes: Dict[int, List[List[Write]]] = {}
        self._reads: Dict[int, List[List[object]]] = {}
        self._parents: Dict[int, Dict[int, cst.CSTNode]] = {}
        self._written: Dict[int, set] = {}
        self.visited: Dict[int, int] = {}  # states walked by ``hazard`` per flow scope (bounded: see BUDGET)

    # --- values ----------------------------------------------------------------------------------

    def alias_of(self, expr: cst.BaseExpression) -> Optional[Tuple[str, cst.BaseExpression]]:
        if isinstance(expr, cst.Attribute) and expr.attr.value in VIEW_ATTRIBUTES:
            return expr.attr.value, expr.value
        if isinstance(expr, cst.Subscript) and all(_basic_index(e) for e in expr.slice):
            return "subscript", expr.value
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in VIEW_METHODS:
            if func.attr.value == "numpy" and expr.args:
                return None  # numpy(force=True) may copy
            return func.attr.value, func.value
        how = SHARING_FUNCTIONS.get(self.model.imports.qualified_name(func) or "")
        if how is not None and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
            return how, expr.args[0].value
        return None

    @staticmethod
    def repeated(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """``t`` for ``[t] * n`` / ``n * [t]`` (one object ``n`` times), else None."""
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            for side in (expr.left, expr.right):
                if isinstance(side, cst.List) and len(side.elements) == 1 \
                        and not isinstance(side.elements[0], cst.StarredElement):
                    return side.elements[0].value
        return None

    def root(self, expr: cst.BaseExpression) -> Tuple[cst.BaseExpression, List[str]]:
        hows: List[str] = []
        while True:
            found = self.alias_of(expr)
            if found is None:
                return expr, hows
            hows.append(found[0])
            expr = found[1]

    def is_array(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> bool:
        """Known to be a numpy array: every binding that reaches it is a numpy constructor or ``.numpy()``."""
        if self._array_value(expr):
            return True
        if dotted_name(expr) is None:
            return False
        found = self.model.reaching(expr, stack)
        return bool(found) and all(b.how in ("assign", "aug") and b.value is not None and not b.path
                                   and (b.how == "aug" or self._array_value(b.value)) for b in found)

    def _array_value(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy" and not expr.args:
                return True
            name = self.model.imports.qualified_name(expr.func) or ""
            return name.startswith("numpy.") and name[6:] in ARRAY_MAKERS
        return False

    def is_parameter(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> bool:
        return self.model.value_of(expr, stack).kind is Kind.PARAMETER

    # --- sides -----------------------------------------------------------------------------------

    def side_of_read(self, read) -> Side:
        return self._side(read.key, [id(b) for b in self.model.bindings_of_read(read)], read.scope.flow)

    def side_of_binding(self, binding) -> Side:
        return self._side(binding.key, [id(binding)], binding.scope.flow)

    def _side(self, key: str, ids: List[int], flow) -> Side:
        held = set(ids)
        for b in flow.bindings.get(key, ()):  # in pass order: an aug binding comes after what it updates
            if b.how == "aug" and any(id(p) in held for p in self.model.flatten(b.previous or ())):
                held.add(id(b))
        return Side(key, frozenset(held))

    def holds(self, side: Side, read) -> bool:
        return read is not None and read.key == side.key and read.defs is not None \
            and any(id(b) in side.defs for b in self.model.flatten(read.defs))

    # --- writes and reads per statement ----------------------------------------------------------

    def writes_at(self, flow, cfg: int) -> List[Write]:
        table = self._writes.get(id(flow))
        if table is None:
            table = self._writes[id(flow)] = [self._statement_writes(flow, i) for i in range(len(flow.cfg_nodes))]
        return table[cfg]

    def _statement_writes(self, flow, cfg: int) -> List[Write]:
        out: List[Write] = []
        stmt = flow.cfg_nodes[cfg]
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                if isinstance(target.target, cst.Subscript):
                    self._add(out, target.target.value, "subscript", stmt, 0)
        elif isinstance(stmt, cst.AugAssign):
            self._add(out, stmt.target, "aug", stmt, 0)
        for call in flow.calls[cfg]:
            func = call.func
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "out":
                    self._add(out, arg.value, "out", call, 0)
            if isinstance(func, cst.Attribute):
                name = func.attr.value
                if name == "step" and known(self.model.evaluator.value(func.value)).kind is Kind.OPTIMIZER:
                    out.append(Write(None, None, "step", 0, call))
                    continue
                if is_in_place(name):
                    qualified = self.model.imports.qualified_name(func) or ""
                    if qualified.startswith(("torch.", "numpy.")) and "." in qualified[6:]:
                        if call.args and call.args[0].keyword is None:  # torch.nn.init.zeros_(w)
                            self._add(out, call.args[0].value, "function", call, 0)
                    else:
                        self._add(out, func.value, "method", call, 0)
            elif isinstance(func, cst.Name) and is_in_place(func.value) and call.args and call.args[0].keyword is None \
                    and (self.model.imports.qualified_name(func) or "").startswith("torch."):
                self._add(out, call.args[0].value, "function", call, 0)
        return out

    def _add(self, out: List[Write], expr: cst.BaseExpression, how: str, node: cst.CSTNode, items: int) -> None:
        while True:
            if isinstance(expr, cst.Subscript):
                items += 1
                expr = expr.value
                continue
            found = self.alias_of(expr)
            if found is None:
                break
            expr = found[1]
        key = dotted_name(expr)
        if key is not None:
            out.append(Write(key, self.model.reads.get(id(expr)), how, items, node))

    def is_write(self, write: Write, side: Side, param: bool = False, items: int = 0) -> bool:
        if write.key is None:
            return param
        return write.items >= items and self.holds(side, write.read)

    def reads_at(self, flow, cfg: int) -> List[object]:
        table = self._reads.get(id(flow))
        if table is None:
            table = self._reads[id(flow)] = [[] for _ in flow.cfg_nodes]
            for read in flow.reads:
                if 0 <= read.cfg < len(table):
                    table[read.cfg].append(read)
        return table[cfg]

    def is_value_read(self, read, flow) -> bool:
        """Whether the read looks at the values (not metadata, not a store into it, not overwritten)."""
        parent = self.parent(flow, read)
        if isinstance(parent, cst.Attribute) and parent.value is read.node:
            name = parent.attr.value
            if name in METADATA or name in STORES or name in OVERWRITES:
                return False
        if isinstance(parent, cst.Subscript) and parent.value is read.node:
            stmt = flow.cfg_nodes[read.cfg]
            if isinstance(stmt, cst.Assign) and any(t.target is parent for t in stmt.targets):
                return False
        if isinstance(parent, cst.Arg):
            call = self.parent(flow, parent)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in ("len", "id"):
                return False
        return True

    def parent(self, flow, node_or_read) -> Optional[cst.CSTNode]:
        node = getattr(node_or_read, "node", node_or_read)
        cfg = getattr(node_or_read, "cfg", None)
        parents = self._parents.setdefault(id(flow), {})
        if id(node) not in parents and cfg is not None and 0 <= cfg < len(flow.cfg_nodes):
            _index_parents(flow.cfg_nodes[cfg], parents)
        return parents.get(id(node))

    # --- the hazard ------------------------------------------------------------------------------

    def hazard(self, flow, start: int, written: Sequence[Side], read: Sequence[Side], param_written: bool = False,
               items: int = 0, skip: Optional[cst.CSTNode] = None, elements: bool = False):
        """A path from statement ``start`` (exclusive) where one of ``written`` is written in place, then
        one of ``read`` is read (see the module doc). Returns ``(Write, Read)`` or None. ``elements``: a read
        of ``x[k]`` after a write of ``y[k]`` across a rebinding of ``k`` does not count (elements.py)."""
        # A binding of a side's key ends the path, its own binding included: reached again (a loop), the
        # name holds a new value. A side whose key is rebound by the statement itself is gone from the start.
        kills: Dict[str, set] = {}
        rebound = set()
        for side in list(written) + list(read):
            kills[side.key] = set()
            for b in flow.bindings.get(side.key, ()):
                if b.how not in ("aug", "phi"):
                    kills[side.key].add(b.cfg)
                    if b.cfg == start and id(b) not in side.defs:
                        rebound.add(side.key)
        keys = self._written_keys(flow)
        written = [side for side in written if side.key not in rebound and (side.key in keys or param_written
                                                                           and None in keys)]
        read = [side for side in read if side.key not in rebound]
        if not written or not read:
            return None
        budget = BUDGET_PER_NODE * len(flow.cfg_nodes) + BUDGET_BASE - self.visited.get(id(flow), 0)
        seen = set()
        pending: List[Tuple[int, Optional[Write]]] = [(s, None) for s in flow.succ[start]]
        while pending:
            node, write = pending.pop()
            if (node, write is None) in seen:
                continue
            seen.add((node, write is None))
            budget -= 1
            if budget < 0:  # the scope's walks have cost enough: silent from here on (linear in its size)
                self.visited[id(flow)] = BUDGET_PER_NODE * len(flow.cfg_nodes) + BUDGET_BASE
                return None
            if write is not None and node != start:
                for r in self.reads_at(flow, node):
                    if r.node is not skip and any(self.holds(side, r) for side in read) \
                            and self.is_value_read(r, flow) \
                            and not (elements and another_element(self, flow, write, r)):
                        self.visited[id(flow)] = self.visited.get(id(flow), 0) + len(seen)
                        return write, r
            if any(node in kills[side.key] for side in read):
                continue
            cut = any(node in kills[side.key] for side in written)
            if write is None and cut:
                continue
            if write is None or elements and not cut:  # elements: a read follows the latest write on its path
                write = next((w for w in self.writes_at(flow, node)
                              if any(self.is_write(w, side, param_written, items) for side in written)), write)
            pending.extend((s, write) for s in flow.succ[node])
        self.visited[id(flow)] = self.visited.get(id(flow), 0) + len(seen)
        return None

    def _written_keys(self, flow) -> set:
        """Every key written in place somewhere in the scope (None: an optimizer step)."""
        keys = self._written.get(id(flow))
        if keys is None:
            keys = self._written[id(flow)] = {w.key for i in range(len(flow.cfg_nodes)) for w in self.writes_at(flow, i)}
        return keys


def _basic_index(element: cst.SubscriptElement) -> bool:
    """An index that gives a view: a slice, an integer, ``None`` or ``...`` (not a tensor or a list)."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return True
    value = index.value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Ellipsis)) or isinstance(value, cst.Name) and value.value == "None"


def _index_parents(root: cst.CSTNode, parents: Dict[int, cst.CSTNode]) -> None:
    from ..walk import child_fields
    stack = [root]
    while stack:
        node = stack.pop()
        for name in child_fields(type(node)):
            value = getattr(node, name)
            for child in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(child, cst.CSTNode):
                    parents[id(child)] = node
                    stack.append(child)
