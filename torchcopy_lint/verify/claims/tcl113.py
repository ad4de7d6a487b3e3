"""TCL113 claims: the numpy bridge shares memory both ways."""

from __future__ import annotations

from typing import List

from ..core import Claim
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)

#: Every claim here goes through the numpy bridge, and torch does not require numpy: without it they are skipped.
NUMPY = ("numpy",)


@claim("TCL113-numpy-shares-memory", "TCL113",
       "a = t.numpy() shares memory with t: a[0] = 5 and a *= 2 change t, t.add_(1) changes a",
       devices=("cpu",), tags={"hazard"}, requires=NUMPY)
def _tcl113_numpy_shares_memory(device: str) -> None:
    import torch

    t = torch.zeros(3, device=device)
    a = t.numpy()
    a[0] = 5
    a *= 2
    assert t.tolist() == [10.0, 0.0, 0.0], f"t did not follow a: {t.tolist()}"
    t.add_(1)
    assert a.tolist() == [11.0, 1.0, 1.0], f"a did not follow t: {a.tolist()}"


@claim("TCL113-from-numpy-shares-memory", "TCL113",
       "torch.from_numpy(a) and torch.as_tensor(a) share memory with the array a both ways (a += 1, t.add_(1))",
       devices=("cpu",), tags={"hazard"}, requires=NUMPY)
def _tcl113_from_numpy_shares_memory(device: str) -> None:
    import numpy as np
    import torch

    for bridge in (torch.from_numpy, torch.as_tensor):
        a = np.zeros(3)
        t = bridge(a)
        a += 1
        assert t.tolist() == [1.0, 1.0, 1.0], f"{bridge.__name__}: tensor did not follow the array: {t.tolist()}"
        t.add_(1)
        assert a.tolist() == [2.0, 2.0, 2.0], f"{bridge.__name__}: array did not follow the tensor: {a.tolist()}"


@claim("TCL113-asarray-shares-memory", "TCL113",
       "np.asarray(t) of a CPU tensor shares its memory: t.zero_() changes the array", devices=("cpu",),
       tags={"hazard"}, requires=NUMPY)
def _tcl113_asarray_shares_memory(device: str) -> None:
    import numpy as np
    import torch

    t = torch.ones(3, device=device)
    a = np.asarray(t)
    t.zero_()
    assert a.tolist() == [0.0, 0.0, 0.0], f"np.asarray copied the tensor: {a.tolist()}"


@claim("TCL113-fix-copies", "TCL113",
       "t.numpy().copy(), np.asarray(t).copy() and torch.tensor(a) copy: same values and dtype, writes no longer cross",
       devices=("cpu",), tags={"fix"}, requires=NUMPY)
def _tcl113_fix_copies(device: str) -> None:
    import numpy as np
    import torch

    t = torch.arange(3.0, device=device)
    for a in (t.numpy().copy(), np.asarray(t).copy()):
        assert a.dtype == np.float32 and a.tolist() == [0.0, 1.0, 2.0]
        a[0] = 9
        assert t.tolist() == [0.0, 1.0, 2.0], f"the copy still writes t: {t.tolist()}"
    arr = np.arange(3, dtype=np.float64)
    copied = torch.tensor(arr)
    assert copied.dtype == torch.float64 and copied.tolist() == [0.0, 1.0, 2.0], (copied.dtype, copied)
    assert copied.dtype == torch.from_numpy(arr).dtype, "torch.tensor(a) keeps the dtype of from_numpy(a)"
    copied.add_(1)
    assert arr.tolist() == [0.0, 1.0, 2.0], f"torch.tensor(a) still writes the array: {arr.tolist()}"


@claim("TCL113-rebinding-near-miss", "TCL113",
       "a = t.numpy(); a = a + 1 makes a new array and leaves t alone (not flagged)", devices=("cpu",),
       tags={"near-miss"}, requires=NUMPY)
def _tcl113_rebinding_near_miss(device: str) -> None:
    import torch

    t = torch.zeros(3, device=device)
    a = t.numpy()
    a = a + 1
    assert t.tolist() == [0.0, 0.0, 0.0] and a.tolist() == [1.0, 1.0, 1.0], (t, a)


@claim("TCL113-cpu-call-near-miss", "TCL113",
       "t.cpu().numpy() shares t's memory only when t is already on the CPU (t.cpu() is t); from a GPU it is a "
       "copy, and t.numpy() raises: the rule leaves .cpu() chains alone (device unknown)",
       tags={"near-miss"}, requires=NUMPY)
def _tcl113_cpu_call_near_miss(device: str) -> None:
    import torch

    t = torch.zeros(3, device=device)
    a = t.cpu().numpy()
    a[0] = 7
    if device == "cpu":
        assert t.cpu() is t and t[0].item() == 7.0, "on the CPU, t.cpu().numpy() should share t's memory"
        return
    assert t[0].item() == 0.0, "a GPU tensor followed its host copy"
    try:
        t.numpy()
    except TypeError:
        pass
    else:
        raise AssertionError("numpy() of a GPU tensor did not raise")


@claim("TCL113-legacy-constructor-shares", "TCL113",
       "torch.FloatTensor(a) and torch.Tensor(a) share a float32 array's memory both ways (contiguous or not), and "
       "each legacy constructor shares an array of its own dtype (Double float64, Half float16, Long int64, Int int32, "
       "Short int16, Char int8, Byte uint8, Bool bool); an array of any other dtype is copied (FloatTensor of float64 "
       "or int64, DoubleTensor of float32); torch.Tensor follows the default dtype (set to float64: a float64 array "
       "is shared, a float32 one copied); the fix torch.tensor(a) copies with the same dtype",
       devices=("cpu",), tags={"hazard", "near-miss", "fix"}, requires=NUMPY)
def _tcl113_legacy_constructor_shares(device: str) -> None:
    import numpy as np
    import torch

    def shares(constructor, a) -> bool:
        t = constructor(a)
        before = t.clone()
        a.flat[0] = 1 if a.dtype == np.bool_ else a.flat[0] + 7
        return not torch.equal(t, before)

    own = {"Tensor": np.float32, "FloatTensor": np.float32, "DoubleTensor": np.float64, "HalfTensor": np.float16,
           "LongTensor": np.int64, "IntTensor": np.int32, "ShortTensor": np.int16, "CharTensor": np.int8,
           "ByteTensor": np.uint8, "BoolTensor": np.bool_}
    for name, dtype in own.items():
        constructor = getattr(torch, name)
        assert shares(constructor, np.zeros(4, dtype=dtype)), f"torch.{name} copied a {dtype.__name__} array"
        fixed = torch.tensor(np.zeros(4, dtype=dtype))
        assert fixed.dtype == constructor(np.zeros(4, dtype=dtype)).dtype, f"torch.tensor's dtype differs ({name})"
    t = torch.FloatTensor(np.zeros(3, dtype=np.float32))
    a = t.numpy()
    t.add_(1)
    assert a.tolist() == [1.0, 1.0, 1.0], "a write to the tensor did not reach the array"
    assert shares(torch.Tensor, np.zeros((4, 4), dtype=np.float32)[:, ::2]), "a strided float32 array was copied"
    for name, dtype in (("FloatTensor", np.float64), ("FloatTensor", np.int64), ("DoubleTensor", np.float32),
                        ("Tensor", np.float64), ("LongTensor", np.int32)):
        assert not shares(getattr(torch, name), np.zeros(4, dtype=dtype)), f"torch.{name} shared a {dtype} array"
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert shares(torch.Tensor, np.zeros(3)), "torch.Tensor copied a float64 array under a float64 default"
        assert not shares(torch.Tensor, np.zeros(3, dtype=np.float32)), "torch.Tensor shared a float32 array"
    finally:
        torch.set_default_dtype(previous)
