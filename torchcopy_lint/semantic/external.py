"""What the project index knows about names outside the project (torch, builtins, stdlib).

Only what cross-module questions need: which external classes make a subclass an
``nn.Module``/tensor/optimizer or a known non-tensor, what calling an external
class or function gives (``nn.Linear(...)`` a module, ``copy.deepcopy(x)`` whatever
``x`` is), and what an annotation names. What torch's functions return comes from torch's
own annotations (``knowledge/torch_table.json`` through semantic/library.py); what is listed here
is what annotations cannot say (which classes are modules, optimizers, records or mappings).
Anything not listed is unknown: the index never guesses.
"""

from __future__ import annotations

from typing import Optional

from .. import knowledge
from .vocabulary import MODULE_FUNCTIONS  # noqa: F401  (shared with the per-file model)

LIGHTNING_MODULES = frozenset([
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule", "lightning.LightningModule",
    "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
])
_NOT_MODULE_NN = frozenset(["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"])
PARAMETER_CLASSES = frozenset(["torch.nn.Parameter", "torch.nn.parameter.Parameter"])
TENSOR_CLASSES = frozenset(["torch.Tensor", "torch.nn.Buffer"]) | PARAMETER_CLASSES
NOT_TENSOR_CLASSES = frozenset(
    """builtins.object builtins.dict builtins.list builtins.tuple builtins.set builtins.frozenset builtins.str
    builtins.bytes builtins.int builtins.float builtins.bool builtins.type builtins.Exception
    builtins.BaseException builtins.ValueError builtins.RuntimeError builtins.TypeError builtins.KeyError
    typing.NamedTuple typing.Generic typing.Protocol typing.TypedDict typing.Any abc.ABC abc.ABCMeta
    enum.Enum enum.IntEnum enum.Flag enum.IntFlag argparse.Namespace argparse.ArgumentParser
    collections.OrderedDict collections.defaultdict collections.UserDict collections.Counter
    torch.utils.data.Dataset torch.utils.data.IterableDataset torch.utils.data.DataLoader
    torch.utils.data.Sampler torch.utils.data.dataset.Dataset torch.autograd.Function
    torch.autograd.function.Function""".split()
)
RECORD_BASES = frozenset(["typing.NamedTuple", "typing_extensions.NamedTuple"])
RECORD_DECORATORS = frozenset(
    "dataclasses.dataclass attr.s attr.attrs attr.define attr.frozen attrs.define attrs.frozen "
    "pydantic.dataclasses.dataclass".split()
)
MAPPING_CLASSES = frozenset(
    """builtins.dict collections.OrderedDict collections.defaultdict collections.Counter typing.Dict
    typing.Mapping typing.MutableMapping typing.OrderedDict typing.DefaultDict collections.abc.Mapping
    collections.abc.MutableMapping""".split()
)
SEQUENCE_ANNOTATIONS = frozenset(
    """builtins.list builtins.tuple builtins.set builtins.frozenset typing.List typing.Tuple typing.Set
    typing.FrozenSet typing.Sequence typing.MutableSequence typing.Iterable typing.Iterator
    collections.abc.Sequence collections.abc.Iterable collections.abc.Iterator""".split()
)
NUMBER_CLASSES = frozenset(["builtins.int", "builtins.float", "builtins.complex"])
BUILTIN_NAMES = frozenset(
    """object dict list tuple set frozenset str bytes int float complex bool type Exception BaseException
    ValueError RuntimeError TypeError KeyError len sorted range enumerate zip map filter repr isinstance
    hasattr getattr print iter next super abs round min max sum any all id hash ord chr format""".split()
)
NUMBER_FUNCTIONS = frozenset("builtins.len builtins.int builtins.float builtins.hash builtins.id".split())
NOT_TENSOR_FUNCTIONS = frozenset(
    """builtins.str builtins.repr builtins.bool builtins.list builtins.tuple builtins.set builtins.sorted
    builtins.range builtins.enumerate builtins.zip builtins.isinstance builtins.hasattr
    builtins.format""".split()
)
COPY_FUNCTIONS = frozenset(["copy.deepcopy", "copy.copy"])


def class_kind(qualified: str) -> Optional[str]:
    """"module", "tensor", "optimizer" or "not-tensor" for an external class usable as a base; else None."""
    parts = qualified.split(".")
    last = parts[-1]
    if qualified in TENSOR_CLASSES:
        return "tensor"
    if qualified in LIGHTNING_MODULES or qualified in ("torch.jit.ScriptModule", "torch.nn.modules.module.Module"):
        return "module"
    if parts[:2] == ["torch", "nn"] and last[:1].isupper() and last not in _NOT_MODULE_NN and (
            len(parts) == 3 or parts[2] in ("modules", "parallel")):
        return "module"
    if parts[:2] == ["torch", "optim"] and last[:1].isupper() and (len(parts) == 3 or parts[2] == "optimizer"):
        return "optimizer"
    if qualified in NOT_TENSOR_CLASSES or (parts[0] == "builtins" and last.endswith(("Error", "Warning"))):
        return "not-tensor"
    return None


def instance_kind(qualified: str) -> Optional[str]:
    """The kind of an instance of the external class ``qualified`` (``nn.Parameter(...)``: "parameter")."""
    if qualified in PARAMETER_CLASSES:
        return "parameter"
    if qualified in MAPPING_CLASSES:
        return "mapping"
    if qualified in NUMBER_CLASSES:
        return "number"
    if qualified in RECORD_BASES:
        return None
    return class_kind(qualified)


def call_kind(qualified: str) -> Optional[str]:
    """What calling the external ``qualified`` gives, when it does not depend on the arguments."""
    parts = qualified.split(".")
    if parts[0] == "torch" and len(parts) == 2 and knowledge.plain_kind("functions", parts[1]):
        return knowledge.plain_kind("functions", parts[1])
    if parts[:3] == ["torch", "nn", "functional"] and len(parts) == 4:
        return knowledge.plain_kind("functional", parts[3])
    if qualified in MODULE_FUNCTIONS:
        return "module"
    if qualified in NUMBER_FUNCTIONS:
        return "number"
    if qualified in NOT_TENSOR_FUNCTIONS:
        return "not-tensor"
    return instance_kind(qualified)


def annotation_kind(qualified: str) -> Optional[str]:
    """The kind a bare annotation ``qualified`` promises (``torch.Tensor``: "tensor")."""
    if qualified in SEQUENCE_ANNOTATIONS or qualified in ("builtins.str", "builtins.bool", "builtins.bytes"):
        return "not-tensor"
    if qualified in ("torch.Tensor", "torch.nn.Buffer"):
        return "tensor"
    return instance_kind(qualified)
