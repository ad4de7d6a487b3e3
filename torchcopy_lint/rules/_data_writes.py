"""Writes through ``.data``, found once for the two rules that report them by autograd context.

TCL104 reports the writes where a graph may be live, TCL119 the ones in graph-free code
(``semantic/autograd.py`` decides). A write is reported only with evidence that the receiver is a
tensor: 'known' (the model knows a tensor: the fix is offered) or 'likely' (named or made like one and
not known to be anything else: no fix). ``self.data`` of a Dataset, a record's or a namespace's ``data``
field and anything unknown stay silent.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

import libcst as cst

from ..engine import Rule
from ..imports import dotted_name
from ..semantic import GraphContext, Kind
from ._tensor_data import literal_kind

# In-place tensor methods that do not write values.
_HARMLESS_IN_PLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad", "detach_"})
# Attributes that hold parameters, buffers or gradients: `m.weight.data = ...` is a tensor's `.data`.
_TENSOR_ATTRIBUTES = frozenset({"weight", "bias", "grad", "_grad", "running_mean", "running_var", "weight_g",
                                "weight_v", "weight_orig", "bias_orig"})
_TENSOR_NAME = re.compile(r"^(?:\w+_)?(?:param|params|parameter|tensor|weight|bias|grad|buffer|embeddings)$")
# Collections of tensors, by name: `for g in grads`, `for p in params`.
_TENSORS_NAME = re.compile(r"^(?:\w+_)?(?:param|params|parameters|grad|grads|gradients|weights|tensors|buffers)$")
# Methods that return a tensor when called on one: `p.data = p.data.to(dtype)` rebinds a tensor's storage.
_TENSOR_SELF_METHODS = frozenset({"to", "cpu", "cuda", "float", "half", "double", "bfloat16", "view", "view_as",
                                  "type_as", "reshape", "contiguous", "clone", "detach", "pin_memory", "resize_"})


class DataWrites(Rule):
    """Finds the writes; a subclass says which contexts it wants (``wants``) and reports (``found``)."""

    # A forward pre-hook's registration: semantic/pre_hooks.py reads every call of the module it is registered on,
    # anywhere in the file (a module run twice), which pruning would blank out.
    unprunable = "forward_pre_hook"

    def wants(self, context: GraphContext) -> bool:
        raise NotImplementedError

    def found(self, node: cst.Attribute, context: GraphContext, evidence: str, form: str,
              replacement: Optional[cst.BaseExpression]) -> None:
        """``form``: 'write' (in-place method, subscript or augmented assignment), 'rebind' (``p.data = v``)
        or 'init' (``nn.init.*_(p.data)``); ``replacement``: the fix's expression when one is known."""
        raise NotImplementedError

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        receiver = node.value
        parent = self.context.parent()
        grand = self.context.parent(2)
        if isinstance(parent, cst.Attribute) and parent.value is node:  # p.data.add_(...)
            name = parent.attr.value
            if isinstance(grand, cst.Call) and grand.func is parent and name.endswith("_") \
                    and not name.startswith("__") and name not in _HARMLESS_IN_PLACE:
                self._report_write(node, receiver, _detach(node))
        elif isinstance(parent, cst.Subscript) and parent.value is node:  # p.data[i] = v, p.data[i] += v
            if isinstance(grand, (cst.AssignTarget, cst.AugAssign)) and grand.target is parent:
                self._report_write(node, receiver, _detach(node))
        elif isinstance(parent, cst.AugAssign) and parent.target is node:  # p.data += v
            self._report_write(node, receiver, None)
        elif isinstance(parent, cst.AssignTarget) and parent.target is node:  # p.data = v
            value = grand.value if isinstance(grand, cst.Assign) else None
            if value is None or not self._visibly_not_tensor(value):
                evidence = self._evidence(receiver)
                if evidence is None and value is not None and self.context.value_of(receiver).kind is Kind.UNKNOWN \
                        and self._rebinds_from_tensor(receiver, value):
                    evidence = "likely"
                if evidence is not None:
                    self._emit(node, receiver, evidence, "rebind", None)
        elif isinstance(parent, cst.Arg) and parent.value is node and isinstance(grand, cst.Call) \
                and grand.args and grand.args[0] is parent:
            self._check_in_place_function(node, grand)

    def _check_in_place_function(self, node: cst.Attribute, call: cst.Call) -> None:
        """``nn.init.normal_(m.weight.data)`` and other in-place torch functions."""
        q = self.context.qualified_name(call.func)
        if not q or not q.startswith("torch.") or not q.endswith("_") or q.endswith("__"):
            return
        # nn.init functions already run under no_grad: the plain parameter is the idiom.
        if q.startswith("torch.nn.init."):
            replacement: cst.BaseExpression = node.value.with_changes(
                lpar=[*node.lpar, *node.value.lpar], rpar=[*node.value.rpar, *node.rpar])
            self._report_write(node, node.value, replacement, "init")
        else:
            self._report_write(node, node.value, _detach(node))

    def _report_write(self, node: cst.Attribute, receiver: cst.BaseExpression,
                      replacement: Optional[cst.BaseExpression], form: str = "write") -> None:
        """One evidence ladder for every form of write: a receiver known to be a tensor is flagged with
        the fix; one that is probably a tensor is flagged without a fix; anything else is silent."""
        evidence = self._evidence(receiver)
        if evidence is not None:
            self._emit(node, receiver, evidence, form, replacement if evidence == "known" else None)

    def _emit(self, node: cst.Attribute, receiver: cst.BaseExpression, evidence: str, form: str,
              replacement: Optional[cst.BaseExpression]) -> None:
        context = self.context.graph_context(receiver)
        if self.wants(context):
            self.found(node, context, evidence, form, replacement)

    def _evidence(self, receiver: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """'known' (the model knows a tensor), 'likely' (unknown to the model, but named or made like a
        tensor and not known to be anything else) or None."""
        kind = self.context.value_of(receiver).kind
        if kind.is_tensor:
            return "known"  # `self` too, in a Tensor subclass
        if kind.is_known_other or depth > 2 or isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return None
        name = dotted_name(receiver)
        if name is not None and _TENSOR_NAME.search(name.rsplit(".", 1)[-1]) is not None:
            return "likely"
        if isinstance(receiver, cst.Attribute) and receiver.attr.value in _TENSOR_ATTRIBUTES:
            base = receiver.value
            if not (isinstance(base, cst.Name) and base.value == "self") \
                    and (self.context.value_of(base).kind in (Kind.MODULE, Kind.UNKNOWN)
                         or self.context.value_of(base).kind.is_tensor):  # p._grad
                return "likely"
        if isinstance(receiver, cst.Subscript):  # an element or a slice is what its container holds: no step
            return self._evidence(receiver.value, depth)
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value in _TENSOR_SELF_METHODS:
            return self._evidence(receiver.func.value, depth + 1)
        if isinstance(receiver, cst.Name):  # b = m.bias.view(n, -1); b.data[:, 4] += v
            bindings = self.context.reaching(receiver)
            if bindings and all(b.how == "assign" and not b.path for b in bindings) \
                    and all(self._evidence(b.value, depth + 1) for b in bindings):
                return "likely"
            if bindings and all(b.how == "iter" and _iterates_tensors(b.value, b.path) for b in bindings):
                return "likely"  # for g in grads: ...; for cpu_p, gpu_p in zip(cpu_params, gpu_params): ...
            if bindings and all(b.how == "iter" and _iterates_inputs(b) for b in bindings) \
                    and self.context.graph_context(receiver).kind == "hook":
                return "likely"  # def pre_hook(module, inputs): for x, a in zip(inputs, acts): x.data = a
        return None

    def keeps_metadata(self, data: cst.Attribute) -> bool:
        """``p.data = <value>`` where the value is provably a fresh tensor of ``p``'s dtype, shape and device,
        computed from ``p`` itself: ``p.data.clamp(0, 1)``, ``p.data * 2``, ``p.data / n`` of a parameter."""
        grand = self.context.parent(2)
        if not isinstance(grand, cst.Assign) or len(grand.targets) != 1:
            return False
        return _same_metadata(grand.value, dotted_name(data.value),
                              self.context.value_of(data.value).kind is Kind.PARAMETER)

    def _visibly_not_tensor(self, value: cst.BaseExpression) -> bool:
        """``buffer.data = dataclasses.replace(...)``: a value known not to be a tensor, or made by a
        non-torch library function."""
        if self.context.value_of(value).kind.is_known_other:
            return True
        if isinstance(value, cst.Call):
            q = self.context.qualified_name(value.func)
            return q is not None and not q.startswith("torch.") and q.split(".")[0] not in ("copy",)
        return False

    def _rebinds_from_tensor(self, receiver: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """``x.data = <tensor>``: the assigned value is a tensor, or converts ``x`` itself
        (``p.data = p.data.to(torch.float32)``, ``p.data = p.to(device)``)."""
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return False
        if self.context.value_of(value).kind.is_tensor:
            return True
        if isinstance(value, cst.Attribute) and value.attr.value == "data" and self._evidence(value.value, 1):
            return True  # orig.data = weight.data: another tensor's storage
        name = dotted_name(receiver)
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _TENSOR_SELF_METHODS:
            inner = value.func.value
            if name is not None and dotted_name(inner) in (name, name + ".data"):
                return True
            value = inner
        return False


def _zipped(iterable: Optional[cst.CSTNode], path: tuple) -> Tuple[Optional[cst.CSTNode], tuple]:
    """The iterable a loop target's element comes from: ``b`` for ``y`` of ``for x, y in zip(a, b)``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip" \
            and len(path) == 1 and not any(a.star for a in iterable.args):
        positional = [a for a in iterable.args if a.keyword is None]  # zip(a, b, strict=True)
        where, length = path[0]
        if length != len(positional) or where < 0:
            return None, path
        return positional[where].value, ()
    return iterable, path


def _iterates_tensors(iterable: Optional[cst.CSTNode], path: tuple) -> bool:
    """An iterable named like a collection of tensors (``grads``, ``params[0]``), or that element of a ``zip``."""
    iterable, path = _zipped(iterable, path)
    while isinstance(iterable, cst.Subscript):
        iterable = iterable.value
    name = dotted_name(iterable) if isinstance(iterable, (cst.Name, cst.Attribute)) else None
    return not path and name is not None and _TENSORS_NAME.search(name.rsplit(".", 1)[-1]) is not None


def _iterates_inputs(binding) -> bool:
    """A loop over a function's input or output tuple (a parameter after the module: ``inputs`` of
    ``pre_hook(module, inputs)``), or that element of a ``zip``; the caller checks the function is a hook."""
    iterable, path = _zipped(binding.value, binding.path)
    fn = binding.scope.node
    if path or not isinstance(iterable, cst.Name) or not isinstance(fn, cst.FunctionDef):
        return False
    names = [p.name.value for p in fn.params.params if p.name.value not in ("self", "cls")]
    return iterable.value in names[1:]


def _detach(node: cst.Attribute) -> cst.Call:
    """``p.data`` → ``p.detach()``, keeping the dot's formatting and any parentheses."""
    return cst.Call(func=node.with_changes(attr=cst.Name("detach"), lpar=[], rpar=[]),
                    lpar=node.lpar, rpar=node.rpar)


# Methods that return a new tensor of their receiver's dtype, shape and device, whatever the number arguments.
_SAME_METADATA_METHODS = frozenset({"clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "sign", "renorm",
                                    "clone", "contiguous", "detach"})


def _same_metadata(value: cst.BaseExpression, name: Optional[str], floating: bool) -> bool:
    """``value`` is computed from the tensor ``name`` (or ``name.data``) alone, by a method or an arithmetic
    operation with a number that keeps dtype, shape and device (``/`` and float numbers only when the
    tensor is floating: a Parameter)."""
    if name is None:
        return False
    if dotted_name(value) in (name, name + ".data"):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _SAME_METADATA_METHODS \
            and all(arg.keyword is None and _number(arg.value, floating) for arg in value.args):
        return _same_metadata(value.func.value, name, floating)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract, cst.Multiply,
                                                                               cst.Divide)):
        if isinstance(value.operator, cst.Divide) and not floating:
            return False
        for tensor, other in ((value.left, value.right), (value.right, value.left)):
            if _number(other, floating) and _same_metadata(tensor, name, floating):
                return True
    return False


def _number(expr: cst.BaseExpression, floating: bool) -> bool:
    """An int literal, or (for a floating tensor) a float literal, maybe negated."""
    kind = literal_kind(expr)
    return kind == "int" or floating and kind == "float"
