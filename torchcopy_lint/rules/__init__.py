"""The rule registry. One module per rule; add a new rule to ALL_RULES."""

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
from .tcl119_legacy_data_write import LegacyDataWrite

ALL_RULES: List[Type[Rule]] = [
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
    LegacyDataWrite,
]

RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
