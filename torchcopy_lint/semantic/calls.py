"""What calls return: torch functions and classes, optimizers, records, mappings, builtins, methods,
and functions and classes of this file or (through ``ProjectIndex``) of the project.

What it knows: the torch vocabulary (vocabulary.py), ``copy.copy``/``deepcopy`` keep their argument's
kind, ``namedtuple``/``NamedTuple``/dataclass classes make records, ``argparse`` makes namespaces,
``dict``/``OrderedDict`` make mappings (with their items), ``list(model.parameters())`` is a list of
tensors, tensor methods keep tensors and module methods (``to``, ``cuda``, ``train``) keep modules.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from . import library
from . import vocabulary as v
from .kinds import NOT_TENSOR, NUMBER, PARAMETER, TENSOR, UNKNOWN, Kind, Value, join, known
from .tensordict import KEPT_METHODS, TENSORDICT, names_tensordict

_DATA_LIBRARIES = ("numpy", "math", "pandas", "random", "json")
_PROJECT_KINDS = {"module": Kind.MODULE, "tensor": Kind.TENSOR, "parameter": Kind.PARAMETER,
                  "optimizer": Kind.OPTIMIZER, "tensor-list": Kind.TENSOR_LIST, "record": Kind.RECORD,
                  "mapping": Kind.MAPPING, "number": Kind.NUMBER, "not-tensor": Kind.NOT_TENSOR}


class Calls:
    def __init__(self, model) -> None:
        self.model = model
        self.imports = model.imports

    @property
    def evaluator(self):
        return self.model.evaluator

    def qualified(self, q: str, call: cst.Call, depth: int) -> Optional[Value]:
        parts = q.split(".")
        root, last = parts[0], parts[-1]
        if root in _DATA_LIBRARIES:
            return NOT_TENSOR
        if names_tensordict(q):  # `TensorDict(...)`, `TensorDict.from_module(policy)`, `tensordict.stack(...)`
            return TENSORDICT
        if q in v.MAPPING_FACTORIES:
            return self.mapping(call, depth)
        if q in v.RECORD_FACTORIES:
            return Value(Kind.RECORD, q)
        if q in ("copy.copy", "copy.deepcopy") and call.args and not call.args[0].star:
            return self.evaluator.value(call.args[0].value, depth + 1)
        if root == "torch":
            if q == "torch.autograd.grad":
                return Value(Kind.TENSOR_LIST)  # a tuple of tensors
            if q in v.MODULE_WRAPPERS and call.args and not call.args[0].star:
                return self.evaluator.value(call.args[0].value, depth + 1)  # the module it was given
            if q in v.MODULE_FUNCTIONS:
                return Value(Kind.MODULE)
            if q in v.MODULE_IF_MODULE_FUNCTIONS and call.args and not call.args[0].star:
                given = self.evaluator.value(call.args[0].value, depth + 1)
                return Value(Kind.MODULE) if given is not None and given.kind is Kind.MODULE else UNKNOWN
            if q in v.TENSOR_CLASSES:
                return PARAMETER if last == "Parameter" else TENSOR
            if len(parts) == 2 and last in v.TORCH_TENSOR_FUNCTIONS:
                return TENSOR
            if len(parts) == 2 and last in v.TORCH_NOT_TENSOR:
                return NOT_TENSOR
            if len(parts) == 3 and (last in v.TORCH_SUBMODULE_TENSOR_FUNCTIONS.get(parts[1], ()) or
                                    parts[1] in v.TORCH_TENSOR_SUBMODULES and last[:1].islower()):
                return TENSOR  # torch.linalg.norm, torch.fft.rfft, torch.special.erf
            found = library.torch_call(q, call, self.arg_value(depth))
            if found is not None:
                return found
            if q.startswith("torch.nn.") and last[:1].isupper() and last not in ("Parameter", "Buffer"):
                return Value(Kind.MODULE, q)
            if q.startswith("torch.optim.") and last[:1].isupper():
                return NOT_TENSOR if "lr_scheduler" in parts or "swa_utils" in parts else Value(Kind.OPTIMIZER, q)
            return None
        if self.model.outside_project(q):
            return None
        return self.project(q, call, depth)

    def arg_value(self, depth: int):
        """The value of an argument, for choosing among a library function's overloads."""
        return lambda e: known(self.evaluator.value(e, depth + 1))

    def project(self, q: str, call: cst.Call, depth: int) -> Optional[Value]:
        """A class or function of another module of the project."""
        index = self.model.project
        if index is None:
            return None
        q = index.resolve(q) or q
        cls = index.module_class_kind(q)
        if cls is not None:
            if cls == "not-tensor":
                fields = index.class_fields(q)
                return Value(Kind.RECORD, q, fields=tuple(fields) if fields else None)
            if cls == "tensor":
                return Value(Kind.TENSOR, q)  # an instance of a project Tensor subclass
            return Value(Kind.MODULE, q) if cls == "module" else known(_project_value(cls))
        returned = index.function_return(q)
        if returned is None:
            return None
        if returned.startswith("arg:"):
            arg, _, attr = returned[4:].partition(".")
            args = [a for a in call.args if a.keyword is None and not a.star]
            if not arg.isdigit() or int(arg) >= len(args):
                return UNKNOWN
            found = self.evaluator.value(args[int(arg)].value, depth + 1)
            if not attr:
                return found
            return found if found is not None and found.kind is Kind.MODULE and attr == "module" else UNKNOWN
        return _project_value(returned)

    def _own_function(self, name: str, call: cst.Call, depth: int) -> Value:
        """A module-level function of this file, as the project index reads it (it knows functions that
        return one of their arguments, ``def adapt(model, ...): ...; return model``)."""
        module_name = getattr(self.model.project, "module_name", None)
        if not module_name:
            return UNKNOWN
        return known(self.project(f"{module_name}.{name}", call, depth))

    def mapping(self, call: cst.Call, depth: int) -> Value:
        items = [self.evaluator.value(a.value, depth + 1) for a in call.args if a.keyword is not None]
        return Value(Kind.MAPPING, item=join(items) if items and len(items) == len(call.args) else None)

    def named(self, func: cst.Name, call: cst.Call, depth: int) -> Optional[Value]:
        name = func.value
        read = self.model.reads.get(id(func))
        bindings = self.model.bindings_of_read(read) if read is not None else []
        if bindings:
            hows = {b.how for b in bindings}
            if hows == {"class"}:
                return join([self.model.classes.instance(b.node) for b in bindings])
            if hows == {"def"}:
                found = join([self.model.classes.returns(b.node) for b in bindings])
                if known(found).kind is Kind.UNKNOWN and len(bindings) == 1 and bindings[0].scope.kind == "module":
                    return self._own_function(name, call, depth)  # `return model`: what it was given
                return found
            b = bindings[0]
            if len(bindings) == 1 and b.how == "assign" and not b.path and isinstance(b.value, cst.Call) \
                    and self.imports.qualified_name(b.value.func) in v.RECORD_CLASS_FACTORIES:
                return Value(Kind.RECORD, name, fields=_declared_fields(b.value))
            return UNKNOWN
        if self.imports.is_imported(name):
            return UNKNOWN
        if name == "dict":
            return self.mapping(call, depth)
        if name in ("list", "tuple") and len(call.args) == 1 and not call.args[0].keyword:
            items = self.evaluator.element(call.args[0].value, depth + 1)
            return Value(Kind.TENSOR_LIST) if items is not None and items.kind.is_tensor else NOT_TENSOR
        if name in v.NUMBER_BUILTINS:
            return NUMBER
        if name in v.NOT_TENSOR_BUILTINS:
            return NOT_TENSOR
        return UNKNOWN

    def method(self, func: cst.Attribute, call: cst.Call, depth: int) -> Optional[Value]:
        method = func.attr.value
        receiver = func.value
        if method in v.NUMBER_METHODS:
            return NUMBER
        if method in v.NOT_TENSOR_METHODS:
            return NOT_TENSOR
        if method == "parse_args":
            return Value(Kind.RECORD, "argparse.Namespace")
        if method in ("_replace", "_asdict", "state_dict", "copy"):
            owner = known(self.evaluator.value(receiver, depth + 1))
            if method == "_replace":
                return owner if owner.kind is Kind.RECORD else UNKNOWN
            if method == "_asdict":
                return Value(Kind.MAPPING)
            if method == "state_dict":
                return Value(Kind.MAPPING, item=TENSOR if owner.kind is Kind.MODULE else None)
            return owner if owner.kind in (Kind.MAPPING, Kind.TENSOR_LIST) else UNKNOWN
        if method in v.MODULE_PRESERVING_METHODS or method in v.TENSOR_ONLY_METHODS \
                or method in v.TENSOR_RETURNING_METHODS or method.endswith("_") or library.is_tensor_method(method):
            rk = known(self.evaluator.value(receiver, depth + 1))
            if rk.kind is Kind.MODULE and method in v.MODULE_PRESERVING_METHODS \
                    or rk == TENSORDICT and method in KEPT_METHODS:
                return rk
            if method in v.TENSOR_ONLY_METHODS or (method in v.CAST_METHODS and rk.kind.coarse is not Kind.NOT_TENSOR):
                return TENSOR if rk.kind.coarse is not Kind.NOT_TENSOR else UNKNOWN
            if rk.kind.is_tensor:
                found = library.tensor_method(method, call, self.arg_value(depth))
                return found if found is not None else TENSOR
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):  # the class's own method
            read = self.model.reads.get(id(receiver))
            owner = read.scope.flow.owner_class if read is not None else None
            if owner is not None:
                return self.model.classes.method_returns(owner, method)
        return UNKNOWN


def _project_value(kind: str) -> Optional[Value]:
    found = _PROJECT_KINDS.get(kind)
    return Value(found) if found is not None else None


def _declared_fields(call: cst.Call) -> Optional[tuple]:
    """The field names of ``namedtuple("P", "a b")``, ``namedtuple("P", ["a", "b"])`` or
    ``NamedTuple("P", [("a", int), ...])``."""
    if len(call.args) < 2:
        return None
    spec = call.args[1].value
    if isinstance(spec, cst.SimpleString) and isinstance(spec.evaluated_value, str):
        return tuple(spec.evaluated_value.replace(",", " ").split())
    if isinstance(spec, (cst.List, cst.Tuple)):
        names = []
        for el in spec.elements:
            item = el.value
            if isinstance(item, cst.Tuple) and item.elements:
                item = item.elements[0].value
            if not isinstance(item, cst.SimpleString) or not isinstance(item.evaluated_value, str):
                return None
            names.append(item.evaluated_value)
        return tuple(names)
    return None
