"""TCL116: ``torch.zeros(n).to(device)`` / ``.cuda()`` / ``.float()``: create on the target device and dtype."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from ..codes import CASTS, CREATION_ALIAS, CREATION_FUNCTIONS, TRIGGERS
from ..diagnostics import Applicability
from ..engine import Rule
from ..imports import dotted_name
from ..semantic import Kind
from ..walk import every_descendant
from ._build import with_keywords
from ._convert import CAST_DTYPES, dtype_expression, is_literal_false, receiver, torch_module
from ._exact import (DEVICE_EXACT, argument, changes_nothing, classify, created_dtypes, cuda_device, dtype_name,
                     fill_range, integer, same_values)
from ._devices import default_device_changes
from ._dtypes import SETS_DTYPE, source_mentions
from ._tensor_data import NUMPY, data_kind, number_kind

_CREATORS = frozenset(CREATION_FUNCTIONS)
_CASTS = frozenset(CASTS)
#: Creation keywords that make a moved device or dtype mean something else: no fix.
_KEEP = ("requires_grad", "pin_memory")
#: Creations whose own ``dtype=`` is part of what they compute (exact integers first, a fill in that dtype).
_COMPUTED_IN = frozenset({"arange", "linspace", "full", "full_like", "tensor"})

Target = Dict[str, cst.BaseExpression]  # "device" / "dtype" -> the expression to pass


class CreateThenConvert(Rule):
    """``torch.zeros(n).to(device)`` allocates and fills the tensor on the CPU, then copies it
    to the device (a host allocation and a host-to-device transfer on the path);
    ``torch.zeros(n).half()`` fills a float32 tensor, then converts it. Passing ``device=`` /
    ``dtype=`` to the creation call creates the tensor where and as it is needed, in one step.

    Flagged: ``zeros``, ``ones``, ``full``, ``empty``, ``eye``, ``arange``, ``linspace``,
    ``tensor`` and the ``*_like`` of the first four, directly followed by ``.to(device/dtype)``,
    ``.cuda()``, ``.float()``, ``.half()``, ``.double()``, ``.long()``, ``.int()``, ``.bool()`` or
    ``.bfloat16()``. Not flagged: random constructors (given ``dtype=`` or ``device=`` they draw
    other numbers), ``from_numpy``/``as_tensor``, ``torch.tensor(t)`` of a tensor (TCL101), and
    a ``.to(.., non_blocking=..)`` (an explicit transfer), and a dtype conversion that is part of the
    computation (after a creation that names its own dtype, or truncating a ``linspace``), and a conversion to
    the dtype the creation already gives (``torch.zeros(n).float()``: the tensor itself is returned, nothing is
    copied), and a ``*_like`` moved to a device (it is made on its input's device already), and a device move of
    ``torch.tensor(data)`` unless the data is a numpy array (from Python data ``device=`` builds a host tensor and
    moves it just the same: tensor_new.h), and a device move where the file calls ``set_default_device``. The fix moves the
    argument into the creation call and is safe only where the values are provably the same (see the docs page).
    """

    code = "TCL116"
    name = "create-then-convert"
    message = ("`{creation}(...).{method}` creates the tensor, then copies it to another device or dtype; "
               "pass `device=`/`dtype=` to `{creation}`")
    numpy_message = ("`{creation}(<a numpy array>).{method}` copies the array into a host tensor, then to the device; "
                     "`{creation}(..., device=...)` copies it to the device at once: one host copy fewer")
    triggers = TRIGGERS["TCL116"]  # in codes.py, importable without LibCST
    unprunable = CREATION_ALIAS  # a creation function under another name: calls can't be found by text

    VALID = [
        "import torch\na = torch.zeros(3, device='cuda')",
        "import torch\nb = torch.randn(3).to('cpu')",
        "import torch, numpy as np\nc = torch.from_numpy(np.zeros(3)).float()",
        "import torch\nd = torch.zeros(3).to('cuda', non_blocking=True)",
        "import torch\nt = torch.randn(3)\ne = torch.tensor(t).to('cpu')",  # TCL101's
        "import torch\nf = torch.zeros(3).unsqueeze(0).cuda()",
        "import torch\ng = torch.zeros(3).float()",  # already float32: returned as is
        "import torch\ndef h(xs):\n    return torch.arange(len(xs)).long()",  # already int64
        "import torch\ndef k(t: float):\n    return torch.tensor(t).float()",  # a float makes float32
        # Python data: `device=` builds a host tensor and moves it too (tensor_new.h)
        "import torch\nm = torch.tensor([1, 2]).to(device)",
        "import torch\ntorch.set_default_device('cuda')\nn = torch.zeros(3).to('cuda')",
    ]
    INVALID = [
        "import torch\na = torch.zeros(3).to('cpu')",
        "import torch as th\nb = th.ones(2, 2).half()",
        "from torch import arange\nc = arange(10).float()",
        "import torch, numpy as np\nd = torch.tensor(np.ones(2)).to(device)",  # one host copy fewer
        "import torch\ne = torch.full((2,), 7).to(torch.float64)",
        "import torch\ndef f(n: int):\n    return torch.tensor(n).float()",  # an int makes int64
        "import torch\ng = torch.eye(3, dtype=torch.float32).to(torch.float64)",
        "import torch\nfor z in [0.0, 1.0]:\n    h = torch.tensor(z).long()",  # z is a float
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or (func.attr.value not in _CASTS and func.attr.value not in
                                                    ("to", "cuda")):
            return
        creation = receiver(node)
        qualified = self.context.qualified_name(creation.func) if isinstance(creation, cst.Call) else None
        if not isinstance(creation, cst.Call) or qualified is None or not qualified.startswith("torch.") \
                or qualified[6:] not in _CREATORS or _keyword(creation, "out") is not None:
            return
        name = qualified[6:]
        if name == "tensor" and creation.args and self.context.kind_of(creation.args[0].value) is Kind.TENSOR:
            return  # torch.tensor(t) of a tensor: TCL101
        if func.attr.value == "to" and _converts_to_itself(node, creation):
            return
        target = self._target(node, func.attr.value, creation)
        if name.endswith("_like") and (func.attr.value == "cuda" or target is not None and (
                not target or "device" in target)):
            return  # made on its input's device, where the computation mostly is: a no-op or a device-to-device move
        move = _device_move(node, func.attr.value, target)
        if move and default_device_changes(self.context):
            return  # the creation is made on the default device, the one it is moved to most often: not known
        data = data_kind(self.context, argument(creation, 0, "data")) if name == "tensor" and move else None
        if name == "tensor" and move and data != NUMPY:
            return  # Python data: `torch.tensor(data, device=d)` builds a host tensor and moves it just the same
        if target is None or target and self._no_copy(creation, name, target) \
                or "device" not in target and func.attr.value != "cuda" and self._deliberate(creation, name, target):
            return
        fix = self._fix(creation, name, target) if target else None
        message = (self.numpy_message if move == "device" and data == NUMPY else self.message).format(
            creation=dotted_name(creation.func) or name, method=func.attr.value + ("(...)" if node.args else "()"))
        if fix is None:
            self.report(node, message)
            return
        replacement, applicability = fix
        self.report(node, message, replacement=replacement.with_changes(lpar=[*node.lpar, *replacement.lpar],
                                                                         rpar=[*replacement.rpar, *node.rpar]),
                    applicability=applicability)

    def _target(self, node: cst.Call, method: str, creation: cst.Call) -> Optional[Target]:
        """What the conversion asks for (``{}``: a conversion the creation call cannot take over, reported
        without a fix); None when it is not a device/dtype conversion or carries ``non_blocking``."""
        if _keyword(node, "non_blocking") is not None:
            return None  # an explicit (asynchronous) transfer
        if any(arg.star for arg in node.args):
            return None  # `.to(*args, **kwargs)`: the creation parses to()'s arguments (`torch.empty(0).to(*args)`)
        if method in _CASTS:
            torch = torch_module(self.context, creation.func)
            return {} if node.args or torch is None else {"dtype": dtype_expression(torch, CAST_DTYPES[method])}
        if method == "cuda":
            if not node.args:
                return {"device": cst.SimpleString('"cuda"')}
            if len(node.args) > 1:
                return None  # `.cuda(device, non_blocking)`
            device = cuda_device(node.args[0].value) \
                if node.args[0].keyword is None or node.args[0].keyword.value == "device" else None
            return {"device": device} if device is not None else {}
        return self._to_target(node)

    def _to_target(self, node: cst.Call) -> Optional[Target]:
        positional = [arg.value for arg in node.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        if len(positional) > 2 or (len(positional) == 2 and isinstance(positional[1], cst.Name)
                                   and positional[1].value in ("True", "False")):
            return None  # `.to(x, non_blocking)`, `.to(device, dtype, non_blocking, ...)`
        target: Target = {k: keywords[k] for k in ("device", "dtype") if k in keywords}
        if len(positional) == 2:
            first = classify(self.context, positional[0])
            if first in ("dtype", "tensor"):
                return None  # `.to(dtype, non_blocking)`, `.to(other, non_blocking)`
            if first is None:
                return {}
            target.update(device=positional[0], dtype=positional[1])  # `.to(device, dtype)`
        elif len(positional) == 1:
            kind = classify(self.context, positional[0])
            if kind == "tensor":
                other = dotted_name(positional[0])
                if other is None:
                    return {}
                target.update(dtype=cst.parse_expression(f"{other}.dtype"),
                              device=cst.parse_expression(f"{other}.device"))
            elif kind in ("device", "dtype"):
                target[kind] = positional[0]
            else:
                return {}  # a device, a dtype or a tensor: only the reader knows
        if not target:
            return None  # `.to(memory_format=...)`, `.to()`: not a device/dtype conversion
        if set(keywords) - {"device", "dtype"}:
            return {}  # `copy=`, `memory_format=`: more than a move
        return target

    def _deliberate(self, creation: cst.Call, name: str, target: Target) -> bool:
        """A dtype conversion that is part of the computation, not a wasted copy: after a creation that names
        its own dtype (`arange(n, dtype=torch.int64).float()`: exact integers first, on purpose), or the
        truncation of a `linspace` or of an `arange` with a fractional step to integers."""
        wanted = dtype_name(self.context, target.get("dtype"))
        own = _keyword(creation, "dtype")
        if own is not None:  # zeros/ones/eye/empty in a dtype, converted to another: their 0s and 1s, copied
            return name in _COMPUTED_IN or wanted is None or dtype_name(self.context, own) is None
        if name not in ("linspace", "arange") or wanted is None or wanted.startswith(("float", "complex", "bfloat")):
            return False
        return name == "linspace" or any(isinstance(n, (cst.Float, cst.BinaryOperation)) and (
            isinstance(n, cst.Float) or isinstance(n.operator, cst.Divide)) for arg in creation.args
            for n in every_descendant(arg.value))

    def _no_copy(self, creation: cst.Call, name: str, target: Target) -> bool:
        """The conversion asks for nothing the created tensor does not have, and returns it itself: nothing is
        copied (`TCL116-no-op-conversion`). Each of its device and dtype is the one the creation names
        (`torch.zeros(n, device=d).to(d)`), the input's of a `*_like` (`torch.zeros_like(x).to(x.device)`,
        `.to(x)`), or a dtype the creation already gives (`torch.zeros(n).float()`, `torch.arange(len(xs)).long()`,
        `torch.tensor(0).long()`; where the numbers are not known, it does that or truncates floats on purpose)."""
        source = _code(argument(creation, 0, "input")) if name.endswith("_like") else None
        for key, value in target.items():
            given = _code(value)
            if given is not None and (given == _code(_keyword(creation, key))
                                      or source is not None and given == f"{source}.{key}"):
                continue
            wanted = dtype_name(self.context, value) if key == "dtype" else None
            own = _keyword(creation, "dtype")
            made = created_dtypes(creation, name, self._mentions(SETS_DTYPE), self._number_kind) if own is None \
                else frozenset({dtype_name(self.context, own)} - {None})
            if wanted is None or not changes_nothing(wanted, made):
                return False
        return True

    def _number_kind(self, expr: cst.BaseExpression) -> Optional[str]:
        return number_kind(self.context, expr)

    def _mentions(self, calls: Tuple[str, ...]) -> bool:
        """Whether the file calls one of ``calls`` (``set_default_dtype``: a `torch.zeros(n).float()` may convert)."""
        cache = self.__dict__.setdefault("_mentioned", {})
        if calls not in cache:
            cache[calls] = source_mentions(self.context, calls)
        return cache[calls]

    def _fix(self, creation: cst.Call, name: str, target: Target) \
            -> Optional[Tuple[cst.Call, Applicability]]:
        if any(arg.star for arg in creation.args) or any(
                _keyword(creation, k) is not None and not is_literal_false(_keyword(creation, k))  # type: ignore
                for k in _KEEP):
            return None
        applicability = Applicability.SAFE
        if "device" in target and name not in DEVICE_EXACT and not _integer_arange(name, creation):
            applicability = Applicability.UNSAFE  # linspace/arange of floats: another device may round otherwise
        if "dtype" in target:
            source = _keyword(creation, "dtype")
            if not same_values(self.context, name, fill_range(creation, name), source, target["dtype"]):
                return None
        return with_keywords(creation, target), applicability


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _device_move(node: cst.Call, method: str, target: Optional[Target]) -> Optional[str]:
    """"device" for a conversion that only moves to a device (``.to(device)``, ``.cuda()``), "maybe" for a
    ``.to(x)`` or ``.cuda(x)`` of an unknown ``x`` (a device, or a dtype or tensor), None otherwise."""
    if target:
        return "device" if set(target) == {"device"} else None
    if target is not None and (method == "cuda" or len(node.args) == 1 and node.args[0].keyword is None):
        return "device" if method == "cuda" else "maybe"
    return None


def _converts_to_itself(node: cst.Call, creation: cst.Call) -> bool:
    """``.to(x)`` with ``x`` the device or dtype the creation names: a no-op, whatever ``x`` is
    (`TCL116-no-op-conversion`). (A ``*_like``'s ``.to(<its input>)`` is a device move, not reported.)"""
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return False
    given = _code(node.args[0].value)
    return given is not None and given in (_code(_keyword(creation, "device")), _code(_keyword(creation, "dtype")))


def _code(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """A name, an attribute chain or a string literal as written (None for anything else)."""
    if expr is None:
        return None
    if isinstance(expr, cst.SimpleString):
        return expr.value
    return dotted_name(expr)


def _integer_arange(name: str, creation: cst.Call) -> bool:
    """``arange(n)`` (its values are 0, 1, ... on every device) or ``arange`` of integer literals."""
    values = [arg for arg in creation.args if arg.keyword is None or arg.keyword.value in ("start", "end", "step")]
    return name == "arange" and (len(values) == 1 or all(arg.keyword is None and integer(arg.value) is not None
                                                         for arg in values))
