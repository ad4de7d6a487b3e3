"""A test's parameter is what ``pytest.mark.parametrize`` lists for it: evidence of its kind.

pytest calls ``test_f(x)`` once per value of ``@pytest.mark.parametrize("x", [0.8, torch.tensor(0.8)])`` and with
nothing else, so the values in the decorator are every value ``x`` can have. Two questions use that:

- ``parametrized_kind``: every value is a tensor (a ``torch`` creation call), or none is (a Python literal): then so
  is ``x`` wherever it is not rebound;
- ``narrowed_to_tensor``: after ``isinstance(x, (int, float))`` tested false (an ``else`` arm, the rest of a
  conditional expression, the code after an early exit) only the values of other classes remain; when those are
  all tensors, ``x`` is a tensor there.

Read from the decorator's text alone (the forward pass asks while it walks, before values are computed): a value
counts as a tensor only as a call of a ``torch`` creation function, as a Python value only as a literal; any other
value (a name, a fixture, ``pytest.param`` with marks aside) makes the answer unknown. ``indirect=`` parametrization
hands the values to fixtures, not to the parameter: no evidence. Names only, no torch import.
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional

import libcst as cst

from ..codes import CREATION_FUNCTIONS
from ..imports import ImportMap
from .kinds import NOT_TENSOR, TENSOR, Kind, Value
from .vocabulary import NOT_TENSOR_BUILTIN_CLASSES

#: ``torch`` functions whose result is a tensor, whatever their arguments (a parametrize value made by one).
_TENSOR_MAKERS = frozenset(CREATION_FUNCTIONS) | frozenset(
    "rand randn randint randperm as_tensor from_numpy stack cat rand_like randn_like".split())
_TENSOR = "tensor"
#: A class's instances that ``isinstance`` with another class also accepts (``isinstance(True, int)``).
_SUBCLASSES = {"int": frozenset({"bool"}), "object": NOT_TENSOR_BUILTIN_CLASSES | {"NoneType", _TENSOR}}


def _names(argnames: cst.BaseExpression) -> Optional[List[str]]:
    """``"a"``, ``"a, b"``, ``("a", "b")``, ``["a", "b"]`` -> the names; None otherwise."""
    if isinstance(argnames, cst.SimpleString) and isinstance(argnames.evaluated_value, str):
        return [n.strip() for n in argnames.evaluated_value.split(",") if n.strip()]
    if isinstance(argnames, (cst.Tuple, cst.List)):
        names = [el.value.evaluated_value for el in argnames.elements if isinstance(el.value, cst.SimpleString)]
        return names if len(names) == len(argnames.elements) and all(isinstance(n, str) for n in names) else None
    return None


def _row(row: cst.BaseExpression, imports: ImportMap) -> cst.BaseExpression:
    """A ``pytest.param(v, ..., marks=..., id=...)`` row's values, as a tuple of them; any other row as it is."""
    if isinstance(row, cst.Call) and imports.qualified_name(row.func) == "pytest.param":
        values = [arg for arg in row.args if arg.keyword is None and not arg.star]
        if len(values) == len([arg for arg in row.args if arg.keyword is None]):
            return values[0].value if len(values) == 1 else cst.Tuple([cst.Element(a.value) for a in values])
    return row


def _values_of(decorator: cst.Decorator, name: str, imports: ImportMap) -> Optional[List[cst.BaseExpression]]:
    """The values one ``@pytest.mark.parametrize(...)`` lists for ``name``; [] when it is not about ``name``,
    None when it is but the values cannot be read."""
    call = decorator.decorator
    if not isinstance(call, cst.Call) or imports.qualified_name(call.func) != "pytest.mark.parametrize":
        return []
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    argnames = positional[0] if positional else keywords.get("argnames")
    argvalues = positional[1] if len(positional) > 1 else keywords.get("argvalues")
    names = _names(argnames) if argnames is not None else None
    if names is None:
        return None  # names not written out: it may name ``name``
    if name not in names:
        return []
    if "indirect" in keywords or not isinstance(argvalues, (cst.List, cst.Tuple)) or not argvalues.elements:
        return None
    index, found = names.index(name), []
    for element in argvalues.elements:
        if isinstance(element, cst.StarredElement):
            return None
        row = _row(element.value, imports)
        if len(names) == 1:
            found.append(row)
            continue
        if not isinstance(row, (cst.Tuple, cst.List)) or len(row.elements) != len(names) \
                or any(isinstance(el, cst.StarredElement) for el in row.elements):
            return None
        found.append(row.elements[index].value)
    return found


def parametrized_values(fn: cst.FunctionDef, owner: Optional[cst.ClassDef], name: str,
                        imports: ImportMap) -> Optional[List[cst.BaseExpression]]:
    """Every value pytest passes as ``name`` to ``fn`` (a method of ``owner``: its class's decorators count too);
    None when no parametrize names it, or when one does and its values cannot all be read."""
    decorators = list(fn.decorators) + (list(owner.decorators) if owner is not None else [])
    found: Optional[List[cst.BaseExpression]] = None
    for decorator in decorators:
        values = _values_of(decorator, name, imports)
        if values is None or values and found is not None:
            return None  # unreadable, or two decorators name it (pytest refuses that)
        if values:
            found = values
    return found


def value_class(value: cst.BaseExpression, imports: ImportMap) -> Optional[str]:
    """The class of a parametrize value read from its text: "tensor" for a ``torch`` creation call, the builtin
    class of a literal ("int", "float", "bool", "str", "NoneType", "list", ...); None when not known."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        value = value.expression
        return value_class(value, imports) if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)) else None
    if isinstance(value, cst.Integer):
        return "int"
    if isinstance(value, cst.Float):
        return "float"
    if isinstance(value, cst.Imaginary):
        return "complex"
    if isinstance(value, cst.ConcatenatedString):
        return value_class(value.left, imports)
    if isinstance(value, cst.SimpleString):
        return "bytes" if "b" in value.prefix.lower() else "str"
    if isinstance(value, cst.FormattedString):
        return "str"
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return "NoneType" if value.value == "None" else "bool"
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return {cst.List: "list", cst.Tuple: "tuple", cst.Dict: "dict", cst.Set: "set"}[type(value)]
    if isinstance(value, cst.Call):
        qualified = imports.qualified_name(value.func) or ""
        if qualified.startswith("torch.") and qualified[6:] in _TENSOR_MAKERS:
            return _TENSOR
    return None


def parametrized_kind(values: List[cst.BaseExpression], imports: ImportMap) -> Optional[Value]:
    """TENSOR when every value is a tensor, NOT_TENSOR when none is; None when mixed or not known."""
    classes = {value_class(v, imports) for v in values}
    if None in classes:
        return None
    if classes == {_TENSOR}:
        return TENSOR
    return NOT_TENSOR if _TENSOR not in classes else None


def parametrized(b, declared: Value, imports: ImportMap) -> Value:
    """The value of parameter binding ``b``: ``declared`` (its annotation's), else what parametrize lists for it."""
    if declared.kind is not Kind.UNKNOWN or b.node.annotation is not None:
        return declared
    values = parametrized_values(b.owner, b.scope.owner_class, b.key, imports)
    return (parametrized_kind(values, imports) if values else None) or declared


def tested_classes(cls: cst.BaseExpression, imports: ImportMap) -> Optional[FrozenSet[str]]:
    """The builtin classes ``isinstance(x, cls)`` tests (a name or a tuple of names, never rebound by an import),
    with the classes whose instances they also accept; None for anything else."""
    items = [el.value for el in cls.elements] if isinstance(cls, cst.Tuple) else [cls]
    found = set()
    for item in items:
        if not isinstance(item, cst.Name) or imports.is_imported(item.value) \
                or item.value not in NOT_TENSOR_BUILTIN_CLASSES | {"object"}:
            return None
        found |= {item.value} | _SUBCLASSES.get(item.value, frozenset())
    return frozenset(found)


def narrowed_to_tensor(values: List[cst.BaseExpression], excluded: FrozenSet[str], imports: ImportMap) -> bool:
    """Whether every value whose class ``isinstance`` rejected (not in ``excluded``) is a tensor, and one is."""
    remaining = [value_class(v, imports) for v in values]
    remaining = [c for c in remaining if c not in excluded]
    return bool(remaining) and all(c == _TENSOR for c in remaining)
