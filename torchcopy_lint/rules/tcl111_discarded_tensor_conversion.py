"""TCL111: ``x.to(device)`` (or ``.cuda()``, ``.float()``, ``.detach()``, ...) as a statement, which does nothing."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from ..codes import CONVERSION_CALL, DEVICE_MOVES, DISCARDABLE_METHODS, KIND_EVIDENCE, TRIGGERS
from ..diagnostics import Applicability
from ..engine import Rule
from ..notebook.program import PREAMBLE
from ..semantic import Kind
from ..semantic.syntax import all_params
from ..semantic.vocabulary import MODULE_PRESERVING_METHODS
from ._loop_variable import dead_loop_variable

CONVERSIONS = frozenset(DISCARDABLE_METHODS)
#: A conversion's `receiver.method` as the trigger admits it (gaps after the dot only).
_DOTTED_CALL = re.compile(r"[A-Za-z_][\w.]*\.[ \t\f]*(?:\\\r?\n[ \t\f]*)*\w+")
_DEVICE_MOVES = frozenset(DEVICE_MOVES)
_PREAMBLE = PREAMBLE.strip()  # a notebook's cells, linted as one program (notebook/program.py)
_CELL_MARKER = "# torchcopy-lint cell "


class DiscardedTensorConversion(Rule):
    """Tensor conversions are not in place: ``x.to(device)``, ``x.cuda()``,
    ``x.float()``, ``x.contiguous()``, ``x.detach()`` return a new tensor (or ``x``
    itself when nothing needs converting) and leave ``x`` as it was. As a statement,
    the result is thrown away and the line does nothing: ``x`` stays on the CPU,
    keeps its dtype, stays attached to the graph. ``nn.Module.to()``/``.cuda()``
    *are* in place, which is where the habit comes from.

    Only receivers known to be tensors (or parameters) are flagged: modules, unknown
    values (also a name assigned ``Net().cuda()`` of an unknown ``Net``), in-place
    methods (``requires_grad_()``, ``detach_()``) and chains that end in an in-place
    write (``x.to(d).add_(1)``) are left alone, as are the last expression of a
    notebook cell (it is displayed), probes (in a ``try`` body or under
    ``pytest.raises``) and device moves of parameters (``Params4bit`` quantizes in
    place), and instances of the project's own Tensor subclasses (their ``to`` or
    ``__torch_dispatch__`` may change the receiver). Only statements that start their
    line with a plain dotted receiver are looked at (the prefilter's shape). The fix
    ``x = x.to(...)``, for a plain name or attribute, is unsafe: it changes what the
    following lines see, which is the point, but a reviewer must agree. A loop
    variable that nothing reads again before the loop rebinds it gets no fix and a
    message that says so: rebinding it would move nothing outside the loop.
    """

    code = "TCL111"
    name = "discarded-tensor-conversion"
    message = (
        "the result of this tensor conversion is discarded: `.{method}()` returns a new tensor (or the same one) "
        "and never changes its receiver; {advice}"
    )
    triggers = TRIGGERS["TCL111"]  # in codes.py, importable without LibCST
    segment_triggers = (CONVERSION_CALL + "|" + KIND_EVIDENCE,)

    VALID = [
        "import torch\ndef f(n: int):\n    big = n > 0\n    big.float()\n    return big",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.to('cpu')",
        "import torch\nx = torch.zeros(2)\nx = x.to('cpu')",
        "import torch\nx = torch.zeros(2)\nx.requires_grad_()",
        "import torch\nx = torch.zeros(2)\nx.to('cpu').add_(1)",
        "def f(batch):\n    batch.to('cpu')",
        "import numpy as np\na = np.zeros(2)\na.astype('float32')",
        "import torch\nclass Packed(torch.Tensor):\n    pass\np = Packed(torch.zeros(2))\np.to('cpu')",
    ]
    INVALID = [
        "import torch\nx = torch.zeros(2)\nx.to('cpu')",
        "import torch\ndef f(x: torch.Tensor):\n    x.cuda()\n    return x",
        "import torch\nx = torch.zeros(2, dtype=torch.long)\nx.float().contiguous()",
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.zeros(2))\n    def f(self):\n        self.w.detach()",
        "import torch\ndef f(feats: torch.Tensor):\n    mask = feats > 0\n    mask.float()\n    return mask",
        "import torch\ndef f(m: torch.nn.Module):\n    for b in m.buffers():\n        b.to('cpu')",
    ]

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return
        method = call.func.attr.value
        if method not in CONVERSIONS:
            return
        root, chain, first = call.func.value, [], call
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) \
                and root.func.attr.value in CONVERSIONS:
            chain.append(root.func.attr.value)
            first, root = root, root.func.value
        if not self._statement_shape(node, call, first):
            return
        # The chain's first receiver must be a known tensor: the model takes `unknown.float()` for a
        # tensor (a cast), and on a module `module.float().cuda()` is in place.
        if self.context.kind_of(root) is not Kind.TENSOR or self._displayed(node) or self._probe() \
                or self._converted_unknown(root):
            return
        value = self.context.value_of(root)
        if value.kind is Kind.PARAMETER and {method, *chain} & _DEVICE_MOVES:
            return  # Parameter subclasses (bitsandbytes' Params4bit) move and quantize in place
        if value.cls is not None:
            return  # a project's Tensor subclass: its own `to`/`__torch_dispatch__` may change the receiver
        if isinstance(root, cst.Name) and dead_loop_variable(self.context, root):
            # `for b in m.buffers(): b.to(d)`: `b = b.to(d)` would rebind the loop variable and nothing else
            loop_advice = method != "clone" and value.kind is not Kind.PARAMETER
            message = self._loop_message(call, method, root) if loop_advice else self._message(call, method, root)
            self.report(call, message)
            return
        replacement = None if "clone" in (method, *chain) else self._assignment(node, root)
        self.report(call, self._message(call, method, root), replacement=replacement, target=node,
                    applicability=Applicability.UNSAFE)

    def _converted_unknown(self, root: cst.BaseExpression) -> bool:
        """``m = Net().cuda()`` then ``m.half()``: the model takes a conversion of an unknown value for a
        tensor, but on a module ``to``/``cuda``/``float``... convert in place and return the module. Silent
        when every binding that reaches ``root`` is such a chain (methods a module also has) of a call's
        result not known to be a tensor (a star-imported class, ``torch.load(f)["model"]``); a name's
        ``x = x.cuda()`` (a batch) stays a tensor."""
        found = self.context.reaching(root) if isinstance(root, (cst.Name, cst.Attribute)) else []
        if not found:
            return False
        for binding in found:
            value = binding.value if binding.how == "assign" and not binding.path else None
            receiver, converted = value, False
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                    and receiver.func.attr.value in MODULE_PRESERVING_METHODS:
                receiver, converted = receiver.func.value, True
            if not converted or not isinstance(receiver, (cst.Call, cst.Subscript)) \
                    or self.context.value_of(receiver).kind.is_tensor:
                return False
        return True

    def _statement_shape(self, node: cst.Expr, call: cst.Call, first: cst.Call) -> bool:
        """The shape the trigger (codes.CONVERSION_STATEMENT) admits: the statement starts its line, and the
        first conversion's receiver is a plain dotted name (no parentheses, subscripts or calls)."""
        line = self.context.parent()
        if self.context.module.default_newline == "\r" or not isinstance(line, cst.SimpleStatementLine) \
                or line.body[0] is not node or call.lpar or first.lpar:
            return False
        assert isinstance(first.func, cst.Attribute)
        receiver = self.context.module.code_for_node(first.func)
        return _DOTTED_CALL.fullmatch(receiver) is not None \
            and not set(receiver.rsplit(".", 1)[0].split(".")) & CONVERSIONS

    def _message(self, call: cst.Call, method: str, root: cst.BaseExpression) -> str:
        if method == "clone":
            return self.message.format(method=method, advice="assign the copy or remove the line")
        code = self.context.module.code_for_node
        name = code(root.with_changes(lpar=[], rpar=[])) if isinstance(root, (cst.Name, cst.Attribute)) else ""
        if self.context.value_of(root).kind is Kind.PARAMETER:
            advice = "a parameter refuses a plain tensor: convert the module that owns it (`module.to(...)`)"
        elif name and len(name) <= 40:
            advice = f"assign it (`{name} = {self._shown(call, name, method)}`)"
        else:
            advice = "assign it"
        return self.message.format(method=method, advice=advice)

    def _loop_message(self, call: cst.Call, method: str, root: cst.Name) -> str:
        name = root.value
        return self.message.format(method=method, advice=(
            f"`{name}` is a loop variable that is not read again before the loop rebinds it, so assigning "
            f"it (`{name} = {self._shown(call, name, method)}`) would change nothing outside the loop either: "
            "convert the container or module it comes from, or write the result where it is kept"))

    def _shown(self, call: cst.Call, name: str, method: str) -> str:
        """The conversion as a message quotes it: its code, or ``name.method(...)`` when long."""
        value = self.context.module.code_for_node(call)
        return f"{name}.{method}(...)" if len(value) > 60 or "\n" in value else value

    def _assignment(self, node: cst.Expr, root: cst.BaseExpression) -> Optional[cst.Assign]:
        """``root = <the conversion>`` where that cannot fail: a name the current scope binds (not a free
        variable of a function, which would become local), or an attribute holding a plain tensor (not a
        parameter, which refuses a plain tensor, nor a field of a namedtuple or dataclass)."""
        if isinstance(root, cst.Name):
            if not self._binds_locally(root.value):
                return None
        elif isinstance(root, cst.Attribute):
            if self.context.value_of(root).kind is not Kind.TENSOR \
                    or self.context.value_of(root.value).fields is not None:
                return None
        else:
            return None
        target = root.with_changes(lpar=[], rpar=[])
        return cst.Assign(targets=[cst.AssignTarget(target=target)], value=node.value, semicolon=node.semicolon)

    def _binds_locally(self, name: str) -> bool:
        for scope in reversed(self.context.stack):
            if isinstance(scope, cst.ClassDef):
                return False  # a class body reads names it assigns from the globals, not the function around
            if isinstance(scope, cst.FunctionDef):
                return any(p.name.value == name for p in all_params(scope.params)) \
                    or name in self.context.semantic.bound_keys(scope.body)
        return True

    def _probe(self) -> bool:
        """Whether the statement runs to see if the conversion raises: in a ``try`` body, or under
        ``with pytest.raises(...)`` / ``self.assertRaises(...)``."""
        stack = self.context.stack
        for index in range(len(stack) - 1, 0, -1):
            scope = stack[index]
            if isinstance(scope, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(scope, cst.Try) and stack[index + 1] is scope.body:
                return True
            if isinstance(scope, cst.With) and any(
                    isinstance(item.item, cst.Call) and "raises" in _callee(item.item).lower() for item in scope.items):
                return True
        return False

    def _displayed(self, node: cst.Expr) -> bool:
        """Whether ``node`` is the last statement of a notebook cell (IPython displays its value)."""
        module = self.context.module
        if not any(e.comment is not None and e.comment.value == _PREAMBLE for e in module.header):
            return False
        line = self.context.parent()
        if self.context.parent(2) is not module or not isinstance(line, cst.SimpleStatementLine) \
                or line.body[-1] is not node or not isinstance(node.semicolon, cst.MaybeSentinel):
            return False
        index = next(i for i, stmt in enumerate(module.body) if stmt is line)
        if index + 1 == len(module.body):
            return True
        following = module.body[index + 1]
        return any(e.comment is not None and e.comment.value.startswith(_CELL_MARKER)
                   for e in following.leading_lines)


def _callee(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
