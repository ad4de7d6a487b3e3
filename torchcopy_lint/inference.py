"""Local, flow-ordered inference of whether an expression is a tensor.

Rules ask one question at a candidate site: *is this expression known to be a
tensor, known not to be one, or unknown?* The answer is computed on demand by
walking backwards from the site through the enclosing statements (the latest
binding wins), applying ``isinstance``/``torch.is_tensor`` guards on the way
(then/else branches, early exits, conditional expressions, guards stored in a
variable), and stopping at the function boundary (parameters and their
annotations). Anything uncertain is UNKNOWN, and UNKNOWN never produces a
TCL101/TCL102 diagnostic: precision beats recall.

The inference is query-driven rather than a full data-flow pass because
candidate sites are rare (a few per thousand lines): almost no file pays for it.
"""

from __future__ import annotations

from enum import Enum
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from .imports import ImportMap, dotted_name
from .semantic.project import ProjectIndex
from .walk import block_paths, blocks, descendants


class Kind(Enum):
    TENSOR = "tensor"
    NOT_TENSOR = "not-tensor"
    MODULE = "module"  # an nn.Module instance
    UNKNOWN = "unknown"


def join(kinds: Iterable[Kind]) -> Kind:
    """The kind all paths agree on, else UNKNOWN."""
    found = set(kinds)
    return found.pop() if len(found) == 1 else Kind.UNKNOWN


# --- vocabulary ------------------------------------------------------------------------------

TORCH_TENSOR_FUNCTIONS = frozenset(
    """tensor as_tensor asarray from_numpy frombuffer zeros ones empty full zeros_like ones_like empty_like
    full_like rand randn randint randperm rand_like randn_like randint_like arange linspace logspace eye cat
    concat concatenate stack hstack vstack dstack column_stack where matmul mm bmm mv einsum clone detach abs exp
    log log2 log10 sqrt rsqrt sigmoid tanh relu softmax log_softmax sum mean std var prod cumsum cumprod argmax
    argmin clamp clip flatten reshape transpose permute squeeze unsqueeze masked_fill gather index_select tril
    triu outer dot sign round floor ceil norm cdist bernoulli multinomial normal polar complex diag diagonal roll
    flip repeat_interleave tile lerp addmm baddbmm square pow mul add sub div neg reciprocal erf tensordot kron
    cross bucketize searchsorted nonzero masked_select take narrow select movedim t logical_and logical_or
    logical_not eq ne lt le gt ge isnan isinf isfinite nan_to_num maximum minimum fmod remainder atan2 sin cos
    diff cummax cummin heaviside sparse_coo_tensor scalar_tensor empty_strided complex64 view_as_real
    view_as_complex""".split()
)
"""``torch.X(...)`` that returns a single tensor."""

TORCH_NOT_TENSOR = frozenset(
    """Size device dtype is_tensor is_storage numel get_default_dtype finfo iinfo manual_seed no_grad
    enable_grad inference_mode is_grad_enabled set_grad_enabled is_floating_point is_complex
    get_default_device""".split()
)
TORCH_CONSTANTS = frozenset("inf nan pi e newaxis".split())

TENSOR_CLASSES = frozenset(
    ["torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"]
    + [
        f"torch.{p}Tensor"
        for p in "Float Double Half BFloat16 Long Int Short Char Byte Bool".split()
    ]
    + [
        f"torch.cuda.{p}Tensor"
        for p in "Float Double Half BFloat16 Long Int Short Char Byte Bool".split()
    ]
)
NOT_TENSOR_BUILTIN_CLASSES = frozenset(
    "list tuple int float complex bool str bytes dict set frozenset range".split()
)
NOT_TENSOR_CLASSES = frozenset(
    ["numpy.ndarray", "numpy.generic", "numbers.Number", "numbers.Real", "numbers.Integral"]
)
NOT_TENSOR_ANNOTATIONS = NOT_TENSOR_BUILTIN_CLASSES | frozenset(
    "List Tuple Dict Set FrozenSet Sequence MutableSequence Iterable Iterator Mapping MutableMapping "
    "ndarray NDArray".split()
)
NOT_TENSOR_BUILTINS = frozenset(
    """len int float bool str list tuple dict set frozenset range sorted enumerate zip map filter repr format
    ord chr hash id type isinstance hasattr print iter""".split()
)

TENSOR_ONLY_METHODS = frozenset(
    """detach detach_ clone contiguous unsqueeze permute new_zeros new_ones new_full new_empty new_tensor
    type_as view_as expand_as reshape_as masked_fill index_select pin_memory softmax log_softmax""".split()
)
"""Methods whose presence alone says the receiver (and result) is a tensor."""

MODULE_PRESERVING_METHODS = frozenset(
    "to cuda cpu float double half bfloat16 train eval requires_grad_ type".split()
)
"""On an nn.Module these return the module; on a tensor they return a tensor."""

CAST_METHODS = frozenset("cuda float double half bfloat16 long int bool byte char short".split())

TENSOR_RETURNING_METHODS = frozenset(
    """to cpu view reshape transpose t sum mean std var prod abs exp log sqrt pow add sub mul div neg clamp
    clip flatten squeeze expand repeat flip roll round floor ceil sign sigmoid tanh relu norm cumsum argmax
    argmin masked_select gather narrow select index_add scatter matmul mm bmm where float double half long int
    bool type_as lerp square sin cos max min""".split()
)
"""Methods that return a tensor when called on a tensor (``max``/``min`` only without arguments)."""

NOT_TENSOR_METHODS = frozenset(
    """tolist item numpy size dim ndimension numel nelement element_size stride data_ptr storage_offset
    is_contiguous is_floating_point is_complex get_device keys values items""".split()
)
NOT_TENSOR_ATTRIBUTES = frozenset(
    "shape ndim dtype device is_cuda requires_grad is_leaf layout names is_sparse itemsize nbytes".split()
)
TENSOR_ATTRIBUTES_OF_TENSOR = frozenset("data grad T mT H mH real imag".split())
PARAMETER_ATTRIBUTES = frozenset("weight bias".split())
CONFIG_COMPONENTS = frozenset("config cfg conf args opt opts hparams hparam settings options".split())
PARAMETER_ITERATORS = frozenset("parameters buffers".split())
NAMED_PARAMETER_ITERATORS = frozenset("named_parameters named_buffers".split())
MODULE_ONLY_METHODS = frozenset(
    """parameters named_parameters modules named_modules children named_children buffers named_buffers
    train eval apply register_forward_hook register_forward_pre_hook register_full_backward_hook""".split()
)
LIGHTNING_MODULES = frozenset(
    ["pytorch_lightning.LightningModule", "lightning.LightningModule", "lightning.pytorch.LightningModule"]
)

_MAX_DEPTH = 12
_PROJECT_KINDS = {"module": Kind.MODULE, "tensor": Kind.TENSOR, "parameter": Kind.TENSOR, "not-tensor": Kind.NOT_TENSOR,
                  "record": Kind.NOT_TENSOR, "mapping": Kind.NOT_TENSOR, "number": Kind.NOT_TENSOR,
                  "optimizer": Kind.NOT_TENSOR}
"""Project index answers (semantic/project.py) as this inference's kinds."""
_Effect = Optional[Tuple[Kind, bool]]  # (kind after the statement, whether every path binds it)


def _exits(block: cst.BaseSuite) -> bool:
    """Whether a block always leaves the enclosing flow (return/raise/continue/break)."""
    if isinstance(block, cst.SimpleStatementSuite):
        stmts = block.body
        return bool(stmts) and isinstance(stmts[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))
    body = block.body
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))
    if isinstance(last, cst.If) and last.orelse is not None:
        other = last.orelse
        other_exits = _exits(other.body) if isinstance(other, cst.Else) else _exits_if(other)
        return _exits(last.body) and other_exits
    return False


def _exits_if(node: cst.If) -> bool:
    if node.orelse is None:
        return False
    other = node.orelse
    other_exits = _exits(other.body) if isinstance(other, cst.Else) else _exits_if(other)
    return _exits(node.body) and other_exits


def _block_statements(block: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return block.body


class Inference:
    """Answers ``kind_of(expr, stack)`` for one parsed module."""

    def __init__(self, module: cst.Module, imports: ImportMap, project: Optional["ProjectIndex"] = None) -> None:
        self.module = module
        self.imports = imports
        self.project = project  # the file's project index: facts of the other modules
        self._classes: Optional[Dict[str, cst.ClassDef]] = None
        self._functions: Optional[Dict[str, cst.FunctionDef]] = None
        self._self_attr_cache: Dict[Tuple[int, str], Kind] = {}
        self._in_progress: Set[Tuple[int, str]] = set()
        self._calls_by_name: Optional[Dict[str, List[cst.Call]]] = None
        self._caller_cache: Dict[Tuple[int, str], bool] = {}
        self._returns_cache: Dict[int, Kind] = {}

    # --- module-level indexes ------------------------------------------------------------------

    def _index(self) -> None:
        self._classes, self._functions = {}, {}
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef):
                self._classes[stmt.name.value] = stmt
            elif isinstance(stmt, cst.FunctionDef):
                self._functions[stmt.name.value] = stmt

    @property
    def classes(self) -> Dict[str, cst.ClassDef]:
        if self._classes is None:
            self._index()
        return self._classes  # type: ignore[return-value]

    @property
    def functions(self) -> Dict[str, cst.FunctionDef]:
        if self._functions is None:
            self._index()
        return self._functions  # type: ignore[return-value]

    def qualified(self, expr: cst.BaseExpression) -> Optional[str]:
        return self.imports.qualified_name(expr)

    def class_kind(self, cls: cst.ClassDef, seen: Optional[Set[str]] = None) -> Kind:
        """MODULE for an nn.Module subclass, TENSOR for a Tensor subclass, else NOT_TENSOR."""
        seen = seen or set()
        if cls.name.value in seen:
            return Kind.NOT_TENSOR
        seen.add(cls.name.value)
        for base in cls.bases:
            q = self.qualified(base.value)
            if q in TENSOR_CLASSES:
                return Kind.TENSOR
            if q and (q in LIGHTNING_MODULES or (q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper())):
                return Kind.MODULE
            local = dotted_name(base.value)
            if local in self.classes:
                inherited = self.class_kind(self.classes[local], seen)
                if inherited is not Kind.NOT_TENSOR:
                    return inherited
        return Kind.NOT_TENSOR

    # --- expressions -----------------------------------------------------------------------------

    def kind_of(self, expr: cst.BaseExpression, stack: Sequence[cst.CSTNode]) -> Kind:
        """The kind of ``expr``, which sits below ``stack[-1]`` (the ancestors, module first)."""
        return self._expr(expr, list(stack), 0)

    def _expr(self, e: cst.BaseExpression, stack: List[cst.CSTNode], depth: int) -> Kind:
        if depth > _MAX_DEPTH:
            return Kind.UNKNOWN
        if isinstance(e, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                          cst.FormattedString, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp,
                          cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)):
            return Kind.NOT_TENSOR
        if isinstance(e, cst.Name):
            if e.value in ("True", "False", "None"):
                return Kind.NOT_TENSOR
            return self._lookup(e.value, stack, depth)
        if isinstance(e, cst.Attribute):
            return self._attribute(e, stack, depth)
        if isinstance(e, cst.Subscript):
            return Kind.TENSOR if self._expr(e.value, stack, depth + 1) is Kind.TENSOR else Kind.UNKNOWN
        if isinstance(e, cst.BinaryOperation):
            left = self._expr(e.left, stack, depth + 1)
            right = self._expr(e.right, stack, depth + 1)
            if Kind.TENSOR in (left, right):
                return Kind.TENSOR
            if left is Kind.NOT_TENSOR and right is Kind.NOT_TENSOR:
                return Kind.NOT_TENSOR
            return Kind.UNKNOWN
        if isinstance(e, cst.UnaryOperation):
            if isinstance(e.operator, cst.Not):
                return Kind.NOT_TENSOR
            return self._expr(e.expression, stack, depth + 1)
        if isinstance(e, cst.IfExp):
            body = self._with_guard(e.body, e.test, True, stack, depth)
            orelse = self._with_guard(e.orelse, e.test, False, stack, depth)
            return join([body, orelse])
        if isinstance(e, cst.NamedExpr):
            return self._expr(e.value, stack, depth + 1)
        if isinstance(e, cst.Call):
            return self._call(e, stack, depth)
        return Kind.UNKNOWN

    def _with_guard(self, e: cst.BaseExpression, test: cst.BaseExpression, positive: bool,
                    stack: List[cst.CSTNode], depth: int) -> Kind:
        key = dotted_name(e)
        if key is not None:
            narrowed = self.narrow(test, key, positive, stack)
            if narrowed is not None:
                return narrowed
        return self._expr(e, stack, depth + 1)

    def _attribute(self, e: cst.Attribute, stack: List[cst.CSTNode], depth: int) -> Kind:
        q = self.qualified(e)
        if q is not None:
            head, _, last = q.rpartition(".")
            if head == "torch" and (last in TORCH_CONSTANTS or last in TORCH_NOT_TENSOR):
                return Kind.NOT_TENSOR
            if head == "torch" and last[:1].islower() and last not in TORCH_TENSOR_FUNCTIONS:
                return Kind.NOT_TENSOR  # dtypes (torch.float32), submodules
            if q.split(".")[0] in ("math", "numpy", "sys", "os"):
                return Kind.NOT_TENSOR
        attr = e.attr.value
        if attr in NOT_TENSOR_ATTRIBUTES:
            return Kind.NOT_TENSOR
        dotted = dotted_name(e)
        if dotted is not None:
            parts = dotted.split(".")
            if any(p in CONFIG_COMPONENTS for p in parts[:-1]):
                return Kind.NOT_TENSOR
            narrowed = self._lookup(dotted, stack, depth, attribute_chain=True)
            if narrowed is not Kind.UNKNOWN:
                return narrowed
        base = self._expr(e.value, stack, depth + 1)
        if attr in TENSOR_ATTRIBUTES_OF_TENSOR and base is Kind.TENSOR:
            return Kind.TENSOR
        if attr in PARAMETER_ATTRIBUTES and base is Kind.MODULE:
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _call(self, e: cst.Call, stack: List[cst.CSTNode], depth: int) -> Kind:
        func = e.func
        q = self.qualified(func)
        if q is not None:
            kind = self._qualified_call_kind(q, e)
            if kind is None and self.project is not None:
                kind = self._project_call_kind(q, e, stack, depth)
            if kind is not None:
                return kind
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.classes and not self.imports.is_imported(name):
                return self.class_kind(self.classes[name]) if self.class_kind(self.classes[name]) is Kind.MODULE else Kind.UNKNOWN
            local = self._local_function(name, stack)
            if local is not None:
                return self._returns(local[0], local[1], depth)
            if name in self.functions:
                fn = self.functions[name]
                return self._returns(fn, [self.module, fn, fn.body], depth)
            if name in NOT_TENSOR_BUILTINS and not self.imports.is_imported(name):
                return Kind.NOT_TENSOR
            return Kind.UNKNOWN
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in NOT_TENSOR_METHODS:
                return Kind.NOT_TENSOR
            receiver = func.value
            if method in MODULE_PRESERVING_METHODS or method in TENSOR_ONLY_METHODS or method in TENSOR_RETURNING_METHODS or method.endswith("_"):
                rk = self._expr(receiver, stack, depth + 1)
                if rk is Kind.MODULE and method in MODULE_PRESERVING_METHODS:
                    return Kind.MODULE
                if method in TENSOR_ONLY_METHODS or (method in CAST_METHODS and rk is not Kind.NOT_TENSOR):
                    return Kind.TENSOR if rk is not Kind.NOT_TENSOR else Kind.UNKNOWN
                if rk is Kind.TENSOR:
                    if method in ("max", "min") and (e.args):
                        return Kind.UNKNOWN
                    return Kind.TENSOR
                return Kind.UNKNOWN
            if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
                found = self._enclosing_method(stack, method)
                if found is not None:
                    return self._returns(found[0], found[1], depth)
        return Kind.UNKNOWN

    def _qualified_call_kind(self, q: str, call: cst.Call) -> Optional[Kind]:
        parts = q.split(".")
        if parts[0] in ("numpy", "math", "pandas", "random", "json"):
            return Kind.NOT_TENSOR
        if parts[0] != "torch":
            return None
        last = parts[-1]
        if q in TENSOR_CLASSES:
            return Kind.TENSOR
        if len(parts) == 2 and last in TORCH_TENSOR_FUNCTIONS:
            return Kind.TENSOR
        if len(parts) == 2 and last in TORCH_NOT_TENSOR:
            return Kind.NOT_TENSOR
        if q.startswith("torch.nn.functional."):
            return Kind.TENSOR if last not in ("max_pool1d_with_indices", "max_pool2d_with_indices") else None
        if q.startswith("torch.nn.") and last[:1].isupper() and last not in ("Parameter", "Buffer"):
            return Kind.MODULE
        return None

    def _project_call_kind(self, q: str, call: cst.Call, stack: List[cst.CSTNode], depth: int) -> Optional[Kind]:
        """A call of a class or function defined in another module of the project (the project index)."""
        project = self.project
        assert project is not None
        class_kind = project.module_class_kind(q)
        if class_kind is not None:
            return _PROJECT_KINDS.get(class_kind)
        returned = project.function_return(q)
        if returned is None:
            return None
        if returned.startswith("arg:"):
            index, _, path = returned[4:].partition(".")
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if not index.isdigit() or int(index) >= len(positional) or path not in ("", "module"):
                return None
            kind = self._expr(positional[int(index)].value, stack, depth + 1)
            return kind if kind is Kind.MODULE or (not path and kind is not Kind.UNKNOWN) else None
        return _PROJECT_KINDS.get(returned)

    def _returns(self, fn: cst.FunctionDef, path: List[cst.CSTNode], depth: int) -> Kind:
        """The kind the return annotation of ``fn`` promises, unless its own ``return`` statements
        contradict it (``-> torch.Tensor`` that returns a list): then UNKNOWN."""
        if fn.returns is None:
            return Kind.UNKNOWN
        kind = self.annotation_kind(fn.returns.annotation)
        if kind is not Kind.TENSOR:
            return kind
        if id(fn) in self._returns_cache:
            return self._returns_cache[id(fn)]
        marker = (id(fn), "<returns>")
        if marker in self._in_progress:
            return Kind.UNKNOWN
        self._in_progress.add(marker)
        result = kind
        try:
            for small_path, small in _small_statements(fn.body, path):
                # A fresh depth budget: the answer must not depend on how deep the question came from.
                if isinstance(small, cst.Return) and small.value is not None \
                        and self._expr(small.value, small_path, 0) is Kind.NOT_TENSOR:
                    result = Kind.UNKNOWN  # the code contradicts the annotation
                    break
        finally:
            self._in_progress.discard(marker)
        self._returns_cache[id(fn)] = result
        return result

    def _enclosing_method(self, stack: Sequence[cst.CSTNode], name: str
                          ) -> Optional[Tuple[cst.FunctionDef, List[cst.CSTNode]]]:
        """The method ``name`` of the class enclosing ``stack[-1]``, with its path (ending in its body)."""
        index = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], cst.ClassDef)), None)
        if index is None:
            return None
        cls = stack[index]
        if not isinstance(cls.body, cst.IndentedBlock):
            return None
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt, list(stack[: index + 1]) + [cls.body, stmt, stmt.body]
        return None

    def _local_function(self, name: str, stack: Sequence[cst.CSTNode]
                        ) -> Optional[Tuple[cst.FunctionDef, List[cst.CSTNode]]]:
        """A function ``name`` defined directly in an enclosing function body, with its path."""
        for i in range(len(stack) - 1, -1, -1):
            node = stack[i]
            if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock):
                for stmt in node.body.body:
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                        return stmt, list(stack[: i + 1]) + [node.body, stmt, stmt.body]
        return None

    def annotation_kind(self, ann: cst.BaseExpression) -> Kind:
        """TENSOR for ``torch.Tensor``/``nn.Parameter``, NOT_TENSOR for ``list[float]`` and the like."""
        if isinstance(ann, cst.SimpleString):
            text = ann.evaluated_value if isinstance(ann.evaluated_value, str) else ""
            try:
                return self.annotation_kind(cst.parse_expression(text))
            except Exception:
                return Kind.UNKNOWN
        if isinstance(ann, cst.Subscript):
            ann = ann.value
        if isinstance(ann, cst.BinaryOperation):  # X | Y
            return Kind.UNKNOWN
        q = self.qualified(ann)
        if q in TENSOR_CLASSES:
            return Kind.TENSOR
        if q is not None and (q in ("torch.nn.Module",) or q in LIGHTNING_MODULES):
            return Kind.MODULE
        name = dotted_name(ann)
        if name is None:
            return Kind.UNKNOWN
        last = name.rsplit(".", 1)[-1]
        if q is None and name in self.classes:
            kind = self.class_kind(self.classes[name])
            return kind if kind is not Kind.NOT_TENSOR else Kind.UNKNOWN
        if last in NOT_TENSOR_ANNOTATIONS or (q or "").startswith("numpy."):
            return Kind.NOT_TENSOR
        return Kind.UNKNOWN

    # --- guards ------------------------------------------------------------------------------------

    def isinstance_kind(self, cls: cst.BaseExpression) -> Optional[str]:
        """'tensor', 'not', 'mixed' or None for the class argument of ``isinstance``."""
        if isinstance(cls, cst.Tuple):
            found = {self.isinstance_kind(el.value) for el in cls.elements}
            if found == {"tensor"}:
                return "tensor"
            if found == {"not"}:
                return "not"
            return "mixed" if "tensor" in found or "mixed" in found else None
        q = self.qualified(cls)
        if q in TENSOR_CLASSES:
            return "tensor"
        if q in NOT_TENSOR_CLASSES:
            return "not"
        if isinstance(cls, cst.Name) and cls.value in NOT_TENSOR_BUILTIN_CLASSES and not self.imports.is_imported(cls.value):
            return "not"
        return None

    def narrow(self, test: cst.BaseExpression, key: str, positive: bool,
               stack: Sequence[cst.CSTNode], _depth: int = 0) -> Optional[Kind]:
        """What ``test`` being ``positive`` says about the expression spelled ``key``."""
        if _depth > 6:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.narrow(test.expression, key, not positive, stack, _depth + 1)
        if isinstance(test, cst.BooleanOperation):
            left = self.narrow(test.left, key, positive, stack, _depth + 1)
            right = self.narrow(test.right, key, positive, stack, _depth + 1)
            conjunction = isinstance(test.operator, cst.And) == positive
            if conjunction:  # both hold: either side's fact is true
                if left is None or right is None or left is right:
                    return left or right
                return Kind.UNKNOWN
            return left if left is right else None
        if isinstance(test, cst.Call):
            args = test.args
            if not args or dotted_name(args[0].value) != key:
                return None
            fname = dotted_name(test.func)
            q = self.qualified(test.func)
            if fname == "isinstance" and len(args) == 2 and not self.imports.is_imported("isinstance"):
                cls_kind = self.isinstance_kind(args[1].value)
            elif q == "torch.is_tensor" and len(args) == 1:
                cls_kind = "tensor"
            else:
                return None
            if cls_kind == "tensor":
                return Kind.TENSOR if positive else Kind.NOT_TENSOR
            if cls_kind == "not":
                return Kind.NOT_TENSOR if positive else None
            if cls_kind == "mixed":
                return None if positive else Kind.NOT_TENSOR
            return None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            op = target.operator
            left, right = test.left, target.comparator
            if isinstance(left, cst.Call) and dotted_name(left.func) == "type" and left.args and \
                    dotted_name(left.args[0].value) == key and isinstance(op, (cst.Is, cst.Equal)):
                if self.qualified(right) in TENSOR_CLASSES:
                    return Kind.TENSOR if positive else None
            if dotted_name(left) == key and isinstance(right, cst.Name) and right.value == "None":
                if isinstance(op, cst.Is):
                    return Kind.NOT_TENSOR if positive else None
                if isinstance(op, cst.IsNot):
                    return None if positive else Kind.NOT_TENSOR
            return None
        if isinstance(test, cst.Name):
            value = self._guard_variable(test.value, stack)
            if value is not None:
                return self.narrow(value, key, positive, stack, _depth + 1)
        return None

    def _guard_variable(self, name: str, stack: Sequence[cst.CSTNode]) -> Optional[cst.BaseExpression]:
        """The value of ``name = <guard>`` when the enclosing scope assigns it exactly once."""
        scope = next((n for n in reversed(stack) if isinstance(n, (cst.FunctionDef, cst.Module))), self.module)
        body = scope.body.body if isinstance(scope, cst.FunctionDef) else scope.body
        values = [v for v in self._assigned_values(body, name)]
        if len(values) == 1 and isinstance(values[0], (cst.Call, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison)):
            return values[0]
        return None

    def _assigned_values(self, body: Sequence[cst.CSTNode], name: str) -> Iterable[cst.BaseExpression]:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name) and t.target.value == name:
                                yield small.value
                    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and dotted_name(small.target) == name:
                        yield cst.Name("__rebound__")
            elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                for block in blocks(stmt):
                    yield from self._assigned_values(block, name)

    # --- names: the backwards walk ----------------------------------------------------------------

    def _lookup(self, key: str, stack: List[cst.CSTNode], depth: int, attribute_chain: bool = False) -> Kind:
        """Kind of the name (or ``a.b`` chain) ``key`` as seen at ``stack[-1]``."""
        pending: List[Kind] = []

        def done(kind: Kind) -> Kind:
            return join(pending + [kind])

        i = len(stack) - 1
        while i > 0:
            node, parent = stack[i], stack[i - 1]
            path = stack[: i]
            if isinstance(parent, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)):
                siblings = parent.body
                idx = next((j for j, s in enumerate(siblings) if s is node), None)
                if idx is not None:
                    effect = self._search_back(key, siblings[:idx], path, depth)
                    if effect is not None:
                        if effect[1]:
                            return done(effect[0])
                        pending.append(effect[0])
            elif isinstance(parent, (cst.If, cst.While)) and node is parent.body or \
                    isinstance(parent, cst.If) and node is parent.orelse:
                narrowed = self.narrow(parent.test, key, node is parent.body, stack[:i])
                if narrowed is not None:
                    return done(narrowed)
                if isinstance(parent, cst.While):
                    carried = self._search_back(key, _block_statements(parent.body), path, depth)
                    if carried is not None:
                        pending.append(carried[0])
            elif isinstance(parent, cst.IfExp) and (node is parent.body or node is parent.orelse):
                narrowed = self.narrow(parent.test, key, node is parent.body, stack[:i])
                if narrowed is not None:
                    return done(narrowed)
            elif isinstance(parent, cst.BooleanOperation) and node is parent.right:
                narrowed = self.narrow(parent.left, key, isinstance(parent.operator, cst.And), stack[:i])
                if narrowed is not None:
                    return done(narrowed)
            elif isinstance(parent, cst.For) and node is parent.body:
                bound = self._target_kind(parent.target, key, parent.iter, path, depth)
                if bound is not None:
                    return done(bound)
                carried = self._search_back(key, _block_statements(parent.body), path, depth)
                if carried is not None:
                    pending.append(carried[0])
            elif isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)) and node is not parent.for_in:
                bound = self._comprehension_kind(parent.for_in, key, path, depth)
                if bound is not None:
                    return done(bound)
            elif isinstance(parent, cst.Lambda):
                if any(p.name.value == key for p in _all_params(parent.params)):
                    return done(Kind.UNKNOWN)
            elif isinstance(parent, cst.FunctionDef) and node is parent.body:
                param = self._param_kind(parent, key, stack[:i])
                if param is not None:
                    return done(param)
                if attribute_chain:
                    return done(self._self_attribute(key, stack[:i], depth))
                return done(self._outer_scope(key, stack[: i - 1], depth))
            i -= 1
        if pending:
            return join(pending)
        return Kind.UNKNOWN

    def _outer_scope(self, key: str, stack: List[cst.CSTNode], depth: int) -> Kind:
        """Flow-insensitive kind of a free variable: every binding in the enclosing scopes must agree."""
        for i in range(len(stack) - 1, -1, -1):
            scope = stack[i]
            if isinstance(scope, cst.FunctionDef):
                body = _block_statements(scope.body)
                path = stack[: i + 1] + [scope.body]
            elif isinstance(scope, cst.Module):
                body, path = scope.body, stack[: i + 1]
            else:
                continue
            kinds = self._all_bindings(key, body, path, depth)
            if kinds:
                return join(kinds)
        return Kind.UNKNOWN

    def _all_bindings(self, key: str, body: Sequence[cst.CSTNode], path: List[cst.CSTNode], depth: int) -> List[Kind]:
        kinds: List[Kind] = []
        for stmt in body:
            effect = self._stmt_effect(key, stmt, path, depth)
            if effect is not None:
                kinds.append(effect[0])
        return kinds

    def _search_back(self, key: str, stmts: Sequence[cst.CSTNode], path: List[cst.CSTNode], depth: int) -> _Effect:
        pending: List[Kind] = []
        for stmt in reversed(stmts):
            effect = self._stmt_effect(key, stmt, path, depth)
            if effect is None:
                continue
            if effect[1]:
                return join(pending + [effect[0]]), True
            pending.append(effect[0])
        return (join(pending), False) if pending else None

    def _stmt_effect(self, key: str, stmt: cst.CSTNode, path: List[cst.CSTNode], depth: int) -> _Effect:
        """The kind ``key`` has right after ``stmt`` if ``stmt`` binds or narrows it, else None."""
        marker = (id(stmt), key)
        if marker in self._in_progress or depth > _MAX_DEPTH:
            return Kind.UNKNOWN, True
        self._in_progress.add(marker)
        try:
            return self._stmt_effect_uncached(key, stmt, path, depth + 1)
        finally:
            self._in_progress.discard(marker)

    def _stmt_effect_uncached(self, key: str, stmt: cst.CSTNode, path: List[cst.CSTNode], depth: int) -> _Effect:
        if isinstance(stmt, cst.BaseSmallStatement):
            return self._small_effect(key, stmt, path + [stmt], depth)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in reversed(stmt.body):
                effect = self._small_effect(key, small, path + [stmt, small], depth)
                if effect is not None:
                    return effect
            return None
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return (Kind.NOT_TENSOR, True) if stmt.name.value == key else None
        inner = path + [stmt]
        if isinstance(stmt, cst.If):
            return self._if_effect(key, stmt, inner, depth)
        if isinstance(stmt, cst.With):
            return self._search_back(key, _block_statements(stmt.body), inner + [stmt.body], depth)
        if isinstance(stmt, cst.For):
            kinds = []
            bound = self._target_kind(stmt.target, key, stmt.iter, path, depth)
            if bound is not None:
                kinds.append(bound)
            body = self._search_back(key, _block_statements(stmt.body), inner + [stmt.body], depth)
            if body is not None:
                kinds.append(body[0])
            return (join(kinds), False) if kinds else None
        kinds = []
        for block_path in block_paths(stmt, inner):
            effect = self._search_back(key, block_path[-1].body, block_path, depth)
            if effect is not None:
                kinds.append(effect[0])
        return (join(kinds), False) if kinds else None

    def _if_effect(self, key: str, stmt: cst.If, inner: List[cst.CSTNode], depth: int) -> _Effect:
        body_exits = _exits(stmt.body)
        body = None if body_exits else self._search_back(key, _block_statements(stmt.body), inner + [stmt.body], depth)
        if stmt.orelse is None:
            other = None
        elif isinstance(stmt.orelse, cst.Else):
            if _exits(stmt.orelse.body) and not body_exits:
                narrowed = self.narrow(stmt.test, key, True, inner)
                if narrowed is not None and body is None:
                    return narrowed, True
            other = self._search_back(key, _block_statements(stmt.orelse.body),
                                      inner + [stmt.orelse, stmt.orelse.body], depth)
        else:
            other = self._if_effect(key, stmt.orelse, inner + [stmt.orelse], depth)
        if body_exits:
            if other is not None:
                return other
            narrowed = self.narrow(stmt.test, key, False, inner)
            return (narrowed, True) if narrowed is not None else None
        if body is None and other is None:
            return None
        kinds = [e[0] for e in (body, other) if e is not None]
        complete = body is not None and other is not None and body[1] and other[1]
        return join(kinds), complete

    def _small_effect(self, key: str, small: cst.CSTNode, stack: List[cst.CSTNode], depth: int) -> _Effect:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                kind = self._target_kind(target.target, key, small.value, stack, depth, unpack_value=True)
                if kind is not None:
                    return kind, True
            return None
        if isinstance(small, cst.AnnAssign):
            if dotted_name(small.target) != key:
                return None
            if small.value is not None:
                return self._expr(small.value, stack, depth + 1), True
            return self.annotation_kind(small.annotation.annotation), True
        if isinstance(small, cst.AugAssign):
            if dotted_name(small.target) != key:
                return None
            if self._expr(small.value, stack, depth + 1) is Kind.TENSOR:
                return Kind.TENSOR, True
            return None
        if isinstance(small, cst.Assert):
            narrowed = self.narrow(small.test, key, True, stack)
            return (narrowed, True) if narrowed is not None else None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            names = small.names if not isinstance(small.names, cst.ImportStar) else []
            for alias in names:
                local = alias.asname.name if alias.asname is not None else alias.name
                if dotted_name(local) == key or (isinstance(local, cst.Attribute) and dotted_name(local).split(".")[0] == key):  # type: ignore[arg-type, union-attr]
                    return Kind.NOT_TENSOR, True
            return None
        if isinstance(small, cst.Del):
            return (Kind.UNKNOWN, True) if key in _del_names(small.target) else None
        if isinstance(small, (cst.Global, cst.Nonlocal)):
            return (Kind.UNKNOWN, True) if any(n.name.value == key for n in small.names) else None
        return None

    def _target_kind(self, target: cst.BaseExpression, key: str, value: cst.BaseExpression,
                     stack: List[cst.CSTNode], depth: int, unpack_value: bool = False) -> Optional[Kind]:
        """Kind bound to ``key`` by ``target = value`` (assignment) or ``for target in value``."""
        if dotted_name(target) == key:
            return self._expr(value, stack, depth + 1) if unpack_value else self._element_kind(value, stack, depth)
        if not isinstance(target, (cst.Tuple, cst.List)):
            return None
        elements = target.elements
        positions = [i for i, el in enumerate(elements) if binds(el.value, key)]
        if not positions:
            return None
        pos = positions[-1]
        element = elements[pos]
        if isinstance(element, cst.StarredElement):
            return Kind.NOT_TENSOR  # a starred target is always a list
        has_star = any(isinstance(el, cst.StarredElement) for el in elements)
        item_kinds: Optional[List[Kind]] = None
        if unpack_value:
            if isinstance(value, (cst.Tuple, cst.List)) and not has_star and len(value.elements) == len(elements) \
                    and not any(isinstance(v, cst.StarredElement) for v in value.elements):
                inner = value.elements[pos].value
                if dotted_name(element.value) == key:
                    return self._expr(inner, stack, depth + 1)
                return self._target_kind(element.value, key, inner, stack, depth, unpack_value=True)
            whole = self._expr(value, stack, depth + 1)
        else:
            item_kinds = self._element_tuple_kinds(value, stack, depth)
            if item_kinds is not None and not has_star and len(item_kinds) == len(elements):
                if dotted_name(element.value) == key:
                    return item_kinds[pos]
                return Kind.TENSOR if item_kinds[pos] is Kind.TENSOR and binds(element.value, key) else Kind.UNKNOWN
            whole = self._element_kind(value, stack, depth)
        if whole is Kind.TENSOR:
            return Kind.TENSOR  # unpacking a tensor yields tensors (its rows)
        return Kind.UNKNOWN

    def _element_kind(self, iterable: cst.BaseExpression, stack: List[cst.CSTNode], depth: int) -> Kind:
        """Kind of the items produced by iterating ``iterable``."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
            method = iterable.func.attr.value
            if method in PARAMETER_ITERATORS:
                return Kind.TENSOR
            if method in ("split", "chunk", "unbind") and self._expr(iterable.func.value, stack, depth + 1) is Kind.TENSOR:
                return Kind.TENSOR
        if isinstance(iterable, cst.Call):
            q = self.qualified(iterable.func)
            if q in ("torch.split", "torch.chunk", "torch.unbind"):
                return Kind.TENSOR
            if isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
                return Kind.NOT_TENSOR
        if isinstance(iterable, cst.Attribute) and iterable.attr.value in PARAMETER_ITERATORS:
            return Kind.TENSOR  # for p in self.parameters: (a list of parameters kept by the object)
        if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1:
            index = iterable.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) \
                    and index.value.evaluated_value == "params":
                return Kind.TENSOR  # for p in group["params"]: an optimizer param group
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            kinds = [self._expr(el.value, stack, depth + 1) for el in iterable.elements if not isinstance(el, cst.StarredElement)]
            return join(kinds) if kinds else Kind.UNKNOWN
        if isinstance(iterable, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Dict)):
            return Kind.NOT_TENSOR
        if self._expr(iterable, stack, depth + 1) is Kind.TENSOR:
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _element_tuple_kinds(self, iterable: cst.BaseExpression, stack: List[cst.CSTNode], depth: int) -> Optional[List[Kind]]:
        """Per-position kinds when iterating yields tuples of known shape (enumerate, zip, named_parameters)."""
        if not isinstance(iterable, cst.Call):
            return None
        func = iterable.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in NAMED_PARAMETER_ITERATORS:
                return [Kind.NOT_TENSOR, Kind.TENSOR]
            if method == "items" and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Attribute) \
                    and func.value.func.attr.value == "state_dict":
                return [Kind.NOT_TENSOR, Kind.TENSOR]
            if method == "items" and isinstance(func.value, cst.Attribute) \
                    and func.value.attr.value in ("_parameters", "_buffers"):
                return [Kind.NOT_TENSOR, Kind.TENSOR]  # an nn.Module's own parameter/buffer dicts
            return None
        if isinstance(func, cst.Name) and not self.imports.is_imported(func.value):
            if func.value == "enumerate" and iterable.args:
                return [Kind.NOT_TENSOR, self._element_kind(iterable.args[0].value, stack, depth)]
            if func.value == "zip" and not any(a.star for a in iterable.args):
                return [self._element_kind(a.value, stack, depth) for a in iterable.args if not a.keyword]
        return None

    def _comprehension_kind(self, comp: cst.CompFor, key: str, stack: List[cst.CSTNode], depth: int) -> Optional[Kind]:
        result: Optional[Kind] = None
        node: Optional[cst.CompFor] = comp
        while node is not None:
            bound = self._target_kind(node.target, key, node.iter, stack, depth)
            if bound is not None:
                result = bound
            for cond in node.ifs:
                narrowed = self.narrow(cond.test, key, True, stack)
                if narrowed is not None:
                    result = narrowed
            node = node.inner_for_in
        return result

    def _param_kind(self, fn: cst.FunctionDef, key: str, stack: List[cst.CSTNode]) -> Optional[Kind]:
        params = fn.params
        if isinstance(params.star_arg, cst.Param) and params.star_arg.name.value == key:
            return Kind.NOT_TENSOR
        if params.star_kwarg is not None and params.star_kwarg.name.value == key:
            return Kind.NOT_TENSOR
        for index, param in enumerate(list(params.posonly_params) + list(params.params) + list(params.kwonly_params)):
            if param.name.value != key:
                continue
            owner = stack[-3] if len(stack) >= 3 else None
            if index == 0 and isinstance(owner, cst.ClassDef) and key in ("self", "cls"):
                if key == "cls":
                    return Kind.NOT_TENSOR
                kind = self.class_kind(owner)
                return kind
            if param.annotation is None:
                return Kind.UNKNOWN
            kind = self.annotation_kind(param.annotation.annotation)
            if kind is Kind.TENSOR and (param.default is not None or _mentions_guard(fn.body, key)
                                        or self._siblings_contradict(fn, key, stack)):
                return Kind.UNKNOWN  # the code itself doubts the annotation
            return kind
        return None

    def _siblings_contradict(self, fn: cst.FunctionDef, key: str, stack: Sequence[cst.CSTNode]) -> bool:
        """Whether a call of ``fn``, or of a function beside it (same class or module) with a parameter of
        the same name, passes a literal or a config field for that parameter: the annotation is wrong."""
        owner = next((n for n in reversed(stack[:-1]) if isinstance(n, (cst.ClassDef, cst.FunctionDef, cst.Module))),
                     self.module)
        if isinstance(owner, cst.Module):
            siblings = [s for s in owner.body if isinstance(s, cst.FunctionDef)]
        elif isinstance(owner.body, cst.IndentedBlock):
            siblings = [s for s in owner.body.body if isinstance(s, cst.FunctionDef)]
        else:
            siblings = []
        for other in [fn] + [s for s in siblings if s is not fn]:
            params = list(other.params.posonly_params) + list(other.params.params) + list(other.params.kwonly_params)
            index = next((i for i, p in enumerate(params) if p.name.value == key), None)
            if index is not None and self._callers_contradict(other, index, key):
                return True
        return False

    def _callers_contradict(self, fn: cst.FunctionDef, index: int, key: str) -> bool:
        """Whether a call of ``fn`` in this module passes a plain non-tensor (a literal, a config field)
        for the parameter ``key`` (at position ``index``) that is annotated as a tensor."""
        cache_key = (id(fn), key)
        if cache_key not in self._caller_cache:
            if self._calls_by_name is None:
                self._calls_by_name = _calls_by_callee(self.module)
            positional = list(fn.params.posonly_params) + list(fn.params.params)
            is_static = any(dotted_name(d.decorator) == "staticmethod" for d in fn.decorators)
            if positional and positional[0].name.value in ("self", "cls") and not is_static:
                index -= 1  # bound call: self.f(a) passes a as the second parameter
            found = False
            for call in self._calls_by_name.get(fn.name.value, ()):
                value = None
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value == key:
                        value = arg.value
                if value is None and 0 <= index < len(positional) and index < len(call.args):
                    if not any(a.star or a.keyword is not None for a in call.args[: index + 1]):
                        value = call.args[index].value
                if value is not None and _plain_non_tensor(value):
                    found = True
                    break
            self._caller_cache[cache_key] = found
        return self._caller_cache[cache_key]

    def _self_attribute(self, key: str, stack: List[cst.CSTNode], depth: int) -> Kind:
        """Kind of ``self.x``: every assignment to it in the class (and register_buffer) must agree."""
        head, _, attr = key.partition(".")
        if head != "self" or "." in attr:
            return Kind.UNKNOWN
        cls = next((n for n in reversed(stack) if isinstance(n, cst.ClassDef)), None)
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return Kind.UNKNOWN
        cache_key = (id(cls), attr)
        if cache_key in self._self_attr_cache:
            return self._self_attr_cache[cache_key]
        self._self_attr_cache[cache_key] = Kind.UNKNOWN  # recursion guard
        cls_index = next(i for i, n in enumerate(stack) if n is cls)
        kinds: List[Kind] = []
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef):
                path = stack[: cls_index + 1] + [cls.body, stmt, stmt.body]
                for small_path, small in _small_statements(stmt.body, path):
                    kind = self._self_assignment_kind(small, attr, small_path, depth)
                    if kind is not None:
                        kinds.append(kind)
        result = join(kinds) if kinds else Kind.UNKNOWN
        self._self_attr_cache[cache_key] = result
        return result

    def _self_assignment_kind(self, small: cst.CSTNode, attr: str, stack: List[cst.CSTNode], depth: int) -> Optional[Kind]:
        key = f"self.{attr}"
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if dotted_name(target.target) == key:
                    return self._expr(small.value, stack, depth + 1)
                if isinstance(target.target, (cst.Tuple, cst.List)) and any(binds(el.value, key) for el in target.target.elements):
                    return Kind.UNKNOWN
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and dotted_name(small.target) == key:
            value = small.value
            return self._expr(value, stack, depth + 1) if value is not None else Kind.UNKNOWN
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if dotted_name(call.func) in ("self.register_buffer", "self.register_parameter") and len(call.args) >= 2:
                name = call.args[0].value
                if isinstance(name, cst.SimpleString) and name.evaluated_value == attr:
                    value = call.args[1].value
                    kind = self._expr(value, stack, depth + 1)
                    return kind if kind is not Kind.NOT_TENSOR else Kind.UNKNOWN
        return None


# --- small helpers ---------------------------------------------------------------------------------

def binds(target: cst.BaseExpression, key: str) -> bool:
    """Whether an assignment/loop target binds the name (or ``a.b`` chain) ``key``."""
    if dotted_name(target) == key:
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(binds(el.value, key) for el in target.elements)
    if isinstance(target, cst.StarredElement):
        return binds(target.value, key)
    return False


def _del_names(target: cst.BaseExpression) -> Set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for el in target.elements for n in _del_names(el.value)}
    name = dotted_name(target)
    return {name} if name else set()


def _all_params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def _small_statements(block: cst.BaseSuite, path: List[cst.CSTNode]):
    """(stack, small statement) for every simple statement in a function body, nested defs excluded."""
    for stmt in block.body:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                yield path + [stmt, small], small
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for sub in block_paths(stmt, path + [stmt]):
                yield from _small_statements(sub[-1], sub)


def _mentions_guard(body: cst.CSTNode, key: str) -> bool:
    """Whether ``body`` calls ``isinstance(key, ...)`` or ``is_tensor(key)``."""
    for node in descendants(body):
        if isinstance(node, cst.Call) and node.args and dotted_name(node.args[0].value) == key \
                and (dotted_name(node.func) or "") in ("isinstance", "torch.is_tensor", "is_tensor"):
            return True
    return False


def _calls_by_callee(module: cst.Module) -> Dict[str, List[cst.Call]]:
    """Every call in a module by the last name of its callee (``f(...)``, ``self.f(...)``, ``C.f(...)``)."""
    calls: Dict[str, List[cst.Call]] = {}
    for node in descendants(module):
        if isinstance(node, cst.Call):
            func = node.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
            if name is not None:
                calls.setdefault(name, []).append(node)
    return calls


_LITERALS = (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.Integer,
             cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _plain_non_tensor(value: cst.BaseExpression) -> bool:
    """A call argument that is visibly not a tensor: a literal or a config field (``self.vae.config.x``)."""
    if isinstance(value, _LITERALS):
        return True
    name = dotted_name(value)
    return name is not None and any(p in CONFIG_COMPONENTS for p in name.split(".")[:-1])
