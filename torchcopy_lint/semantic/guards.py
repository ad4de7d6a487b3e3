"""Narrowing: what a test being true (or false) says about the values it mentions.

What it knows: ``isinstance(x, torch.Tensor)`` and tuples of classes (tensor classes, builtins,
numpy, nn.Module classes), ``torch.is_tensor(x)``, ``type(x) is torch.Tensor``, ``x is None`` /
``x is not None``, ``not``, ``and``/``or``, and guards stored in a variable (``ok = isinstance(...)``
then ``if ok:``). The forward pass applies the facts to the arms of ``if``/``while``, after
``assert``, to the right of ``and``/``or`` and in conditional expressions and comprehensions.
"""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from ..imports import dotted_name
from .kinds import NOT_TENSOR, TENSOR, UNKNOWN, Kind, Value
from .vocabulary import NOT_TENSOR_BUILTIN_CLASSES, NOT_TENSOR_CLASSES, TENSOR_CLASSES

Facts = Dict[str, Value]
_GUARD_VALUES = (cst.Call, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison)


class Guards:
    def __init__(self, model) -> None:
        self.model = model
        self.imports = model.imports

    def class_test(self, cls: cst.BaseExpression) -> Optional[object]:
        """'tensor', 'not', 'mixed', a MODULE Value, or None for the class argument of ``isinstance``."""
        if isinstance(cls, cst.Tuple):
            found = [self.class_test(el.value) for el in cls.elements]
            if all(f == "tensor" for f in found):
                return "tensor"
            if all(f == "not" for f in found):
                return "not"
            if all(isinstance(f, Value) for f in found):
                return Value(Kind.MODULE)
            return "mixed" if "tensor" in found or "mixed" in found else None
        q = self.imports.qualified_name(cls)
        if q in TENSOR_CLASSES:
            return "tensor"
        if q in NOT_TENSOR_CLASSES:
            return "not"
        if isinstance(cls, cst.Name) and cls.value in NOT_TENSOR_BUILTIN_CLASSES \
                and not self.imports.is_imported(cls.value):
            return "not"
        kind = self.model.classes.class_of_expr(cls)
        if kind is not None and kind.kind is Kind.MODULE:
            return kind
        return None

    def facts(self, test: cst.BaseExpression, positive: bool, state, depth: int = 0) -> Facts:
        if depth > 6:
            return {}
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.facts(test.expression, not positive, state, depth + 1)
        if isinstance(test, cst.BooleanOperation):
            left = self.facts(test.left, positive, state, depth + 1)
            right = self.facts(test.right, positive, state, depth + 1)
            if isinstance(test.operator, cst.And) == positive:  # both hold
                out = dict(left)
                for key, v in right.items():
                    out[key] = v if key not in out or out[key] == v else UNKNOWN
                return out
            return {key: v for key, v in left.items() if right.get(key) == v}
        if isinstance(test, cst.Call):
            return self._call_facts(test, positive)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._comparison_facts(test, positive)
        if isinstance(test, cst.Name):
            defs = state.get(test.value)
            if defs is not None and len(defs) == 1 and defs[0].how == "assign" and not defs[0].path \
                    and isinstance(defs[0].value, _GUARD_VALUES):
                return self.facts(defs[0].value, positive, state, depth + 1)
        return {}

    def _call_facts(self, test: cst.Call, positive: bool) -> Facts:
        args = test.args
        key = dotted_name(args[0].value) if args else None
        if key is None:
            return {}
        fname = dotted_name(test.func)
        if fname == "isinstance" and len(args) == 2 and not self.imports.is_imported("isinstance"):
            found = self.class_test(args[1].value)
        elif self.imports.qualified_name(test.func) == "torch.is_tensor" and len(args) == 1:
            found = "tensor"
        else:
            return {}
        if found == "tensor":
            return {key: TENSOR if positive else NOT_TENSOR}
        if found == "not":
            return {key: NOT_TENSOR} if positive else {}
        if found == "mixed":
            return {} if positive else {key: NOT_TENSOR}
        if isinstance(found, Value):
            return {key: found} if positive else {}
        return {}

    def _comparison_facts(self, test: cst.Comparison, positive: bool) -> Facts:
        target = test.comparisons[0]
        op, left, right = target.operator, test.left, target.comparator
        if isinstance(left, cst.Call) and dotted_name(left.func) == "type" and left.args \
                and isinstance(op, (cst.Is, cst.Equal)):
            key = dotted_name(left.args[0].value)
            if key is not None and self.imports.qualified_name(right) in TENSOR_CLASSES and positive:
                return {key: TENSOR}
            return {}
        key = dotted_name(left)
        if key is not None and isinstance(right, cst.Name) and right.value == "None":
            if isinstance(op, cst.Is) and positive or isinstance(op, cst.IsNot) and not positive:
                return {key: NOT_TENSOR}
        return {}
