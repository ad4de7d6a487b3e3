"""What a class's code says about the parameters it may hold, for its summary (``ast`` only, no imports).

A module class holds no parameter when nothing gives it one: the project index (project_grad.py) checks each
``self.x = ...`` value, and needs from the class's code what those assignments cannot say:

- ``holds``: the class adds parameters or submodules another way, or makes a tensor require grad: a call of
  ``Parameter``/``ParameterList``/``ParameterDict``/``ModuleList``/``ModuleDict``/``UninitializedParameter``,
  ``register_parameter``/``add_module``/``register_module``/``setattr``/``requires_grad_``, or a
  ``requires_grad=`` keyword, anywhere in its body (nested functions included);
- ``made``: the capitalized callees (``nn.Linear``, ``Block``) of its calls, as written: a layer built in
  ``forward`` has parameters that require grad though the class holds none (resolved by the project index);
- ``dflt``: the attributes that ``self.x = p`` stores a parameter in, where every such ``p`` has a default that
  is a constant other than None or a ``torch`` dtype (``self.precision = precision`` with ``precision=torch.half``:
  what the default is, as an annotation would say; None says nothing, ``Optional[nn.Module]`` is common).
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List

from .facts import dotted

_ADDS = frozenset("""Parameter ParameterList ParameterDict ModuleList ModuleDict UninitializedParameter
    UninitializedBuffer register_parameter add_module register_module setattr requires_grad_""".split())
_DTYPES = frozenset("""half float double bfloat16 float16 float32 float64 int int8 int16 int32 int64 long short
    uint8 bool complex64 complex128 cfloat cdouble""".split())
_MAX_MADE = 24


def class_holdings(node: ast.ClassDef) -> Dict[str, Any]:
    """``{"holds": bool, "made": [callee, ...] (None when too many), "dflt": [attr, ...]}`` for a class."""
    holds = False
    made: List[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.keyword) and sub.arg == "requires_grad":
            holds = True
        if not isinstance(sub, ast.Call):
            continue
        name = dotted(sub.func) or (sub.func.attr if isinstance(sub.func, ast.Attribute) else "")
        last = name.rsplit(".", 1)[-1]
        if last in _ADDS:
            holds = True
        elif last[:1].isupper() and name not in made:
            made.append(name)
    return {"holds": holds, "made": made if len(made) <= _MAX_MADE else None, "dflt": _defaulted_attrs(node)}


def _defaulted_attrs(node: ast.ClassDef) -> List[str]:
    """The attributes ``self.x = p`` stores a method's parameter ``p`` in, each such ``p`` with a plain default."""
    found: Dict[str, bool] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        receiver, plain = method.args.args[0].arg, _plain_defaults(method.args)
        params = {a.arg for a in ast.walk(method.args) if isinstance(a, ast.arg)}
        for sub in ast.walk(method):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
                if isinstance(sub, ast.AnnAssign) and sub.value is not None else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == receiver and isinstance(sub.value, ast.Name) \
                        and sub.value.id in params:
                    found[target.attr] = found.get(target.attr, True) and sub.value.id in plain
    return sorted(attr for attr, ok in found.items() if ok)


def _plain_defaults(args: ast.arguments) -> List[str]:
    """The parameters whose default is a constant other than None, or ``torch.<dtype>``."""
    positional = list(getattr(args, "posonlyargs", [])) + list(args.args)
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    found = []
    for arg, default in pairs:
        if isinstance(default, ast.Constant) and default.value is not None:
            found.append(arg.arg)
        elif isinstance(default, ast.Attribute) and dotted(default) == f"torch.{default.attr}" \
                and default.attr in _DTYPES:
            found.append(arg.arg)
    return found
