"""Narrowing: what a test being true (or false) says about the values it mentions.

What it knows: ``isinstance(x, torch.Tensor)`` and tuples of classes (tensor classes, builtins,
numpy, nn.Module classes), ``torch.is_tensor(x)``, ``type(x) is torch.Tensor``, ``x is None`` /
``x is not None``, ``not``, ``and``/``or``, and guards stored in a variable (``ok = isinstance(...)``
then ``if ok:``). The forward pass applies the facts to the arms of ``if``/``while``, after
``assert``, to the right of ``and``/``or`` and in conditional expressions and comprehensions.

Also whether a name tested false: ``if not xs``, ``len(xs) == 0`` (or ``if xs`` / ``len(xs) > 0`` being
false) give the fact ``FALSY + "xs"`` (True); flow.py forgets it where ``xs`` is rebound or handed to a call.
For a list that fact says it is empty.
"""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from ..imports import dotted_name
from .kinds import NOT_TENSOR, TENSOR, UNKNOWN, Kind, Value
from .parametrize import narrowed_to_tensor, parametrized_values, tested_classes
from .tensordict import names_tensordict
from .vocabulary import NOT_TENSOR_BUILTIN_CLASSES, NOT_TENSOR_CLASSES, TENSOR_CLASSES

Facts = Dict[str, Value]
FALSY = "falsy:"  # prefix of the key of the fact "this name tested false here"
EXCLUDED = "excluded:"  # prefix of the key of the fact "isinstance rejected these classes of this parameter here"
# len(x) <op> n that says x is empty when true (n: 0 or 1), and when false
_EMPTY_WHEN_TRUE = {(cst.Equal, 0), (cst.LessThan, 1), (cst.LessThanEqual, 0)}
_EMPTY_WHEN_FALSE = {(cst.GreaterThan, 0), (cst.GreaterThanEqual, 1), (cst.NotEqual, 0)}
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
        if q in NOT_TENSOR_CLASSES or names_tensordict(q or ""):
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
                    if key.startswith(EXCLUDED) and isinstance(v, frozenset) and isinstance(out.get(key), frozenset):
                        out.update(self._rejected(key[len(EXCLUDED):], out[key] | v, state))  # each side's classes
                    else:
                        out[key] = v if key not in out or out[key] == v else UNKNOWN
                return out
            return {key: v for key, v in left.items() if right.get(key) == v}
        tested = self._falsy(test, positive)
        found = self._test_facts(test, positive, state, depth)
        return found if tested is None else {**found, FALSY + tested: True}

    def _test_facts(self, test: cst.BaseExpression, positive: bool, state, depth: int) -> Facts:
        if isinstance(test, cst.Call):
            return self._call_facts(test, positive) or self._parametrized_facts(test, positive, state)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._comparison_facts(test, positive)
        if isinstance(test, cst.Name):
            defs = state.get(test.value)
            if defs is not None and len(defs) == 1 and defs[0].how == "assign" and not defs[0].path \
                    and isinstance(defs[0].value, _GUARD_VALUES):
                return self.facts(defs[0].value, positive, state, depth + 1)
        return {}

    def _falsy(self, test: cst.BaseExpression, positive: bool) -> Optional[str]:
        """The name that ``test`` being ``positive`` says is false (empty, for a list): ``xs`` false,
        ``len(xs)`` false, ``len(xs) == 0`` true, ``len(xs) > 0`` false; else None."""
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            number = target.comparator
            if not isinstance(number, cst.Integer) or not self._is_len(test.left):
                return None
            case = (type(target.operator), int(number.value, 0))
            if case in (_EMPTY_WHEN_TRUE if positive else _EMPTY_WHEN_FALSE):
                return dotted_name(test.left.args[0].value)  # type: ignore[attr-defined]
            return None
        if positive:
            return None
        if self._is_len(test):
            test = test.args[0].value  # type: ignore[attr-defined]
        return dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None

    def _is_len(self, e: cst.BaseExpression) -> bool:
        return isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == "len" \
            and len(e.args) == 1 and not e.args[0].star and e.args[0].keyword is None \
            and not self.imports.is_imported("len")

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

    def _parametrized_facts(self, test: cst.Call, positive: bool, state) -> Facts:
        """``isinstance(x, (int, float))`` false, where ``x`` is a test's parameter whose parametrize values of
        other classes are all tensors: ``x`` is a tensor (parametrize.py). The classes rejected so far are a fact
        too, so ``if isinstance(x, int): ... elif isinstance(x, float): ... else:`` rejects both (as does ``or``)."""
        args = test.args
        if positive or len(args) != 2 or any(a.keyword is not None or a.star for a in args) \
                or not isinstance(args[0].value, cst.Name) or dotted_name(test.func) != "isinstance" \
                or self.imports.is_imported("isinstance"):
            return {}
        excluded = tested_classes(args[1].value, self.imports)
        return {} if excluded is None else self._rejected(args[0].value.value, excluded, state)

    def _rejected(self, key: str, excluded, state) -> Facts:
        """The facts where ``isinstance`` rejected the classes ``excluded`` of test parameter ``key``."""
        defs = state.get(key)
        if not defs or len(defs) != 1 or defs[0].how != "param" or defs[0].node.annotation is not None:
            return {}
        values = parametrized_values(defs[0].owner, defs[0].scope.owner_class, key, self.imports)
        if not values:
            return {}
        before = state.fact(EXCLUDED + key)  # what earlier tests rejected here (an elif chain, early exits)
        excluded = excluded | before if isinstance(before, frozenset) else excluded
        found: Facts = {EXCLUDED + key: excluded}
        return {**found, key: TENSOR} if narrowed_to_tensor(values, excluded, self.imports) else found

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
