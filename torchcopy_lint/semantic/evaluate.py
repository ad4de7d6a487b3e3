"""Values of expressions and bindings, computed on demand and memoized per binding.

What it knows: literals and displays, names and attribute chains (a read's value is the join of the bindings that
reach it, or the narrowing in force), parameters (annotations, a test's parametrize values), subscripts, operators,
comparisons with a tensor (a bool tensor), conditional expressions, calls (torch, optimizers, records, mappings,
builtins, methods of tensors and modules, this file's and the project's functions and classes), what iterating or
unpacking yields. A binding asked again while computed (``x = x + 1`` in a loop) gives None; deep chains UNKNOWN.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from ..imports import dotted_name
from . import vocabulary as v
from .. import knowledge
from .library import descend, module_like, position
from .kinds import BEFORE_ITS_STORE, NOT_TENSOR, NUMBER, PARAMETER, TENSOR, UNKNOWN, Kind, Value, join, known
from .parametrize import parametrized
from .tensordict import TENSORDICT

_MAX_DEPTH = 48
_NUMBERS = (cst.Integer, cst.Float, cst.Imaginary)
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_BUSY = object()
_ELEMENTWISE = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


class Evaluator:
    def __init__(self, model) -> None:
        self.model = model
        self.imports = model.imports
        self._bindings: Dict[int, object] = {}

    # --- entry points ----------------------------------------------------------------------------

    def value(self, e: cst.BaseExpression, depth: int = 0) -> Optional[Value]:
        if depth > _MAX_DEPTH:
            self.model.truncations += 1
            return UNKNOWN
        if isinstance(e, _NUMBERS):
            return NUMBER
        if isinstance(e, _STRINGS):
            return NOT_TENSOR
        if isinstance(e, cst.Name):
            if e.value in ("True", "False", "None"):
                return NOT_TENSOR
            read = self.model.reads.get(id(e))
            return self.read_value(read, depth) if read is not None else UNKNOWN
        if isinstance(e, cst.Attribute):
            return self.attribute(e, depth)
        if isinstance(e, cst.Call):
            return self.call(e, depth)
        if isinstance(e, (cst.List, cst.Tuple)):
            items = [self.value(el.value, depth + 1) for el in e.elements if not isinstance(el, cst.StarredElement)]
            if items and len(items) == len(e.elements) and all(i is not None and i.kind.is_tensor for i in items):
                return Value(Kind.TENSOR_LIST)
            return NOT_TENSOR
        if isinstance(e, cst.Dict):
            items = [self.value(el.value, depth + 1) for el in e.elements if isinstance(el, cst.DictElement)]
            return Value(Kind.MAPPING, item=join(items) if items and len(items) == len(e.elements) else None)
        if isinstance(e, cst.ListComp):
            elt = self.value(e.elt, depth + 1)
            return Value(Kind.TENSOR_LIST) if elt is not None and elt.kind.is_tensor else NOT_TENSOR
        if isinstance(e, cst.DictComp):
            return Value(Kind.MAPPING, item=self.value(e.value, depth + 1))
        if isinstance(e, (cst.Set, cst.SetComp, cst.GeneratorExp, cst.Lambda)):
            return NOT_TENSOR
        if isinstance(e, cst.Subscript):
            return self.subscript(e, depth)
        if isinstance(e, cst.BinaryOperation):
            left, right = self.value(e.left, depth + 1), self.value(e.right, depth + 1)
            if any(x is not None and x.kind.is_tensor for x in (left, right)):
                return TENSOR
            if all(x is None or x.kind.is_known_other and x.kind is not Kind.MODULE for x in (left, right)):
                return join([left, right]) or None
            return UNKNOWN
        if isinstance(e, cst.Comparison) and len(e.comparisons) == 1 \
                and isinstance(e.comparisons[0].operator, _ELEMENTWISE):  # feats > 0: a bool tensor
            sides = (self.value(side, depth + 1) for side in (e.left, e.comparisons[0].comparator))
            return TENSOR if any(x is not None and x.kind.is_tensor for x in sides) else UNKNOWN
        if isinstance(e, cst.UnaryOperation):
            return NOT_TENSOR if isinstance(e.operator, cst.Not) else self.value(e.expression, depth + 1)
        if isinstance(e, cst.IfExp):
            return self.optional(e, depth)
        if isinstance(e, cst.NamedExpr):
            return self.value(e.value, depth + 1)
        return UNKNOWN

    def optional(self, e: cst.IfExp, depth: int) -> Optional[Value]:
        """``X if c else None`` is X's value: every question a rule asks is about the value, not None."""
        branches = [b for b in (e.body, e.orelse) if not (isinstance(b, cst.Name) and b.value == "None")]
        return join([self.value(b, depth + 1) for b in branches]) if branches else NOT_TENSOR

    def read_value(self, read, depth: int) -> Optional[Value]:
        if read.fact is not None:
            return read.fact
        if read.defs is None:
            return self.model.free_value(read, depth)
        return join([self.binding(b, depth) for b in self.model.flatten(read.defs)])

    def binding(self, b, depth: int = 0) -> Optional[Value]:
        memo = self._bindings.get(id(b))
        if memo is _BUSY:
            return None
        if memo is not None:
            return memo  # type: ignore[return-value]
        self._bindings[id(b)] = _BUSY
        truncated = self.model.truncations
        try:
            result = self._binding(b, depth + 1)
        finally:
            del self._bindings[id(b)]
        if result is not None and self.model.truncations == truncated:
            self._bindings[id(b)] = result
        return result

    # --- bindings --------------------------------------------------------------------------------

    def _binding(self, b, depth: int) -> Optional[Value]:
        how = b.how
        if depth > _MAX_DEPTH:
            self.model.truncations += 1
            return UNKNOWN
        if how == "assign":
            found = self.unpacked(b.value, b.path, depth)
            if (found is None or found.kind is Kind.UNKNOWN) and not b.path:
                found = self.model.classes.declared(b) or found  # `x: Tensor = g()`
            if found is not None and found.kind in (Kind.NOT_TENSOR, Kind.MAPPING) and not b.path:
                return self._filled(b, found, depth)
            return found if b.path else self.model.tensordicts.unless_one(b, found)
        if how == "iter":
            return self.iterated(b.value, b.path, depth)
        if how == "aug":
            added = self.value(b.value, depth + 1)
            before = join([self.binding(p, depth) for p in self.model.flatten(b.previous)])
            if any(x is not None and x.kind.is_tensor for x in (added, before)):
                return TENSOR
            if before is not None and before.kind in (Kind.TENSOR_LIST, Kind.NOT_TENSOR, Kind.MAPPING):
                return NOT_TENSOR
            return join([before, added]) if added is not None and added.kind is Kind.NUMBER else UNKNOWN
        if how == "ann":
            return self.model.classes.annotation(b.value.annotation)
        if how == "param":
            return self.model.tensordicts.unless_one(b, parametrized(b, self.model.classes.parameter(b), self.imports))
        if how in ("import", "def", "class"):
            return NOT_TENSOR
        if how == "buffer":
            found = self.value(b.value, depth + 1)
            return found if found is not None and found.kind.is_tensor else UNKNOWN
        return UNKNOWN

    def _filled(self, b, found: Value, depth: int) -> Value:
        """A list filled by ``xs.append(t)`` of tensors only holds tensors; a mapping, what ``d[k] = v`` stores."""
        stores = b.scope.item_stores.get(b.key)
        if not stores:
            return found
        items = join([self.value(s, depth + 1) for s in stores])
        if found.kind is Kind.NOT_TENSOR:
            empty = isinstance(b.value, cst.List) and not b.value.elements
            return Value(Kind.TENSOR_LIST) if empty and items is not None and items.kind.is_tensor else found
        if found.item is None and not _empty_mapping(b.value):
            return found
        return Value(Kind.MAPPING, found.cls, join([found.item, items]))

    def unpacked(self, value: cst.BaseExpression, path: Tuple, depth: int) -> Optional[Value]:
        """What ``target = value`` binds at ``path`` (positions into tuple targets)."""
        if not path:
            return self.value(value, depth + 1)
        where, length = path[0]
        if where == -1:
            return NOT_TENSOR  # a starred target is always a list
        if isinstance(value, (cst.Tuple, cst.List)) and where >= 0 and len(value.elements) == length \
                and not any(isinstance(el, cst.StarredElement) for el in value.elements):
            return self.unpacked(value.elements[where].value, path[1:], depth)
        whole = self.value(value, depth + 1)
        if whole is not None and whole.items is not None:
            return descend(whole, path)  # `values, idx = torch.topk(x, k)`, `out, (h, c) = lstm(x)`
        if whole is not None and (whole.kind.is_tensor or whole.kind is Kind.TENSOR_LIST and len(path) == 1):
            return TENSOR  # rows of a tensor, items of a list of tensors
        return UNKNOWN

    def iterated(self, iterable: cst.BaseExpression, path: Tuple, depth: int) -> Optional[Value]:
        """What ``for target in iterable`` binds at ``path``."""
        if not path:
            return self.element(iterable, depth)
        where, length = path[0]
        if where == -1:
            return NOT_TENSOR
        items = self.tuple_items(iterable, depth)
        if items is not None and where >= 0 and len(items) == length:
            item, source = items[where]
            if source is not None:
                return self.iterated(source, path[1:], depth)
            if len(path) == 1:
                return item
            return TENSOR if item is not None and item.kind.is_tensor else UNKNOWN
        whole = self.element(iterable, depth)
        if whole is not None and (whole.kind.is_tensor or whole.kind is Kind.TENSOR_LIST and len(path) == 1):
            return TENSOR  # rows of tensors, items of lists of tensors (a batch of a tuple dataset)
        return UNKNOWN

    def element(self, iterable: cst.BaseExpression, depth: int) -> Optional[Value]:
        """Value of the items produced by iterating ``iterable``."""
        if isinstance(iterable, cst.Call):
            func = iterable.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in ("parameters", "buffers"):
                    owner = self.value(func.value, depth + 1)
                    if owner is not None and owner.kind is Kind.RECORD:
                        return UNKNOWN  # a class known not to be an nn.Module (micrograd's): its own method
                    return PARAMETER if method == "parameters" else TENSOR
                if method == "values":
                    owner = self.value(func.value, depth + 1)
                    if owner is not None and owner.kind is Kind.MAPPING:
                        return known(owner.item)
            if isinstance(func, cst.Name) and func.value == "range" and not self.imports.is_imported("range"):
                return NUMBER
        if isinstance(iterable, cst.Attribute) and iterable.attr.value in v.PARAMETER_ITERATORS:
            return PARAMETER  # for p in self.parameters: a list of parameters kept by the object
        if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1:
            index = iterable.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) \
                    and index.value.evaluated_value == "params":
                return PARAMETER  # for p in group["params"]: an optimizer param group
        if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
            items = [self.value(el.value, depth + 1) for el in iterable.elements
                     if not isinstance(el, cst.StarredElement)]
            return join(items) if items else UNKNOWN
        if isinstance(iterable, (*_STRINGS, cst.Dict)):
            return NOT_TENSOR
        if isinstance(iterable, (cst.GeneratorExp, cst.ListComp)):
            return self.value(iterable.elt, depth + 1)  # `list(t * 2 for t in ts)`
        batch = self.batches(iterable, depth)
        if batch is not None:
            return batch
        whole = self.value(iterable, depth + 1)
        if whole is not None and (whole.kind.is_tensor or whole.kind is Kind.TENSOR_LIST):
            return TENSOR
        return UNKNOWN  # the keys of a mapping can be tensors too

    def batches(self, loader: cst.BaseExpression, depth: int) -> Optional[Value]:
        """What iterating ``DataLoader(ds)`` (no ``collate_fn``) yields when ``ds``'s class here has a ``__getitem__``
        returning tensors (a batch: a tensor) or tuples of them (a list of tensors); None when that is not known."""
        calls = [loader] if isinstance(loader, cst.Call) else self._assigned_calls(loader)
        found: List[Optional[Value]] = []
        for call in calls or ():
            if self.imports.qualified_name(call.func) not in v.DATA_LOADERS \
                    or any(a.keyword is not None and a.keyword.value == "collate_fn" for a in call.args):
                return None
            dataset = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dataset"),
                           call.args[0].value if call.args and call.args[0].keyword is None else None)
            made = dataset if isinstance(dataset, cst.Call) else \
                (self._assigned_calls(dataset) or [None])[0] if dataset is not None else None
            cls = self.model.classes.local_class(made.func) if made is not None else None
            getitem = next((m for m in (cls.body.body if cls is not None else ())
                            if isinstance(m, cst.FunctionDef) and m.name.value == "__getitem__"), None)
            scope = self.model.function_scope(getitem) if getitem is not None else None
            if scope is None or not scope.returns:
                return None
            for value in scope.returns:
                if isinstance(value, cst.Tuple) and value.elements and all(
                        _tensor(self.value(el.value, depth + 1)) for el in value.elements):
                    found.append(Value(Kind.TENSOR_LIST))
                elif value is not None and _tensor(self.value(value, depth + 1)):
                    found.append(TENSOR)
                else:
                    return None
        return join(found) if found else None

    def _assigned_calls(self, e: cst.BaseExpression) -> Optional[List[cst.Call]]:
        """The calls a name was assigned from, when every binding reaching this read is ``name = call(...)``."""
        read = self.model.reads.get(id(e)) if isinstance(e, cst.Name) else None
        if read is None or not read.defs:
            return None
        bindings = self.model.flatten(read.defs)
        if not all(b.how == "assign" and not b.path and isinstance(b.value, cst.Call) for b in bindings):
            return None
        return [b.value for b in bindings]

    def tuple_items(self, iterable: cst.BaseExpression, depth: int
                    ) -> Optional[List[Tuple[Optional[Value], Optional[cst.BaseExpression]]]]:
        """Per position (value, or the iterable it comes from) when iterating yields tuples of known shape."""
        if not isinstance(iterable, cst.Call):
            return None
        func = iterable.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "named_parameters":
                return [(NOT_TENSOR, None), (PARAMETER, None)]
            if method == "named_buffers":
                return [(NOT_TENSOR, None), (TENSOR, None)]
            if method == "items":
                owner = func.value
                if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Attribute) \
                        and owner.func.attr.value == "state_dict" or \
                        isinstance(owner, cst.Attribute) and owner.attr.value in ("_parameters", "_buffers"):
                    return [(NOT_TENSOR, None), (TENSOR, None)]
                mapping = self.value(owner, depth + 1)
                if mapping is not None and mapping.kind is Kind.MAPPING and mapping.item is not None:
                    return [(UNKNOWN, None), (mapping.item, None)]  # keys may be tensors too
            return None
        if isinstance(func, cst.Name) and not self.imports.is_imported(func.value):
            if func.value == "enumerate" and iterable.args:
                return [(NUMBER, None), (None, iterable.args[0].value)]
            if func.value == "zip" and not any(a.star for a in iterable.args):
                return [(None, a.value) for a in iterable.args if not a.keyword]
        return None

    # --- expressions -----------------------------------------------------------------------------

    def subscript(self, e: cst.Subscript, depth: int) -> Optional[Value]:
        base = self.value(e.value, depth + 1)
        if base is None:
            return None
        if base.kind.is_tensor:
            return TENSOR
        if base.items is not None and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            at = position(e.slice[0].slice.value)
            if at is not None and -len(base.items) <= at < len(base.items):
                return base.items[at]  # `x.max(1)[0]`
        sliced = any(isinstance(el.slice, cst.Slice) for el in e.slice)
        if base.kind is Kind.TENSOR_LIST:
            return base if sliced else TENSOR
        if base.kind is Kind.MAPPING and base.item is not None:
            return base.item
        return UNKNOWN

    def attribute(self, e: cst.Attribute, depth: int) -> Optional[Value]:
        q = self.imports.qualified_name(e)
        if q is not None:
            head, _, last = q.rpartition(".")
            if head == "torch" and (last in v.TORCH_CONSTANTS or last in v.TORCH_NOT_TENSOR):
                return NOT_TENSOR
            if head == "torch" and last[:1].islower() and last not in v.TORCH_TENSOR_FUNCTIONS \
                    and not knowledge.gives_tensor(last):
                return NOT_TENSOR  # dtypes (torch.float32), submodules
            if q.split(".")[0] in ("math", "numpy", "sys", "os"):
                return NOT_TENSOR
        attr = e.attr.value
        if attr in v.NOT_TENSOR_ATTRIBUTES:
            return NOT_TENSOR
        dotted = dotted_name(e)
        if dotted is not None and any(p in v.CONFIG_COMPONENTS for p in dotted.split(".")[:-1]):
            return NOT_TENSOR
        read = self.model.reads.get(id(e))
        if read is not None:
            found = self.read_value(read, depth) if read.defs is not None or read.fact is not None \
                else self.model.classes.self_attribute_of_read(read, depth)
            if found is not None and (found.kind is not Kind.UNKNOWN or found is BEFORE_ITS_STORE):
                return found
        base = self.value(e.value, depth + 1)
        if base is None:
            return None
        if base.fields is not None and base.items is not None and attr in base.fields:
            return base.items[base.fields.index(attr)]  # `x.max(1).values`
        if base.kind.is_tensor and (attr in v.TENSOR_ATTRIBUTES_OF_TENSOR
                                    or knowledge.lookup("tensor_attributes", attr) == "T"):
            return TENSOR
        if base == TENSORDICT and attr == "data":
            return base  # `td.data`: a TensorDict of the leaves' .data
        if base.kind is Kind.MODULE and attr in v.PARAMETER_ATTRIBUTES:
            return PARAMETER
        if base.kind is Kind.MODULE and attr in ("running_mean", "running_var"):
            return TENSOR  # batch-norm buffers
        if base.kind is Kind.MODULE and attr == "module" and (base.cls is None or base.cls in v.MODULE_HOLDERS):
            return Value(Kind.MODULE)  # the module a DataParallel/DDP wrapper (or an unknown mix of them) holds
        if base.kind in (Kind.MODULE, Kind.RECORD) and base.cls is not None:
            return self.model.classes.attribute_of_class(base.cls, attr, depth)
        return self.model.field_types.of(e, base, depth)  # `module.eigens` where only `Eigens(..)` is stored

    def call(self, e: cst.Call, depth: int) -> Optional[Value]:
        func = e.func
        q = self.imports.qualified_name(func)
        if q is not None:
            found = self.model.calls.qualified(q, e, depth)
            if found is not None:
                return found
        if isinstance(func, cst.Name):
            found = self.model.calls.named(func, e, depth)
        elif isinstance(func, cst.Attribute):
            found = self.model.calls.method(func, e, depth)
        else:
            found = UNKNOWN  # `Net()(x)`
        if found is not None and found.kind is Kind.UNKNOWN and module_like(func):
            module = self.value(func, depth + 1)
            if module is not None and module.kind is Kind.MODULE:
                return self.model.module_calls.call(module, e, depth)  # `lin(x)`: what its forward returns
        return found


def _tensor(value: Optional[Value]) -> bool:
    return value is not None and value.kind.is_tensor


def _empty_mapping(value) -> bool:
    return isinstance(value, cst.Dict) and not value.elements or isinstance(value, cst.Call) and not value.args
