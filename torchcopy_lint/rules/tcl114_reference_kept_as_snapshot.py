"""TCL114: a tensor kept by reference as a snapshot (``best = w``, ``hist.append(x)``), then written in place."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..codes import BEST_NAME, HISTORY_NAME, SNAPSHOT_NAME, TRIGGERS
from ..imports import dotted_name
from ..semantic import Kind
from ._alias import AliasRule, binding_at
from ._build import method

_COMPARE = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


class ReferenceKeptAsSnapshot(AliasRule):
    """``best = w``, ``old = p.data``, ``history.append(x)`` and ``log[k] = x`` keep
    the tensor itself, not its value. When the tensor is then written in place
    (``w.add_(..)``, ``x += ..``, ``x[i] = v``) or stepped by an optimizer (a
    parameter), the kept reference follows it: every history entry is the last
    value, "best" is always the current weights, and a change computed as
    ``p - old`` is always zero. A snapshot is ``t.detach().clone()``.

    Flagged where the reference is stored, only with intent: a "best so far" test
    (under ``if acc > best_acc:`` that rebinds ``best_acc``), a name that says
    snapshot (``best``, ``old``, ``prev``, ``init``, ``before``, ``saved``,
    ...), or a history or log container (``history``, ``loss_log``, ``records``);
    and only when the stored reference is read after the write, on the same path. A
    list of parameters read after ``step()`` (``params.append(p)``,
    ``list(model.parameters())``) is meant to follow the model: silent. The fix
    ``t.detach().clone()`` is unsafe: the kept value no longer follows the tensor
    (that is the point) and no longer carries its graph.
    """

    code = "TCL114"
    name = "reference-kept-as-snapshot"
    message = (
        "a tensor kept by reference is not a snapshot: it follows later in-place writes of its source; "
        "store `t.detach().clone()`"
    )
    triggers = TRIGGERS["TCL114"]  # in codes.py, importable without LibCST

    VALID = [
        "import torch\nw = torch.zeros(3)\nbest = w.detach().clone()\nw.add_(1)\nprint(best)",
        "import torch\nw = torch.zeros(3)\nbest = w\nw = w + 1\nprint(best)",
        "import torch\nw = torch.zeros(3)\nbest = w\nw.add_(1)",
        "import torch\nx = torch.zeros(3)\nhist = []\nfor i in range(3):\n    x = x + 1\n    hist.append(x)\nprint(hist)",
        "import torch\nm = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(m.parameters(), lr=1)\nparams = []\n"
        "for p in m.parameters():\n    params.append(p)\nopt.step()\nprint(params)",
        "import torch\nw = torch.zeros(3)\ny = w\nw.add_(1)\nprint(y)",
    ]
    INVALID = [
        "import torch\nw = torch.zeros(3)\nbest = w\nw.add_(1)\nprint(best)",
        "import torch\nx = torch.zeros(3)\nhist = []\nfor i in range(3):\n    hist.append(x)\n    x += 1\nprint(hist)",
        "import torch\nm = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(m.parameters(), lr=1)\n"
        "old = m.weight.data\nopt.step()\nprint(m.weight - old)",
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Subscript):
            container = target.value
            name = dotted_name(container)
            if name is not None and _may_intend(name) and self._is_container(container):
                self._stored(node.value, container, None)
            return
        key = dotted_name(target)
        if key is None:
            return
        if SNAPSHOT_NAME.search(key.split(".")[-1]) and _plain_reference(node.value) or self._under_comparison():
            self._stored(node.value, None, target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(node.args) == 1 \
                and node.args[0].keyword is None and not node.args[0].star \
                and dotted_name(func.value) is not None and isinstance(self.context.parent(), cst.Expr):
            self._stored(node.args[0].value, func.value, None)

    def _stored(self, value: cst.BaseExpression, container: Optional[cst.BaseExpression],
                target: Optional[cst.BaseExpression]) -> None:
        if container is not None and not _may_intend(dotted_name(container) or ""):
            return  # outputs.append(h): no intent (asked before the kinds, which may read other modules)
        storage = self.context.semantic.storage
        source, hows = storage.root(value)
        key = dotted_name(source)
        if key is None or "numpy" in hows or "asarray" in hows or any(h in ("from_numpy", "as_tensor") for h in hows):
            return
        read = self.context.read(source)
        if read is None:
            return
        flow = read.scope.flow
        if container is not None:
            name = dotted_name(container)
            holder_read = self.context.read(container)
            if holder_read is None:
                return
            holder = storage.side_of_read(holder_read)
        else:
            name = dotted_name(target)
            binding = binding_at(read, name, target)
            if binding is None:
                return
            holder = storage.side_of_binding(binding)
        # The flow first, the kind after: the kind may read other modules, and most stores have no hazard.
        hazard = storage.hazard(flow, read.cfg, [storage.side_of_read(read)], [holder], param_written=True)
        if hazard is None:
            return
        kind = self.context.value_of(source).kind
        if not kind.is_tensor or container is not None and not self._container_intent(name, kind):
            return
        if kind is not Kind.PARAMETER:  # an optimizer's step writes parameters only
            hazard = storage.hazard(flow, read.cfg, [storage.side_of_read(read)], [holder])
            if hazard is None:
                return
        what = "stepped by the optimizer" if hazard[0].key is None else "written in place"
        detail = f"`{key}` {what} at line {{write}}, `{name}` read at line {{read}}"
        self.report_hazard(value, hazard, detail, replacement=self._fix(value, hows))

    @staticmethod
    def _container_intent(name: str, kind: Kind) -> bool:
        """A history or log, or a snapshot-named container; parameters only under a snapshot name (a
        list of parameters is meant to follow the model)."""
        last = name.split(".")[-1]
        return bool(SNAPSHOT_NAME.search(last)) or kind is Kind.TENSOR and bool(HISTORY_NAME.search(last))

    def _is_container(self, expr: cst.BaseExpression) -> bool:
        """Known to be a dict or a list (a store into a tensor or an array copies the values)."""
        if self.context.value_of(expr).kind in (Kind.MAPPING, Kind.TENSOR_LIST):
            return True
        found = self.context.reaching(expr)
        return bool(found) and all(b.how == "assign" and not b.path and _literal_container(b.value) for b in found)

    def _under_comparison(self) -> bool:
        """The assignment is in the body of a "best so far" test: an ``if`` that compares a name with
        ``<``/``>`` and whose body rebinds that name (``if loss < best: best = loss; best_w = w``)."""
        for node in reversed(self.context.stack):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(node, cst.If):
                test = node.test
                if not isinstance(test, cst.Comparison) or not any(isinstance(c.operator, _COMPARE)
                                                                    for c in test.comparisons):
                    return False
                compared = {dotted_name(e) for e in [test.left] + [c.comparator for c in test.comparisons]}
                return any(BEST_NAME.search(name.split(".")[-1]) for name in compared & _assigned(node.body) if name)
        return False

    @staticmethod
    def _fix(value: cst.BaseExpression, hows) -> cst.BaseExpression:
        if hows and hows[0] in ("detach", "data"):
            return method(value, "clone")
        return method(method(value, "detach"), "clone")


def _may_intend(name: str) -> bool:
    """A container name ``_container_intent`` may accept, whatever the kind of what is stored."""
    last = name.split(".")[-1]
    return bool(SNAPSHOT_NAME.search(last) or HISTORY_NAME.search(last))


def _literal_container(value) -> bool:
    if isinstance(value, (cst.Dict, cst.List, cst.DictComp, cst.ListComp)):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) \
        and (value.func.value if isinstance(value.func, cst.Name) else value.func.attr.value) \
        in ("dict", "list", "OrderedDict", "defaultdict")


def _assigned(block: cst.BaseSuite) -> set:
    """Names and chains the statements directly in ``block`` assign."""
    found = set()
    for stmt in getattr(block, "body", ()):
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                found.update(dotted_name(t.target) for t in small.targets)
    return found


def _plain_reference(value: cst.BaseExpression) -> bool:
    """``w``, ``self.w``, ``w.data`` or ``w.detach()``: what codes.SNAPSHOT_VALUE lets through the prefilter."""
    if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "detach":
        value = value.func.value
    return dotted_name(value) is not None
