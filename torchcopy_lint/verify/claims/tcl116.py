"""TCL116 claims: create on the target device and dtype instead of creating, then converting."""

from __future__ import annotations

from typing import Callable, Dict, List, Tuple

from ..core import Claim
from ..support import assert_same_tensor, best_times, bitwise_equal, silenced_warnings
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)

#: The timing claim's tensor: 4096 x 4096 (64 MB of float32), as in the issue's measurement.
SIDE = 4096


def _dtype_shapes(device: str) -> Dict[str, Tuple[Callable[..., object], Tuple[object, ...]]]:
    """Each creation TCL116 fixes safely with a dtype, as (function, arguments); ``dtype=`` is added."""
    import torch

    return {
        "zeros": (torch.zeros, (3, 4)), "ones": (torch.ones, (3, 4)), "eye": (torch.eye, (4,)),
        "full int": (torch.full, ((2, 3), 7)), "full -3.0": (torch.full, ((4,), -3.0)),
        "full True": (torch.full, ((2,), True)),
        "arange ints": (torch.arange, (5, -5, -2)), "arange 1000": (torch.arange, (1000,)),
        "zeros_like": (torch.zeros_like, (torch.randn(3, 4, device=device).t(),)),
        "ones_like int": (torch.ones_like, (torch.arange(6, device=device),)),
        "full_like 1": (torch.full_like, (torch.randn(2, 3, device=device), 1)),
    }


def _python_floats() -> List[float]:
    """Random doubles and the ones nearest to each rounding midpoint of float16 and bfloat16 (where
    rounding twice, through float32, could differ from rounding once)."""
    import random

    import torch

    rng = random.Random(0)
    values = [rng.uniform(-7e4, 7e4) for _ in range(20000)]
    values += [rng.uniform(-1, 1) * 10 ** rng.uniform(-12, 38) for _ in range(20000)]
    for low_dtype, bits in ((torch.float16, torch.arange(0, 0x7C00, 7, dtype=torch.int32).to(torch.int16)),
                            (torch.bfloat16, torch.arange(0, 0x7F80, 7, dtype=torch.int32).to(torch.int16))):
        grid = bits.view(low_dtype).double()
        middles = (grid[:-1] + grid[1:]) / 2
        for scale in (1 + 2 ** -40, 1 - 2 ** -40, 1.0):
            values += (middles * scale).tolist()
    return values + [float("nan"), float("inf"), -0.0, 1e300, 3]


@claim("TCL116-same-values", "TCL116",
       "the fixes are exact: zeros/ones/eye/full(int literal)/arange(int literals)/*_like(x) created with dtype= "
       "equal the created-then-converted tensor for every dtype that holds their values (arange: not bool or "
       "complex, for which it raises); arange(n).float() equals "
       "arange(n, dtype=torch.float) up to n = 2**25; torch.tensor(python floats and ints) with dtype= float32, "
       "float16 or bool equals .to(that dtype) (40,000 random values and every float16/bfloat16 rounding "
       "midpoint; bitwise); and device= gives what .to(device) gives",
       tags={"fix"})
def _tcl116_same_values(device: str) -> None:
    import torch

    dtypes = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.complex64)
    for name, (make, args) in _dtype_shapes(device).items():
        for dtype in dtypes:
            if name == "arange 1000" and dtype in (torch.int8, torch.float16, torch.bfloat16) \
                    or name.startswith("arange") and dtype.is_complex:
                continue  # 999 does not fit; arange has no complex kernel: the rule offers no fix there
            original, fixed = make(*args).to(device).to(dtype), make(*args, dtype=dtype, device=device)
            assert_same_tensor(original, fixed, f"{name} as {dtype}")
        if not name.startswith(("full -", "full int", "arange")):
            assert_same_tensor(make(*args).to(device).bool(), make(*args, dtype=torch.bool, device=device),
                               f"{name} as bool")
        assert_same_tensor(make(*args).to(device), make(*args, device=device), f"{name} on {device}")
    if device == "cpu":
        n = 2 ** 25
        assert torch.equal(torch.arange(n).float(), torch.arange(n, dtype=torch.float)), "arange(2**25).float()"
    values = _python_floats()
    for dtype in (torch.float32, torch.float16, torch.bool):
        for data in (values, [int(v) for v in values if abs(v) < 2 ** 62], [[v] for v in values[:1000]]):
            original, fixed = torch.tensor(data).to(device).to(dtype), torch.tensor(data, dtype=dtype, device=device)
            assert bitwise_equal(original, fixed), f"torch.tensor(data).to({dtype}) != torch.tensor(data, dtype=...)"


@claim("TCL116-no-fix-where-values-differ", "TCL116",
       "where TCL116 offers no dtype fix the two forms differ: linspace(0, 1, 1001).half() (computed in float32) "
       "!= linspace(..., dtype=torch.half); arange(2.5).long() has 3 elements, arange(2.5, dtype=torch.long) 2; "
       "tensor([0.1]).double() != tensor([0.1], dtype=torch.double); full((2,), 300).to(torch.uint8) wraps where "
       "full(..., dtype=torch.uint8) raises, and tensor([nan]).long() where tensor([nan], dtype=torch.long) raises; "
       "rand(5, generator=g).double() != rand(5, generator=g, dtype=torch.double) with the same seed; "
       "tensor([nan]).bfloat16() has other bits (sign set) than tensor([nan], dtype=torch.bfloat16)",
       tags={"fix-caveat", "near-miss"})
def _tcl116_no_fix_where_values_differ(device: str) -> None:
    import torch

    def raises(make: Callable[[], object]) -> bool:
        try:
            make()
        except RuntimeError:
            return True
        return False

    assert not torch.equal(torch.linspace(0, 1, 1001, device=device).half(),
                           torch.linspace(0, 1, 1001, dtype=torch.half, device=device)), "linspace in half"
    assert (torch.arange(2.5, device=device).long().numel(), torch.arange(2.5, dtype=torch.long, device=device).numel()) \
        == (3, 2), "arange(2.5) as long"
    assert not torch.equal(torch.tensor([0.1], device=device).double(),
                           torch.tensor([0.1], dtype=torch.double, device=device)), "tensor([0.1]) as double"
    assert torch.full((2,), 300, device=device).to(torch.uint8).tolist() == [44, 44], "full(300) wraps"
    assert raises(lambda: torch.full((2,), 300, dtype=torch.uint8, device=device)), "full(300, dtype=uint8)"
    assert not raises(lambda: torch.tensor([float("nan")], device=device).long()), "tensor([nan]).long()"
    assert raises(lambda: torch.tensor([float("nan")], dtype=torch.long, device=device)), "tensor([nan], long)"
    draws = []
    for make in (lambda g: torch.rand(5, generator=g, device=device).double(),
                 lambda g: torch.rand(5, generator=g, dtype=torch.double, device=device)):
        draws.append(make(torch.Generator(device=device).manual_seed(0)))
    assert not torch.equal(*draws), "rand(.., dtype=double) drew the same numbers as rand(..).double()"
    nan_bits = [t.view(torch.int16).item() for t in (torch.tensor([float("nan")], device=device).bfloat16(),
                                                    torch.tensor([float("nan")], dtype=torch.bfloat16, device=device))]
    assert nan_bits[0] != nan_bits[1], f"tensor([nan]) as bfloat16: the same bits {nan_bits}"


@claim("TCL116-no-op-conversion", "TCL116",
       "a conversion to the dtype a creation already gives returns the created tensor itself, nothing copied: "
       "zeros/ones/empty/eye/linspace(...).float() (the default dtype, float32), arange/full/tensor of integers "
       ".long() (int64), tensor of bools .bool(), also through .to(dtype); *_like(x).to(x), .to(x.device), "
       ".to(device=x.device), .to(x.dtype) and zeros(n, device=d).to(d) likewise; the same .float() after another "
       "default dtype (set_default_dtype(float64)) copies",
       tags={"near-miss"})
def _tcl116_no_op_conversion(device: str) -> None:
    import torch

    made = {
        "zeros.float": lambda: torch.zeros(3, device=device), "ones.float": lambda: torch.ones(3, device=device),
        "empty.float": lambda: torch.empty(3, device=device), "eye.float": lambda: torch.eye(3, device=device),
        "linspace.float": lambda: torch.linspace(0, 1, 5, device=device),
        "arange.long": lambda: torch.arange(7, device=device), "full.long": lambda: torch.full((2,), 3, device=device),
        "tensor.long": lambda: torch.tensor([[1, -2], [3, 4]], device=device),
        "tensor.bool": lambda: torch.tensor([True, False], device=device),
    }
    for name, make in made.items():
        method = name.split(".")[1]
        for convert in (lambda t: getattr(t, method)(), lambda t: t.to({"float": torch.float32, "long": torch.int64,
                                                                       "bool": torch.bool}[method])):
            created = make()
            converted = convert(created)
            assert converted is created, f"{name}: a new tensor ({converted.dtype} from {created.dtype})"
    source = torch.randn(2, 3, device=device)
    for convert in (lambda t: t.to(source), lambda t: t.to(source.device), lambda t: t.to(device=source.device),
                    lambda t: t.to(source.dtype)):
        for make_like in (torch.zeros_like, torch.ones_like, torch.empty_like):
            created = make_like(source)
            assert convert(created) is created, f"{make_like.__name__}: a new tensor"
    created = torch.zeros(3, device=device)
    assert created.to(device) is created, "zeros(n, device=d).to(d): a new tensor"
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        created = torch.zeros(3, device=device)
        assert created.float() is not created and created.float().dtype == torch.float32, "float64 default: no copy"
    finally:
        torch.set_default_dtype(previous)


@claim("TCL116-extra-allocation", "TCL116",
       "zeros(4096, 4096).half() dispatches a float32 fill and a _to_copy: 64 MB allocated and filled first, then "
       "32 MB, where zeros(4096, 4096, dtype=torch.half) allocates and fills the 32 MB once",
       tags={"hazard"})
def _tcl116_extra_allocation(device: str) -> None:
    import torch

    from .copies import allocated_bytes

    converted, made = allocated_bytes(lambda: torch.zeros(SIDE, SIDE, device=device).half()), \
        allocated_bytes(lambda: torch.zeros(SIDE, SIDE, dtype=torch.half, device=device))
    assert (converted, made) == (SIDE * SIDE * 6, SIDE * SIDE * 2), f"allocated {converted} vs {made} bytes"


@claim("TCL116-speed", "TCL116",
       "zeros(4096, 4096).half() is slower than zeros(4096, 4096, dtype=torch.half) (best of 15 blocks of 2 calls: > 1.3x)",
       devices=("cpu",), tags={"hazard", "timing"})
def _tcl116_speed(device: str) -> None:
    import torch

    with silenced_warnings():
        converted, made = best_times(lambda: torch.zeros(SIDE, SIDE).half(),
                                     lambda: torch.zeros(SIDE, SIDE, dtype=torch.half), number=2, repeat=15)
    assert converted > 1.3 * made, f"{converted * 1e3:.1f} ms vs {made * 1e3:.1f} ms"


def _to_copies(make: Callable[[], object]) -> int:
    from .copies import dispatched

    return dispatched(make)[0].count("aten._to_copy")


@claim("TCL116-numpy-host-copy", "TCL116",
       "for a numpy array, torch.tensor(arr).to(d) dispatches two _to_copy (a host tensor, then d) where "
       "torch.tensor(arr, device=d) dispatches one, straight to d: one host copy fewer (d: meta on a CPU machine)",
       tags={"hazard"}, requires=("numpy",))
def _tcl116_numpy_host_copy(device: str) -> None:
    import numpy as np
    import torch

    target = "meta" if device == "cpu" else device
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    moved, made = _to_copies(lambda: torch.tensor(arr).to(target)), \
        _to_copies(lambda: torch.tensor(arr, device=target))
    assert (moved, made) == (2, 1), f"_to_copy: {moved} with .to(), {made} with device="
    assert torch.tensor(arr, device=target).device.type == torch.device(target).type


@claim("TCL116-python-data-same-cost", "TCL116",
       "for Python data (a list), torch.tensor(data, device=d) builds a host tensor and copies it to d with .to, "
       "as torch.tensor(data).to(d) does (torch/csrc/utils/tensor_new.h, NOTE [torch.tensor, lift_fresh, and "
       "device movement]): the profiler records as many aten::copy_ and aten::_to_copy for both forms",
       devices=("cuda",), tags={"near-miss"})
def _tcl116_python_data_same_cost(device: str) -> None:
    import torch
    from torch.autograd.profiler import profile

    data = [[float(i), float(i + 1)] for i in range(1000)]

    def recorded(make: Callable[[], object]) -> Tuple[int, int]:
        make()  # warm up
        with profile() as prof:
            make()
        names = [event.name for event in prof.function_events]
        return names.count("aten::copy_"), names.count("aten::_to_copy")

    moved, made = recorded(lambda: torch.tensor(data).to(device)), recorded(lambda: torch.tensor(data, device=device))
    assert moved == made and moved[0] >= 1, f"copy_/_to_copy: {moved} with .to(), {made} with device="
