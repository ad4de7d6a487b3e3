"""Values of the ``tensordict`` package (TensorDict, used by torchrl): containers of tensors, not tensors.

``td.clone().detach()`` or ``td.float().detach()`` on one is the container's own method: no tensor rule
applies to it. Evidence that a value is one:

- a class or function of the package that makes one: ``TensorDict(...)``, ``TensorDict.from_dict(...)``,
  ``LazyStackedTensorDict``, ``tensordict.stack`` ... (``names_tensordict``; ``tensordict.nn`` holds
  modules and ``MemoryMappedTensor`` is a tensor: neither counts);
- an annotation naming such a class (``td: TensorDictBase``), an ``isinstance`` test with one;
- a method only a TensorDict has, called on the value (``td.del_("index")``, ``td.to_tensordict()``,
  ``td.exclude(...)``: ``receives_tensordict_method``), where nothing else says what it is.

Its value is ``TENSORDICT`` (NOT_TENSOR); an entry (``td["obs"]``) is unknown, and requires grad or not
whatever the container's own answer is.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from . import vocabulary as v
from .kinds import Kind, Value

TENSORDICT = Value(Kind.NOT_TENSOR, "tensordict.TensorDict")  # not a tensor; its entries are

# Methods of TensorDictBase that torch.Tensor does not have (checked against the pinned torch).
METHODS = frozenset(
    """to_tensordict del_ exclude set_non_tensor get_non_tensor rename_key_ flatten_keys unflatten_keys memmap_
    memmap_like named_apply auto_batch_size_ lock_ unlock_ to_namedtuple split_keys""".split())
# Functions of the package that return a TensorDict.
_FUNCTIONS = frozenset("stack cat lazy_stack merge_tensordicts dense_stack_tds make_tensordict pad pad_sequence".split())
_NOT_CONTAINERS = frozenset({"TensorDictParams"})  # an nn.Module
# The containers by name, for a name the imports do not qualify (a string annotation, ``TensorDict.from_module``).
_CONTAINERS = frozenset("TensorDict TensorDictBase LazyStackedTensorDict PersistentTensorDict".split())
KEPT_METHODS = v.TENSOR_ONLY_METHODS | v.MODULE_PRESERVING_METHODS | v.CAST_METHODS | frozenset(
    "select exclude apply update expand squeeze reshape view copy".split())
"""Methods of a TensorDict that return a TensorDict (``td.clone()``, ``td.detach()``, ``td.to(device)``): they
have ``clone``, ``detach``, ``.data``, ``.to`` and the casts like a tensor, but ``TensorDict.to(..., copy=True)``
raises ("to() does not accept copy argument"), so their methods are no evidence of a tensor."""


def names_tensordict(q: str) -> bool:
    """``q`` (a qualified name) is a TensorDict class of the package, a classmethod of one, or one of its
    functions that returns a TensorDict."""
    parts = q.split(".")
    if parts[0] != "tensordict":
        return any(p in _CONTAINERS for p in parts)  # unqualified: `TensorDictBase`, `TensorDict.from_module`
    if len(parts) < 2 or parts[1] == "nn":
        return False
    classes = [p for p in parts[1:] if "TensorDict" in p]
    if classes:
        return not any(p in _NOT_CONTAINERS for p in classes)
    return len(parts) == 2 and parts[1] in _FUNCTIONS


class TensorDictUses:
    """Per flow scope: the reads that are receivers of a TensorDict-only method, by key."""

    def __init__(self, model) -> None:
        self.model = model
        self._receivers: Dict[int, Dict[str, List[object]]] = {}

    def unless_one(self, b, found: Optional[Value]) -> Optional[Value]:
        """What the binding ``b`` gives (``found``), or TENSORDICT where that is unknown and a TensorDict-only
        method is called on it."""
        if (found is None or found.kind is Kind.UNKNOWN) and self.receives_tensordict_method(b):
            return TENSORDICT
        return found

    def receives_tensordict_method(self, b) -> bool:
        """A read that ``b`` reaches calls a TensorDict-only method on it (``b``'s value is one)."""
        flow = b.scope.flow
        found = self._receivers.get(id(flow))
        if found is None:
            found = self._receivers[id(flow)] = {}
            for calls in flow.calls:
                for call in calls:
                    func = call.func
                    if isinstance(func, cst.Attribute) and func.attr.value in METHODS:
                        read = self.model.reads.get(id(func.value))
                        if read is not None and read.defs:
                            found.setdefault(read.key, []).append(read)
        return any(b in self.model.flatten(read.defs) for read in found.get(b.key, ()))
