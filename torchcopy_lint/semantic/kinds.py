"""Value kinds: the vocabulary of everything the semantic model can say about a value.

For the project-index engineer: the string values of ``Kind`` are the kinds ``ProjectIndex`` returns
("tensor", "parameter", "module", "optimizer", "tensor-list", "record", "mapping", "number",
"not-tensor", "unknown"). Changes to these strings are announced here.

A ``Value`` is a kind plus what else is known: the class (qualified name) of a module, optimizer or
record, a record's field names, for containers the value of their items, and for tuples of known
length (``torch.topk``'s named tuple, an LSTM's ``(out, (h, c))``) the value at each position. ``join`` is the merge of values that reach one
read along different paths: it keeps what all of them agree on, and is UNKNOWN otherwise, except
that tensors and parameters join to tensors and different non-tensors join to NOT_TENSOR.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Optional, Tuple


class Kind(Enum):
    TENSOR = "tensor"
    PARAMETER = "parameter"  # an nn.Parameter (a tensor)
    MODULE = "module"  # an nn.Module instance
    OPTIMIZER = "optimizer"
    TENSOR_LIST = "tensor-list"  # a list or tuple whose items are all tensors
    RECORD = "record"  # namedtuple, dataclass, argparse.Namespace, a project class that is not a module
    MAPPING = "mapping"  # dict and friends
    NUMBER = "number"
    NOT_TENSOR = "not-tensor"  # known not to be a tensor, nothing more
    UNKNOWN = "unknown"

    @property
    def is_tensor(self) -> bool:
        return self in _TENSORS

    @property
    def is_known_other(self) -> bool:
        """Known to be something that is not a tensor (a module, a record, a number, ...)."""
        return self not in _TENSORS and self is not Kind.UNKNOWN

    @property
    def coarse(self) -> "Kind":
        """The four-way answer of ``kind_of``: TENSOR, MODULE, NOT_TENSOR or UNKNOWN."""
        if self in _TENSORS:
            return Kind.TENSOR
        if self in (Kind.MODULE, Kind.UNKNOWN):
            return self
        return Kind.NOT_TENSOR


class Grad(Enum):
    """Whether an op on a tensor records an autograd node (requires_grad.py)."""

    YES = "yes"  # evidence that the tensor requires grad (and grad mode is on)
    NO = "no"  # evidence that nothing is recorded: it cannot require grad, or grad mode is off
    UNKNOWN = "unknown"


_TENSORS = frozenset({Kind.TENSOR, Kind.PARAMETER})
_PLAIN_OTHERS = frozenset({Kind.OPTIMIZER, Kind.TENSOR_LIST, Kind.RECORD, Kind.MAPPING, Kind.NUMBER,
                           Kind.NOT_TENSOR})


class Value:
    """What is known about a value: its kind, its class and (for containers) the kind of its items."""

    __slots__ = ("kind", "cls", "item", "fields", "items")

    def __init__(self, kind: Kind, cls: Optional[str] = None, item: Optional["Value"] = None,
                 fields: Optional[Tuple[str, ...]] = None, items: Optional[Tuple["Value", ...]] = None) -> None:
        self.kind = kind
        self.cls = cls  # a tensor's only when it is an instance of a project (non-torch) Tensor subclass
        self.item = item
        self.fields = fields  # a record's field names, when its class declares them (a named tuple's too)
        self.items = items  # a tuple's values by position, when its length is known

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and (self.kind, self.cls, self.item, self.items) == \
            (other.kind, other.cls, other.item, other.items)

    def __hash__(self) -> int:
        return hash((self.kind, self.cls))

    def __repr__(self) -> str:
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in ("cls", "item", "items")
                        if getattr(self, k) is not None)
        return f"Value({self.kind.value}{extra})"


UNKNOWN = Value(Kind.UNKNOWN)
#: ``self.x`` read in the value of a store to ``self.x`` (``self.x = torch.tensor(self.x)``) where no other store of the
#: class says what it was: unknown, and not to be looked up elsewhere (the class's summary holds that same store).
BEFORE_ITS_STORE = Value(Kind.UNKNOWN)
TENSOR = Value(Kind.TENSOR)
PARAMETER = Value(Kind.PARAMETER)
NOT_TENSOR = Value(Kind.NOT_TENSOR)
NUMBER = Value(Kind.NUMBER)


def value(kind: Kind) -> Value:
    return Value(kind)


def join(values: Iterable[Optional[Value]]) -> Optional[Value]:
    """The merge of the values reaching one point; None (no information, e.g. a cycle) is neutral."""
    result: Optional[Value] = None
    for v in values:
        if v is None:
            continue
        result = v if result is None else _join2(result, v)
        if result.kind is Kind.UNKNOWN:
            return UNKNOWN
    return result


def tuple_of(items: Tuple[Value, ...], cls: Optional[str] = None, fields: Optional[Tuple[str, ...]] = None) -> Value:
    """A tuple of known length: a list of tensors when every item is one, else a known non-tensor."""
    kind = Kind.TENSOR_LIST if items and all(i.kind.is_tensor for i in items) else Kind.NOT_TENSOR
    return Value(kind, cls, None, fields, items)


def _join2(a: Value, b: Value) -> Value:
    if a == b:
        return a
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        return tuple_of(tuple(known(join([x, y])) for x, y in zip(a.items, b.items)),
                        a.cls if a.cls == b.cls else None, a.fields if a.fields == b.fields else None)
    if a.kind is b.kind:
        item = join([a.item, b.item]) if a.item is not None and b.item is not None else None
        return Value(a.kind, a.cls if a.cls == b.cls else None, item, a.fields if a.fields == b.fields else None)
    if a.kind in _TENSORS and b.kind in _TENSORS:
        return TENSOR
    if a.kind in _PLAIN_OTHERS and b.kind in _PLAIN_OTHERS:
        return NOT_TENSOR
    return UNKNOWN


def known(v: Optional[Value]) -> Value:
    return UNKNOWN if v is None else v
