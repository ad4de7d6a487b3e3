"""Classes, annotations, parameters, return values and ``self`` attributes.

What it knows: which classes of this file are nn.Module subclasses (through any depth of local
classes, and of project classes through ``ProjectIndex``), tensor subclasses or records (namedtuple,
dataclass, plain classes with known bases); what an annotation promises, and when the code doubts it
(a default value, an isinstance check of the parameter, a caller passing a literal or a config
field, a ``-> Tensor`` function returning a non-tensor); ``self`` and ``cls``; the value of
``self.x`` as every assignment in the class's methods agrees (``register_buffer`` included).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ..imports import dotted_name
from ..walk import descendants, nodes_of_type
from . import vocabulary as v
from .kinds import BEFORE_ITS_STORE, NOT_TENSOR, PARAMETER, TENSOR, UNKNOWN, Kind, Value, join, known
from .tensordict import TENSORDICT, names_tensordict

_LITERALS = (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.Integer,
             cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_BUSY = object()
_SEQUENCES = frozenset("List list Tuple tuple Sequence MutableSequence Iterable Iterator".split())
_KINDS = {k.value: k for k in Kind}


class Classes:
    def __init__(self, model) -> None:
        self.model = model
        self.imports = model.imports
        self._instances: Dict[int, object] = {}
        self._attributes: Dict[Tuple[int, str], object] = {}
        self._returns: Dict[int, object] = {}
        self._callers: Dict[Tuple[int, str], bool] = {}
        self._calls_by_name: Optional[Dict[str, List[cst.Call]]] = None

    # --- classes ---------------------------------------------------------------------------------

    def local_class(self, expr: cst.BaseExpression) -> Optional[cst.ClassDef]:
        name = dotted_name(expr)
        if name is None or self.imports.qualified_name(expr) is not None:
            return None
        return self.model.module_classes.get(name)

    def instance(self, cls: cst.ClassDef) -> Value:
        """What an instance of a class of this file is: a module, a tensor, a record or unknown."""
        memo = self._instances.get(id(cls))
        if memo is _BUSY:
            return Value(Kind.RECORD, cls.name.value)  # a cycle of bases: nothing more is learnt
        if memo is not None:
            return memo  # type: ignore[return-value]
        self._instances[id(cls)] = _BUSY
        result = self._instance(cls)
        self._instances[id(cls)] = result
        return result

    def _instance(self, cls: cst.ClassDef) -> Value:
        name = cls.name.value
        all_known = True
        for base in cls.bases:
            if base.keyword is not None:
                continue
            found = self.class_of_expr(base.value)
            if found is None:
                q = self.imports.qualified_name(base.value) or dotted_name(base.value) or ""
                if q not in v.KNOWN_NON_TENSOR_BASES and q not in v.NOT_TENSOR_BUILTIN_CLASSES:
                    all_known = False
                continue
            if found.kind is Kind.TENSOR:
                return Value(Kind.TENSOR, name)  # a Tensor subclass of this file: its class is kept
            if found.kind is Kind.MODULE:
                return Value(Kind.MODULE, name)
            if found.kind is not Kind.RECORD:
                all_known = False
        if not all_known:
            return UNKNOWN
        fields = tuple(stmt.body[0].target.value for stmt in getattr(cls.body, "body", ())
                       if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.AnnAssign)
                       and isinstance(stmt.body[0].target, cst.Name))
        return Value(Kind.RECORD, name, fields=fields or None)  # NamedTuple and dataclass fields

    def class_of_expr(self, expr: cst.BaseExpression) -> Optional[Value]:
        """What instances of the class ``expr`` names are, when known."""
        q = self.imports.qualified_name(expr)
        if q in v.TENSOR_CLASSES:
            return TENSOR
        last = q.rsplit(".", 1)[-1] if q is not None else ""
        if q is not None and (q in v.LIGHTNING_MODULES or q.startswith("torch.nn.") and last[:1].isupper()
                              and last not in ("Parameter", "Buffer")):
            return Value(Kind.MODULE, q)
        local = self.local_class(expr)
        if local is not None:
            return self.instance(local)
        if q is not None and not self.model.outside_project(q) and self.model.project is not None:
            index = self.model.project
            kind = index.module_class_kind(index.resolve(q) or q)
            if kind == "module":
                return Value(Kind.MODULE, q)
            if kind == "not-tensor":
                fields = index.class_fields(q)
                return Value(Kind.RECORD, q, fields=tuple(fields) if fields else None)
        return None

    # --- annotations and parameters --------------------------------------------------------------

    def annotation(self, ann: cst.BaseExpression) -> Value:
        """What an annotation promises: tensor, parameter, module, optimizer, list, mapping, number..."""
        if isinstance(ann, cst.SimpleString):
            text = ann.evaluated_value if isinstance(ann.evaluated_value, str) else ""
            try:
                return self.annotation(cst.parse_expression(text))
            except Exception:
                return UNKNOWN
        if _tensordict(ann):  # `TensorDictBase`, `Optional[TensorDict]`, `TensorDictBase | None`
            return TENSORDICT
        if isinstance(ann, cst.Subscript):
            if (dotted_name(ann.value) or "").rsplit(".", 1)[-1] in _SEQUENCES and self._of_tensors(ann):
                return Value(Kind.TENSOR_LIST)  # List[Tensor], Tuple[Tensor, ...], Sequence[torch.Tensor]
            ann = ann.value
        if isinstance(ann, cst.BinaryOperation):  # X | Y
            return UNKNOWN
        q = self.imports.qualified_name(ann)
        if q in v.TENSOR_CLASSES:
            return PARAMETER if q.endswith(".Parameter") else TENSOR
        if q is not None and (q == "torch.nn.Module" or q in v.LIGHTNING_MODULES):
            return Value(Kind.MODULE)
        if q is not None and q.startswith("torch.optim.") and q.endswith("Optimizer"):
            return Value(Kind.OPTIMIZER)
        if q == "argparse.Namespace":
            return Value(Kind.RECORD, q)
        cls = self.class_of_expr(ann) if q is None or q.startswith("torch.nn.") else None
        if cls is not None and cls.kind is Kind.MODULE:
            return cls
        name = dotted_name(ann)
        if name is None:
            return UNKNOWN
        last = name.rsplit(".", 1)[-1]
        local = self.local_class(ann)
        if local is not None:
            return self.instance(local)
        if last in ("int", "float", "complex", "bool") and q is None:
            return Value(Kind.NUMBER)
        if last in ("dict", "Dict", "Mapping", "MutableMapping"):
            return Value(Kind.MAPPING)
        if names_tensordict(q or ""):
            return TENSORDICT
        if last in v.NOT_TENSOR_ANNOTATIONS or (q or "").startswith("numpy."):
            return NOT_TENSOR
        return UNKNOWN

    def declared(self, b) -> Optional[Value]:
        """What the annotation of an annotated assignment (``x: Tensor = g()``) promises, if anything."""
        flow = b.scope.flow
        stmt = flow.cfg_nodes[b.cfg] if 0 <= b.cfg < len(flow.cfg_nodes) else None
        if not isinstance(stmt, cst.AnnAssign) or stmt.target is not b.node:
            return None
        found = self.annotation(stmt.annotation.annotation)
        return found if found.kind is not Kind.UNKNOWN else None

    def _of_tensors(self, ann: cst.Subscript) -> bool:
        """Every item type a sequence annotation names (``...`` aside) is a tensor."""
        if not all(isinstance(el.slice, cst.Index) for el in ann.slice):
            return False
        items = [el.slice.value for el in ann.slice if not isinstance(el.slice.value, cst.Ellipsis)]
        return bool(items) and all(self.annotation(i).kind.is_tensor for i in items)

    def parameter(self, b) -> Value:
        fn, param, index = b.owner, b.node, b.path[0]
        params = fn.params
        if param is params.star_arg or param is params.star_kwarg:
            return NOT_TENSOR
        key = b.key
        owner = b.scope.owner_class
        is_static = any(dotted_name(d.decorator) == "staticmethod" for d in fn.decorators)
        if index == 0 and owner is not None and key in ("self", "cls") and not is_static:
            return NOT_TENSOR if key == "cls" else self.instance(owner)
        if param.annotation is None:
            return UNKNOWN
        found = self.annotation(param.annotation.annotation)
        if found.kind.is_tensor and (param.default is not None or _mentions_guard(fn.body, key)
                                     or self._siblings_contradict(fn, key, owner)):
            return UNKNOWN  # the code itself doubts the annotation
        return found

    def _siblings_contradict(self, fn: cst.FunctionDef, key: str, owner: Optional[cst.ClassDef]) -> bool:
        """Whether a call of ``fn``, or of a function beside it (same class or module) with a parameter of
        the same name, passes a literal or a config field for that parameter: the annotation is wrong."""
        if owner is not None:
            siblings = [s for s in owner.body.body if isinstance(s, cst.FunctionDef)] \
                if isinstance(owner.body, cst.IndentedBlock) else []
        else:
            siblings = [s for s in self.model.module.body if isinstance(s, cst.FunctionDef)]
        for other in [fn] + [s for s in siblings if s is not fn]:
            params = list(other.params.posonly_params) + list(other.params.params) + list(other.params.kwonly_params)
            index = next((i for i, p in enumerate(params) if p.name.value == key), None)
            if index is not None and self._callers_contradict(other, index, key):
                return True
        return False

    def _callers_contradict(self, fn: cst.FunctionDef, index: int, key: str) -> bool:
        cache_key = (id(fn), key)
        if cache_key not in self._callers:
            if self._calls_by_name is None:
                self._calls_by_name = _calls_by_callee(self.model.module)
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
            self._callers[cache_key] = found
        return self._callers[cache_key]

    # --- functions and attributes ----------------------------------------------------------------

    def returns(self, fn: cst.FunctionDef) -> Value:
        """What the return annotation of ``fn`` promises, unless its own ``return`` statements
        contradict it (``-> torch.Tensor`` that returns a list): then UNKNOWN."""
        if fn.returns is None:
            return UNKNOWN
        promised = self.annotation(fn.returns.annotation)
        if not promised.kind.is_tensor:
            return promised
        memo = self._returns.get(id(fn))
        if memo is _BUSY:
            return UNKNOWN
        if memo is not None:
            return memo  # type: ignore[return-value]
        self._returns[id(fn)] = _BUSY
        result = promised
        scope = self.model.function_scope(fn)
        for value in scope.returns if scope is not None else ():
            if value is not None and known(self.model.evaluator.value(value)).kind.coarse is Kind.NOT_TENSOR:
                result = UNKNOWN
                break
        self._returns[id(fn)] = result
        return result

    def method_returns(self, cls: cst.ClassDef, name: str) -> Value:
        for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return self.returns(stmt)
        return UNKNOWN

    def self_attribute_of_read(self, read, depth: int) -> Optional[Value]:
        head, _, attr = read.key.partition(".")
        scope = read.scope.flow
        while scope.owner_class is None and head not in scope.bindings and scope.parent is not None:
            scope = scope.parent.flow  # a function nested in a method sees the method's `self`
        owner = scope.owner_class
        if head != "self" or "." in attr or owner is None:
            return None
        rebinding = next((b for b in scope.bindings.get(read.key, ()) if b.value is not None
                          and any(n is read.node for n in descendants(b.value))), None)
        if rebinding is not None:  # `self.x = torch.tensor(self.x)`: the read sees what x was before this store
            found = self.self_attribute(owner, attr, skip=rebinding)
            return found if found is not None and found.kind is not Kind.UNKNOWN else BEFORE_ITS_STORE
        return self.self_attribute(owner, attr)

    def self_attribute(self, cls: cst.ClassDef, attr: str, skip=None) -> Optional[Value]:
        """``self.x``: every assignment to it in the class's methods (and register_buffer) must agree. ``skip``: a
        store left out, the one whose value holds the read (not memoised)."""
        memo_key = (id(cls), attr)
        memo = self._attributes.get(memo_key) if skip is None else None
        if memo is _BUSY:
            return None
        if memo is not None:
            return memo  # type: ignore[return-value]
        if skip is None:
            self._attributes[memo_key] = _BUSY
        key = "self." + attr
        values, stores, placeholders = [], [], 0
        for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.FunctionDef):
                scope = self.model.function_scope(stmt)
                if scope is None:
                    continue
                for b in scope.bindings.get(key, ()):
                    if b is skip:
                        continue
                    if b.how == "assign" and not b.path and isinstance(b.value, cst.Name) and b.value.value == "None":
                        placeholders += 1  # `self.model = None` in __init__: set for real elsewhere
                        continue
                    values.append(self.model.evaluator.binding(b))  # `self.h, self.c = h0, c0` too
                stores.extend(scope.item_stores.get(key, ()))
        if skip is not None and not values:
            return None  # only the store being read for: the project's summary of the class holds it too
        result = join(values) if values else self._project_attribute(cls.name.value, attr)
        if result is None or result.kind is Kind.UNKNOWN:
            result = self._declared(cls, attr) or result  # `inp_tensor: Tensor` in the class body
        if result is not None and result.kind is Kind.MAPPING and stores:
            items = join([self.model.evaluator.value(s) for s in stores])
            result = Value(Kind.MAPPING, result.cls, items if result.item is None else join([result.item, items]))
        result = known(result)
        if skip is None:
            self._attributes[memo_key] = result
        return result

    def _declared(self, cls: cst.ClassDef, attr: str) -> Optional[Value]:
        """What an annotation of ``attr`` in the class body (``inp_tensor: Tensor``) promises, if anything."""
        for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                        and small.target.value == attr:
                    found = self.annotation(small.annotation.annotation)
                    return found if found.kind is not Kind.UNKNOWN else None
        return None

    def attribute_of_class(self, cls: str, attr: str, depth: int) -> Value:
        """``obj.attr`` of an instance of ``cls`` (a class of this file or of the project)."""
        return self._project_attribute(cls, attr)

    def _project_attribute(self, cls: str, attr: str) -> Value:
        """What the project index says of ``self.attr`` in ``cls`` (its bases included). A class of this
        file is asked for under this module's name: the index reads the file itself, never the pruned
        tree, so the answer is the same for a pruned parse."""
        index = self.model.project
        if index is None:
            return UNKNOWN
        if cls in self.model.module_classes:
            module_name = getattr(index, "module_name", None)
            if not module_name:
                return UNKNOWN
            cls = f"{module_name}.{cls}"
        found = index.attribute_kind(cls, attr)
        return Value(_KINDS[found]) if found in _KINDS else UNKNOWN


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
    for node in nodes_of_type(module, cst.Call):
        func = node.func  # type: ignore[attr-defined]
        name = func.value if isinstance(func, cst.Name) \
            else func.attr.value if isinstance(func, cst.Attribute) else None
        if name is not None:
            calls.setdefault(name, []).append(node)  # type: ignore[arg-type]
    return calls


def _plain_non_tensor(value: cst.BaseExpression) -> bool:
    """A call argument that is visibly not a tensor: a literal or a config field (``self.vae.config.x``)."""
    if isinstance(value, _LITERALS):
        return True
    name = dotted_name(value)
    return name is not None and any(p in v.CONFIG_COMPONENTS for p in name.split(".")[:-1])


del Set


def _tensordict(ann: cst.BaseExpression) -> bool:
    """An annotation with one of tensordict's containers (``TensorDictBase``), maybe Optional or ``| None``."""
    if isinstance(ann, cst.Subscript) and (dotted_name(ann.value) or "").rsplit(".", 1)[-1] == "Optional" \
            and len(ann.slice) == 1 and isinstance(ann.slice[0].slice, cst.Index):
        return _tensordict(ann.slice[0].slice.value)
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        sides = [side for side in (ann.left, ann.right) if not (isinstance(side, cst.Name) and side.value == "None")]
        return len(sides) == 1 and _tensordict(sides[0])
    name = dotted_name(ann)
    return name is not None and names_tensordict(name)
