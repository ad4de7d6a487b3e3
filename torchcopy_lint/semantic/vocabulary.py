"""The torch vocabulary of the semantic model: what torch's annotations cannot say.

What ``torch.X(...)``, ``torch.nn.functional.X(...)``, a tensor's methods and an ``nn`` layer's call
return is read from torch's own annotations (``knowledge/torch_table.json``, semantic/library.py).
What is here is what annotations cannot say: functions torch leaves unannotated, names that say what
their receiver is whatever it is (``x.item()`` is a number, ``x.detach()`` means ``x`` is a tensor,
``model.parameters()`` means a module), attributes, configs, records, wrappers, holders and loaders.
Names only, no torch import.
"""

from __future__ import annotations

from ..codes import (NOT_TENSOR_ATTRIBUTES, NOT_TENSOR_BUILTINS, NOT_TENSOR_METHODS, NUMBER_BUILTINS,  # noqa: F401
                     NUMBER_METHODS)

BOOL_RESULTS = frozenset("""eq ne lt le gt ge greater less greater_equal less_equal not_equal isnan isinf isfinite
    isneginf isposinf isreal isclose isin signbit logical_and logical_or logical_not logical_xor""".split())
"""torch functions and tensor methods whose result is a bool tensor whatever their arguments: it never requires
grad (requires_grad.py), its dtype is bool (rules/_dtypes.py), as an index it is a mask (rules/_advanced_index.py)."""
INT64_RESULTS = frozenset("argmax argmin argsort nonzero argwhere randint randperm".split())
"""torch functions whose result is an int64 tensor (``randint``/``randperm`` unless a ``dtype=`` says otherwise)."""

TORCH_TENSOR_FUNCTIONS = frozenset("cdist norm tensordot".split())
"""``torch.X(...)`` that returns a single tensor, where torch's annotations do not say so (``torch/functional.py``
defines these without a return annotation). Everything annotated is in ``knowledge/torch_table.json``."""

TORCH_SUBMODULE_TENSOR_FUNCTIONS = {
    "linalg": frozenset("""norm vector_norm matrix_norm inv pinv det solve cholesky matrix_power matrix_exp cross
        multi_dot householder_product tensorinv tensorsolve vander vecdot matmul diagonal cond matrix_rank eigvals
        eigvalsh svdvals solve_triangular lu_solve ldl_solve""".split()),
}
"""``torch.linalg.X(...)`` that returns a single tensor (the decompositions return named tuples): torch defines
them with ``_add_docstr`` on ``torch._C._linalg``, without annotations. Every public function of ``torch.fft``
and ``torch.special`` returns a tensor."""
TORCH_TENSOR_SUBMODULES = frozenset({"fft", "special"})

TORCH_NOT_TENSOR = frozenset(
    """Size device dtype is_tensor is_storage finfo iinfo manual_seed no_grad enable_grad inference_mode
    set_grad_enabled get_default_device""".split()
)
"""``torch.X`` that is not a tensor and that the table does not list (classes, context managers, functions of
``torch/__init__.py``)."""
TORCH_CONSTANTS = frozenset("inf nan pi e newaxis".split())

TENSOR_CLASSES = frozenset(
    ["torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"]
    + [
        f"torch.{p}Tensor"
        for p in "Float Double Half BFloat16 Long Int Short Char Byte Bool".split()
    ]
    + [
        f"torch.cuda.{p}Tensor"
        for p in "Float Double Half BFloat16 Long Int Short Char Byte Bool".split()
    ]
)
NOT_TENSOR_BUILTIN_CLASSES = frozenset(
    "list tuple int float complex bool str bytes dict set frozenset range".split()
)
NOT_TENSOR_CLASSES = frozenset(
    ["numpy.ndarray", "numpy.generic", "numbers.Number", "numbers.Real", "numbers.Integral"]
)
NOT_TENSOR_ANNOTATIONS = NOT_TENSOR_BUILTIN_CLASSES | frozenset(
    "List Tuple Dict Set FrozenSet Sequence MutableSequence Iterable Iterator Mapping MutableMapping "
    "ndarray NDArray".split()
)

TENSOR_ONLY_METHODS = frozenset(
    """detach detach_ clone contiguous unsqueeze permute new_zeros new_ones new_full new_empty new_tensor
    type_as view_as expand_as reshape_as masked_fill index_select pin_memory softmax log_softmax""".split()
)
"""Methods whose presence alone says the receiver (and result) is a tensor."""

MODULE_PRESERVING_METHODS = frozenset(
    "to cuda cpu float double half bfloat16 train eval requires_grad_ type".split()
)
"""On an nn.Module these return the module; on a tensor they return a tensor."""

CAST_METHODS = frozenset("cuda float double half bfloat16 long int bool byte char short".split())

TENSOR_RETURNING_METHODS = frozenset(["norm"])
"""Tensor methods that return a tensor where the table (``TensorBase``'s annotations) does not list them:
``Tensor.norm`` is defined in ``torch/_tensor.py`` without annotations."""

TENSOR_ATTRIBUTES_OF_TENSOR = frozenset(["grad"])
"""Attributes of a tensor that are tensors where ``TensorBase``'s annotations do not say so: ``grad`` is
``Tensor | None`` there; the rules ask about it where it is set (``p.grad.data``). The others
(``data``, ``T``, ``real``...) come from the table."""
PARAMETER_ATTRIBUTES = frozenset("weight bias".split())
CONFIG_COMPONENTS = frozenset("config cfg conf args opt opts hparams hparam settings options".split())
PARAMETER_ITERATORS = frozenset("parameters buffers".split())
NAMED_PARAMETER_ITERATORS = frozenset("named_parameters named_buffers".split())
MODULE_ONLY_METHODS = frozenset(
    """parameters named_parameters modules named_modules children named_children buffers named_buffers
    train eval apply register_forward_hook register_forward_pre_hook register_full_backward_hook""".split()
)
LIGHTNING_MODULES = frozenset(
    ["pytorch_lightning.LightningModule", "lightning.LightningModule", "lightning.pytorch.LightningModule"]
)


TORCH_OPTIMIZER_PREFIXES = ("torch.optim.",)
RECORD_FACTORIES = frozenset(
    ["collections.namedtuple", "typing.NamedTuple", "types.SimpleNamespace", "argparse.Namespace",
     "dataclasses.replace", "easydict.EasyDict", "omegaconf.OmegaConf.create", "addict.Dict"]
)
"""Calls that return a record (an object with fields, never a tensor)."""
RECORD_CLASS_FACTORIES = frozenset(["collections.namedtuple", "typing.NamedTuple"])
MAPPING_FACTORIES = frozenset(["collections.OrderedDict", "collections.defaultdict", "collections.Counter"])
RECORD_METHODS = frozenset("parse_args _replace _asdict".split())
KNOWN_NON_TENSOR_BASES = frozenset(
    ["object", "typing.NamedTuple", "typing.Generic", "abc.ABC", "enum.Enum", "enum.IntEnum", "Exception",
     "torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset",
     "argparse.Namespace", "types.SimpleNamespace"]
)
"""Base classes whose subclasses are records: neither tensors nor modules."""
NON_PROJECT_ROOTS = frozenset(
    """torch numpy math os sys re json random collections typing dataclasses argparse copy functools itertools
    pathlib logging warnings abc enum types time datetime pickle io typing_extensions transformers
    diffusers timm torchvision torchaudio torchmetrics lightning pytorch_lightning accelerate pandas scipy
    sklearn PIL cv2 tqdm yaml omegaconf hydra einops easydict addict""".split()
)
"""Import roots that are not the linted project: the project index is not asked about them."""
MODULE_WRAPPERS = frozenset(
    ["torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.utils.parametrizations.weight_norm",
     "torch.nn.utils.parametrizations.spectral_norm", "torch.nn.utils.parametrizations.orthogonal"]
)
"""Functions that return the module they are given (with parameters added or replaced)."""
PARAMETERLESS_LAYERS = frozenset(
    """ReLU ReLU6 LeakyReLU ELU CELU SELU GELU SiLU Mish Sigmoid Tanh Hardtanh Hardsigmoid Hardswish Hardshrink
    Softshrink Tanhshrink Softplus Softsign LogSigmoid Threshold GLU Softmax Softmin LogSoftmax Softmax2d
    Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout
    MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d
    AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d LPPool1d LPPool2d LPPool3d FractionalMaxPool2d
    FractionalMaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d
    Identity Flatten Unflatten Upsample UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle PixelUnshuffle
    ChannelShuffle ZeroPad1d ZeroPad2d ZeroPad3d ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d
    ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d CircularPad1d CircularPad2d
    CircularPad3d CosineSimilarity PairwiseDistance Fold Unfold LocalResponseNorm CrossMapLRN2d
    L1Loss MSELoss SmoothL1Loss HuberLoss KLDivLoss PoissonNLLLoss GaussianNLLLoss CTCLoss HingeEmbeddingLoss
    CosineEmbeddingLoss MarginRankingLoss SoftMarginLoss TripletMarginLoss MultiLabelMarginLoss""".split()
)
"""``torch.nn`` layers that never hold a parameter, a submodule or a tensor given to them: calling one gives a result
that requires grad exactly when an input does (requires_grad.py). Checked on torch 2.13 with
``len(list(torch.nn.X(*args).parameters())) == 0`` and no buffers, no children, each built with its required
arguments only (pool sizes, pads, ``output_ratio`` for the fractional pools). Left out: layers with parameters
(``PReLU``, the norms but ``LocalResponseNorm``, ``Linear``, convolutions, ``Embedding``, RNNs, attention) and the
losses that take a ``weight``/``pos_weight`` tensor (``NLLLoss``, ``CrossEntropyLoss``, ``BCELoss``,
``BCEWithLogitsLoss``, ``MultiMarginLoss``, ``MultiLabelSoftMarginLoss``: a weight that requires grad makes the
loss require grad) or a ``distance_function`` (``TripletMarginWithDistanceLoss``: it may be a layer)."""
MODULE_FUNCTIONS = frozenset(["torch.nn.SyncBatchNorm.convert_sync_batchnorm"])
"""Functions that return a module whatever module they are given (they convert one into another)."""
MODULE_HOLDERS = frozenset(
    ["torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
     "torch.nn.parallel.distributed.DistributedDataParallel"]
)
"""Module classes whose ``.module`` is the module they wrap."""
MODULE_IF_MODULE_FUNCTIONS = frozenset(["torch.compile"])
"""Functions that return a module (``torch.compile``: an ``OptimizedModule`` wrapping it) when given a
module, and something else (a compiled function) otherwise. ``torch.jit.script`` is left out: a
``ScriptModule`` is copied by its own ``__deepcopy__``, another story than an eager module's."""

DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
"""Loaders whose iteration yields default-collated batches of their dataset's items."""

VIEW_METHODS = frozenset(
    """to cpu cuda float double half bfloat16 contiguous view view_as reshape reshape_as flatten unflatten
    squeeze unsqueeze expand expand_as permute transpose t narrow select unbind split chunk tensor_split
    unfold diagonal movedim moveaxis swapaxes swapdims as_strided type pin_memory requires_grad_""".split())
"""Tensor methods whose result is the receiver, a view of it or a conversion of it (their arguments are sizes,
dims, dtypes, devices): it requires grad as the receiver does."""

NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                              "torch.inference_mode", "torch.autograd.inference_mode",
                              "torch.autograd.grad_mode.inference_mode"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                              "torch.autograd.grad_mode.set_grad_enabled"})
"""Grad-mode contexts and decorators: ``with torch.no_grad():`` turns recording off, as
``set_grad_enabled(False)`` does."""
