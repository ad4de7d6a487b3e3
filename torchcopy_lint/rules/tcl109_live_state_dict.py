"""TCL109: a live ``state_dict()`` kept as a snapshot across a training step."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from ..codes import TRIGGERS
from ..diagnostics import Applicability
from ..engine import Rule
from ..imports import dotted_name, names_bound
from ..semantic import Binding, Kind

# Receivers whose state_dict() holds no live tensors (schedulers, grad scalers): not flagged when untyped.
_PLAIN_STATE = re.compile(r"sched|scaler", re.IGNORECASE)
_OPTIMIZER_NAME = re.compile(r"(?:^|_)(?:opt|optim|optimizer)(?:$|_)", re.IGNORECASE)


class LiveStateDict(Rule):
    """``best = model.state_dict()`` is not a snapshot: the dict holds the very
    tensors the model trains, so after the next ``optimizer.step()`` the "best
    weights" are the current weights. The PyTorch saving/loading tutorial warns
    about it; public repositories carry "fix deepcopy bug" commits for exactly this.
    An optimizer's ``state_dict()`` is live too once it has stepped (momentum,
    ``exp_avg``...). ``copy.deepcopy(model.state_dict())`` is a snapshot.

    Flagged: ``NAME = R.state_dict()`` (also ``self.attr = ...``, ``R.state_dict().copy()``
    and ``dict(R.state_dict())``, which still hold the live tensors) when some path
    from the binding to a read of ``NAME`` runs a training step (``.backward()``,
    ``torch.autograd.backward``, ``.step()`` on a known optimizer), loop back edges
    included. For an optimizer the binding must itself follow a step (inside the
    training loop): before the first step its state is empty and stays empty.
    """

    code = "TCL109"
    name = "live-state-dict"
    message = (
        "`state_dict()` returns references to the live tensors: after the training step in between, this "
        "\"snapshot\" holds the new values; use `copy.deepcopy(...state_dict())`"
    )
    triggers = TRIGGERS["TCL109"]  # in codes.py, importable without LibCST
    # A fix may replace the whole module (to add `import copy`): the engine then parses the full source again
    # (parsing.parse_active), so the file may be pruned.

    VALID = [
        "import copy\nbest = copy.deepcopy(model.state_dict())\nloss.backward()\nmodel.load_state_dict(best)",
        "best = {k: v.clone() for k, v in model.state_dict().items()}\nloss.backward()\nmodel.load_state_dict(best)",
        "import torch\ntorch.save(model.state_dict(), 'm.pt')\nloss.backward()",
        "sd = model.state_dict()\ntorch.save(sd, 'm.pt')\nloss.backward()",
        "sd = model.state_dict()\nloss.backward()\nsd = model.state_dict()\ntorch.save(sd, 'm.pt')",
        "for x in data:\n    model(x).backward()\n    sd = model.state_dict()\n    torch.save(sd, 'm.pt')",
        "s = scheduler.state_dict()\nloss.backward()\nscheduler.load_state_dict(s)",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "initial = opt.state_dict()\nfor x in data:\n    model(x).sum().backward()\n    opt.step()\n"
        "opt.load_state_dict(initial)",
    ]
    INVALID = [
        "best = model.state_dict()\nloss.backward()\nmodel.load_state_dict(best)",
        "def fit(model, data, opt):\n    best = None\n    for x in data:\n        model(x).sum().backward()\n"
        "        if x.sum() > 0:\n            best = model.state_dict().copy()\n    return best",
        "class T:\n    def fit(self, data):\n        for x in data:\n            self.model(x).backward()\n"
        "            if x.sum() > 0:\n                self.best = dict(self.model.state_dict())\n"
        "        self.model.load_state_dict(self.best)",
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if not isinstance(target, (cst.Name, cst.Attribute)) or dotted_name(target) is None:
            return
        call = self._state_dict_call(node.value)
        if call is None or not self._may_hold_live_tensors(call.func.value):  # type: ignore[union-attr]
            return
        binding = self._binding_of(target)
        if binding is None:
            return
        semantic = self.context.semantic
        if any(semantic.step_between(binding, read) for read in semantic.reads_of(binding)):
            self._report_with_fix(node.value, call)

    def _state_dict_call(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The ``R.state_dict()`` call in ``R.state_dict()``, ``R.state_dict().copy()``, ``dict(R.state_dict())``
        or ``OrderedDict(R.state_dict())``."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args:
            if value.func.attr.value == "copy":
                value = value.func.value
        elif isinstance(value, cst.Call) and len(value.args) == 1 and not value.args[0].keyword \
                and not value.args[0].star:
            q = self.context.qualified_name(value.func)
            plain_dict = isinstance(value.func, cst.Name) and value.func.value == "dict" \
                and not self.context.imports.is_imported("dict")
            if plain_dict or q in ("collections.OrderedDict", "typing.OrderedDict"):
                value = value.args[0].value
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute) \
                or value.func.attr.value != "state_dict":
            return None
        if any(a.keyword is None or a.keyword.value != "keep_vars" for a in value.args):
            return None
        return value

    def _may_hold_live_tensors(self, receiver: cst.BaseExpression) -> bool:
        """A module or optimizer, or a receiver of unknown type not named like a scheduler or scaler; an
        optimizer only when the binding follows a step (it sits in a loop that trains)."""
        value = self.context.value_of(receiver)
        kind = value.kind
        if kind is Kind.MODULE and self.context.semantic.module_calls.defines(value, "state_dict"):
            return False  # the class's own state_dict() (a deep copy, a filtered dict): not nn.Module's
        name = (dotted_name(receiver) or "").rsplit(".", 1)[-1]
        if kind is Kind.UNKNOWN and _PLAIN_STATE.search(name):
            return False
        if kind is Kind.OPTIMIZER or kind is Kind.UNKNOWN and _OPTIMIZER_NAME.search(name):
            loop = self.context.loop()
            return loop is not None and any(self.context.semantic.is_training_step(c) for c in loop.calls)
        return kind in (Kind.MODULE, Kind.UNKNOWN)

    def _binding_of(self, target: cst.BaseExpression) -> Optional[Binding]:
        """The semantic model's binding made by this assignment target."""
        semantic = self.context.semantic
        semantic.ensure(self.context.stack)
        boundaries = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        function = next((n for n in reversed(self.context.stack) if isinstance(n, boundaries)), None)
        if isinstance(function, cst.FunctionDef):
            scope = semantic.function_scope(function)
        elif function is None:
            scope = semantic.module_scope()
        else:
            return None  # class bodies, lambdas: not followed
        if scope is None:
            return None
        return next((b for b in scope.flow.bindings.get(dotted_name(target) or "", ()) if b.node is target), None)

    def _report_with_fix(self, value: cst.BaseExpression, call: cst.Call) -> None:
        """Replace the value by ``copy.deepcopy(R.state_dict())``; when ``copy`` is not imported at the top
        of the module, the fix is the whole module with ``import copy`` added (files TCL109 may flag are
        parsed whole: see ``parsing.parse_active``)."""
        imports = self.context.imports
        top = _top_level_imports(self.context.module)
        inner = call.with_changes(lpar=[], rpar=[])
        deepcopy: cst.BaseExpression = cst.Attribute(value=cst.Name("copy"), attr=cst.Name("deepcopy"))
        if "deepcopy" in top and imports.qualified_name(cst.Name("deepcopy")) == "copy.deepcopy" \
                and "copy" not in top:
            deepcopy = cst.Name("deepcopy")
        replacement = cst.Call(func=deepcopy, args=[cst.Arg(inner)], lpar=value.lpar, rpar=value.rpar)
        if isinstance(deepcopy, cst.Name) or "copy" in top and imports.qualified_name(cst.Name("copy")) == "copy":
            self.report(value, replacement=replacement, applicability=Applicability.UNSAFE)
        elif imports.is_imported("copy") or "copy" in names_bound(self.context.module):
            self.report(value)  # `copy` means something else here: no fix
        else:
            module = self.context.module
            fixed = _with_import_copy(module.deep_replace(value, replacement))  # type: ignore[arg-type]
            self.report(value, replacement=fixed, target=module, applicability=Applicability.UNSAFE)


def _top_level_imports(module: cst.Module) -> set:
    """Local names bound by the module's top-level ``import``/``from ... import`` statements."""
    names = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        local = alias.asname.name if alias.asname is not None else alias.name
                        name = dotted_name(local)  # type: ignore[arg-type]
                        if name:
                            names.add(name.split(".")[0])
    return names


def _with_import_copy(module: cst.Module) -> cst.Module:
    """``module`` with ``import copy`` before its first top-level import (after the docstring and
    ``from __future__`` imports), or after the docstring and ``__future__`` imports if there is none."""
    body = list(module.body)
    index = 0
    while index < len(body) and (_is_docstring(body[index]) and index == 0 or _is_future_import(body[index])):
        index += 1
    first_import = next((i for i in range(index, len(body)) if _is_import(body[i])), None)
    statement = cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name("copy"))])])
    if first_import is not None:  # the blank lines above the imports go above `import copy`, comments stay
        index = first_import
        lines = list(body[index].leading_lines)
        blank = next((i for i, line in enumerate(lines) if line.comment is not None), len(lines))
        statement = statement.with_changes(leading_lines=lines[:blank])
        body[index] = body[index].with_changes(leading_lines=lines[blank:])
    body.insert(index, statement)
    return module.with_changes(body=body)


def _small(stmt: cst.CSTNode):
    return stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None


def _is_docstring(stmt: cst.CSTNode) -> bool:
    small = _small(stmt)
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


def _is_future_import(stmt: cst.CSTNode) -> bool:
    small = _small(stmt)
    return isinstance(small, cst.ImportFrom) and dotted_name(small.module or cst.Name("")) == "__future__"


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(_small(stmt), (cst.Import, cst.ImportFrom))
