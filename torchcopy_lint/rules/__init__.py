"""The rule registry. One module per rule; add a new rule to ALL_RULES (kept in code order)."""

from __future__ import annotations

from typing import Dict, List, Type

from ..engine import Rule
from .tcl101_tensor_copy_construct import TensorCopyConstruct
from .tcl102_new_tensor_from_tensor import NewTensorFromTensor
from .tcl103_clone_then_detach import CloneThenDetach
from .tcl104_data_mutation import DataMutation
from .tcl105_deepcopy_live_module import DeepcopyLiveModule
from .tcl106_empty_like_copy import EmptyLikeCopy
from .tcl107_tensor_of_tensors import TensorOfTensors
from .tcl108_shallow_copy_tensor import ShallowCopyTensor
from .tcl109_live_state_dict import LiveStateDict
from .tcl110_accumulated_graph import AccumulatedGraph
from .tcl111_discarded_tensor_conversion import DiscardedTensorConversion
from .tcl112_list_of_one_tensor import ListOfOneTensor
from .tcl113_numpy_bridge_alias import NumpyBridgeAlias
from .tcl114_reference_kept_as_snapshot import ReferenceKeptAsSnapshot
from .tcl115_detach_alias_mutated import DetachAliasMutated
from .tcl116_create_then_convert import CreateThenConvert
from .tcl117_convert_then_detach import ConvertThenDetach
from .tcl118_clone_then_convert import CloneThenConvert
from .tcl119_legacy_data_write import LegacyDataWrite
from .tcl120_indexed_copy_write import IndexedCopyWrite

ALL_RULES: List[Type[Rule]] = sorted([
    TensorCopyConstruct,
    NewTensorFromTensor,
    CloneThenDetach,
    DataMutation,
    DeepcopyLiveModule,
    EmptyLikeCopy,
    TensorOfTensors,
    ShallowCopyTensor,
    LiveStateDict,
    AccumulatedGraph,
    DiscardedTensorConversion,
    ListOfOneTensor,
    NumpyBridgeAlias,
    ReferenceKeptAsSnapshot,
    DetachAliasMutated,
    CreateThenConvert,
    ConvertThenDetach,
    CloneThenConvert,
    LegacyDataWrite,
    IndexedCopyWrite,
], key=lambda rule: rule.code)

RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
