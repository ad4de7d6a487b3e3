"""TCL120 claims: an in-place method on an advanced-indexing subscript writes a copy; the assignment forms write through."""

from __future__ import annotations

from typing import List

from ..core import Claim
from .registry import registrar

CLAIMS: List[Claim] = []
claim = registrar(CLAIMS)


def _grid(device: str):
    import torch

    return torch.arange(12.0, device=device).reshape(4, 3)


def _unchanged(device: str, name: str, write) -> None:
    import torch

    h = _grid(device)
    write(h)
    assert torch.equal(h, _grid(device)), f"{name} changed h: {h.tolist()}"


def _changed(device: str, name: str, write) -> None:
    import torch

    h = _grid(device)
    write(h)
    assert not torch.equal(h, _grid(device)), f"{name} left h unchanged"


@claim("TCL120-advanced-index-copy", "TCL120",
       "h[idx].zero_() and other in-place methods leave h unchanged when idx is advanced: an integer tensor "
       "(torch.tensor([0, 2]), arange, randperm, argsort, topk(..).indices, nonzero(), torch.where(c)[0]), the tuple "
       "of torch.where(c) or nonzero(as_tuple=True), a bool mask of any dimension (a 0-d one and a Python bool too), "
       "a list of ints or bools, a tuple index with one such element (h[:, [0, 2]], h[idx, 0]), also through .data "
       "(h.data[idx], h[idx].data) or .detach() (h.detach()[idx], h[idx].detach()), chained (h[idx].add_(1).mul_(2)) or subscripted again (h[idx][0]); the indexed "
       "result shares no storage with h",
       tags={"hazard"})
def _tcl120_advanced_index_copy(device: str) -> None:
    import torch

    ints = torch.tensor([0, 2], device=device)
    mask = torch.tensor([True, False, True, False], device=device)
    writes = {
        "h[tensor([0, 2])].fill_(5)": lambda h: h[ints].fill_(5),
        "h[mask].add_(1)": lambda h: h[mask].add_(1),
        "h[h > 4].zero_()": lambda h: h[h > 4].zero_(),
        "h[[0, 2]].mul_(0)": lambda h: h[[0, 2]].mul_(0),
        "h[[True, False, True, False]].zero_()": lambda h: h[[True, False, True, False]].zero_(),
        "h[tensor(True)].zero_()": lambda h: h[torch.tensor(True, device=device)].zero_(),
        "h[True].zero_()": lambda h: h[True].zero_(),
        "h[arange(2)].zero_()": lambda h: h[torch.arange(2, device=device)].zero_(),
        "h[randperm(4)[:2]].zero_()": lambda h: h[torch.randperm(4, device=device)[:2]].zero_(),
        "h[h[:, 0].argsort()].zero_()": lambda h: h[h[:, 0].argsort()].zero_(),
        "h[h[:, 0].topk(2).indices].zero_()": lambda h: h[h[:, 0].topk(2).indices].zero_(),
        "h[mask.nonzero()].zero_()": lambda h: h[mask.nonzero()].zero_(),
        "h[mask.nonzero(as_tuple=True)].zero_()": lambda h: h[mask.nonzero(as_tuple=True)].zero_(),
        "h[torch.where(h > 4)].zero_()": lambda h: h[torch.where(h > 4)].zero_(),
        "h[torch.where(mask)[0]].zero_()": lambda h: h[torch.where(mask)[0]].zero_(),
        "h[:, [0, 2]].zero_()": lambda h: h[:, [0, 2]].zero_(),
        "h[idx, 0].zero_()": lambda h: h[ints, 0].zero_(),
        "h.data[idx].zero_()": lambda h: h.data[ints].zero_(),
        "h[idx].data.zero_()": lambda h: h[ints].data.zero_(),
        "h.detach()[idx].zero_()": lambda h: h.detach()[ints].zero_(),
        "h[idx].detach().zero_()": lambda h: h[ints].detach().zero_(),
        "h[idx].add_(1).mul_(2)": lambda h: h[ints].add_(1).mul_(2),
        "h[idx][0].zero_()": lambda h: h[ints][0].zero_(),
        "h[idx].clamp_(0, 1)": lambda h: h[ints].clamp_(0, 1),
        "h[idx].uniform_()": lambda h: h[ints].uniform_(),
        "h[idx].copy_(ones)": lambda h: h[ints].copy_(torch.ones(2, 3, device=device)),
        "h[idx].masked_fill_(m, 7)": lambda h: h[ints].masked_fill_(torch.ones(2, 3, dtype=torch.bool,
                                                                               device=device), 7),
    }
    for name, write in writes.items():
        _unchanged(device, name, write)
    h = _grid(device)
    for indexed in (h[ints], h[mask], h[[0, 2]], h[:, [0, 2]]):
        assert indexed.untyped_storage().data_ptr() != h.untyped_storage().data_ptr(), "an indexed result shares h"


@claim("TCL120-numpy-index-copy", "TCL120",
       "h[a].zero_() leaves h unchanged for a numpy integer array (np.array([0, 2]), np.where(c)[0], "
       "np.flatnonzero, np.argsort) and a numpy bool array; a 0-d numpy integer array indexes like an int (a view)",
       devices=("cpu",), tags={"hazard"}, requires=("numpy",))
def _tcl120_numpy_index_copy(device: str) -> None:
    import numpy as np  # this claim needs numpy; the others run without it

    done = np.array([True, False, True, False])
    for name, index in (("np.array([0, 2])", np.array([0, 2])), ("np.where(done)[0]", np.where(done)[0]),
                        ("np.flatnonzero(done)", np.flatnonzero(done)), ("np.argsort(x)", np.argsort([3, 1, 2, 0])),
                        ("a bool array", done)):
        _unchanged(device, f"h[{name}].zero_()", lambda h: h[index].zero_())
    _changed(device, "h[np.array(1)].zero_()", lambda h: h[np.array(1)].zero_())


@claim("TCL120-in-place-function-copy", "TCL120",
       "an in-place function of torch given an advanced-indexing subscript writes the copy and leaves h unchanged: torch."
       "zero_/fill_/clamp_/relu_/sigmoid_, torch.nn.functional.relu_, torch.nn.init.zeros_/ones_/constant_/normal_/"
       "uniform_/orthogonal_ (a parameter's copy too; through .data or .detach()); on a slice (a view) they write h",
       tags={"hazard", "near-miss"})
def _tcl120_in_place_function_copy(device: str) -> None:
    import torch

    ints = torch.tensor([0, 2], device=device)
    init, functional = torch.nn.init, torch.nn.functional
    writes = {
        "torch.zero_": torch.zero_, "torch.fill_(., 5)": lambda t: torch.fill_(t, 5),
        "torch.clamp_(., 0, 1)": lambda t: torch.clamp_(t, 0, 1), "torch.relu_": lambda t: torch.relu_(t.sub_(99)),
        "torch.sigmoid_": torch.sigmoid_, "F.relu_": lambda t: functional.relu_(t.sub_(99)),
        "init.zeros_": init.zeros_, "init.ones_": init.ones_, "init.constant_(., 3)": lambda t: init.constant_(t, 3),
        "init.normal_": init.normal_, "init.uniform_": init.uniform_, "init.orthogonal_": init.orthogonal_,
    }
    for name, write in writes.items():
        _unchanged(device, f"{name}(h[idx])", lambda h: write(h[ints]))
        _unchanged(device, f"{name}(h.data[idx])", lambda h: write(h.data[ints]))
        _unchanged(device, f"{name}(h[idx].detach())", lambda h: write(h[ints].detach()))
        _changed(device, f"{name}(h[0:2])", lambda h: write(h[0:2]))
    for name in ("zeros_", "normal_", "orthogonal_"):
        w = torch.nn.Parameter(_grid(device))
        getattr(init, name)(w[ints])
        assert torch.equal(w.detach(), _grid(device)), f"init.{name}(w[idx]) changed the parameter w"


@claim("TCL120-basic-index-is-a-view", "TCL120",
       "a basic index gives a view, whose in-place write changes h: a slice (h[0:2]), an int (h[1]), None and "
       "... (h[None, ..., 0]), a tuple of those, and a 0-d integer tensor (h[torch.tensor(1)], h[x.argmax()]), "
       "which indexes like an int: not flagged",
       tags={"near-miss"})
def _tcl120_basic_index_is_a_view(device: str) -> None:
    import torch

    for name, write in (("h[0:2].zero_()", lambda h: h[0:2].zero_()), ("h[1].zero_()", lambda h: h[1].zero_()),
                        ("h[None, ..., 0].zero_()", lambda h: h[None, ..., 0].zero_()),
                        ("h[1, :].fill_(-1)", lambda h: h[1, :].fill_(-1)),
                        ("h[torch.tensor(1)].zero_()", lambda h: h[torch.tensor(1, device=device)].zero_()),
                        ("h[h[:, 0].argmax()].zero_()", lambda h: h[h[:, 0].argmax()].zero_())):
        _changed(device, name, write)


@claim("TCL120-write-through-index", "TCL120",
       "h[idx] = 0, h[idx] += 1, h[idx] *= 2, h.index_fill_(0, idx, 0) and h.index_put_((idx,), v) write h itself "
       "with an advanced idx (an integer tensor, a bool mask, a list): not flagged",
       tags={"near-miss", "fix"})
def _tcl120_write_through_index(device: str) -> None:
    import torch

    ints = torch.tensor([0, 2], device=device)
    mask = torch.tensor([True, False, True, False], device=device)
    for label, idx in (("an integer tensor", ints), ("a bool mask", mask), ("a list", [0, 2])):

        def assign(h):
            h[idx] = 0

        def add(h):
            h[idx] += 1

        def mul(h):
            h[idx] *= 2

        for name, write in (("h[idx] = 0", assign), ("h[idx] += 1", add), ("h[idx] *= 2", mul)):
            _changed(device, f"{name} ({label})", write)
    _changed(device, "index_fill_", lambda h: h.index_fill_(0, ints, 0))
    _changed(device, "index_put_", lambda h: h.index_put_((ints,), torch.zeros(3, device=device)))


@claim("TCL120-fix-same-values", "TCL120",
       "the fix writes h[idx] with exactly what the in-place method computed in the copy, and nothing else: h[idx] = 0 "
       "for zero_(), h[idx] = v for fill_(v) with a number, h[idx] += v for add_(v) (a number or a broadcast tensor), "
       "h[idx] *= v for mul_(v); dtype and shape of h unchanged (float32, int64, bool, float16 tensors; an integer "
       "index without duplicates, a bool mask, a list, a tuple index)",
       tags={"fix"})
def _tcl120_fix_same_values(device: str) -> None:
    import torch

    indices = {"ints": torch.tensor([2, 0], device=device), "mask": torch.tensor([True, False, True, False],
                                                                                  device=device),
               "list": [3, 1], "tuple": (slice(None), [0, 2])}
    row = torch.tensor([1.0, -2.0, 3.0], device=device)
    fills = {"zero_": 0, "fill_(2.5)": 2.5, "fill_(-1)": -1}
    for dtype in (torch.float32, torch.int64, torch.bool, torch.float16):
        for label, idx in indices.items():
            for name in (*fills, "add_(3)", "mul_(2)", "add_(row)"):
                if dtype is torch.bool and name not in fills:
                    continue  # arithmetic on bool raises either way
                h = _grid(device).to(dtype)
                expected = h.clone()
                copy = expected[idx]
                v = row[:copy.shape[-1]].to(dtype) if name == "add_(row)" else 3 if name == "add_(3)" else 2
                if name == "zero_":
                    copy.zero_()
                    h[idx] = 0
                elif name in fills:
                    copy.fill_(fills[name])
                    h[idx] = fills[name]
                elif name.startswith("add_"):
                    copy.add_(v)
                    h[idx] += v
                else:
                    copy.mul_(v)
                    h[idx] *= v
                expected[idx] = copy  # what the author meant: the computed values land in h
                assert h.dtype == dtype and h.shape == expected.shape, f"{name} {label} {dtype}: {h.dtype} {h.shape}"
                assert torch.equal(h, expected), f"{name} on {label} ({dtype}): {h.tolist()} != {expected.tolist()}"


@claim("TCL120-fix-assignment-casts-like-fill", "TCL120",
       "for a number literal of magnitude at most 65504 (float16's largest), h[idx] = v stores what h[idx].fill_(v) "
       "computes, or both raise, for int64, int32, int16, int8, uint8, bool, float16, bfloat16, float32, complex64 "
       "tensors (2.5 -> 2, -1 -> 255 in uint8, 200 raises in int8)",
       tags={"fix"})
def _tcl120_fix_assignment_casts_like_fill(device: str) -> None:
    import torch

    dtypes = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool, torch.float16,
              torch.bfloat16, torch.float32, torch.complex64)
    for dtype in dtypes:
        for v in (0, 1, -1, 2.5, -2.7, 200, 300, -129, 40000, 65504.0, -65504, True, False, 1e-8):
            try:
                filled = torch.zeros(3, dtype=dtype, device=device).fill_(v).tolist()
            except RuntimeError:
                filled = "raises"
            try:
                h = torch.zeros(3, dtype=dtype, device=device)
                h[[0, 1, 2]] = v
                assigned = h.tolist()
            except RuntimeError:
                assigned = "raises"
            assert assigned == filled, f"{dtype}, {v!r}: h[idx] = v gives {assigned}, fill_ gives {filled}"


@claim("TCL120-fix-caveats", "TCL120",
       "where no fix is offered: fill_(<a float64 0-d tensor>) fills a float32 copy while h[idx] = <that tensor> "
       "raises (index_put_ wants equal dtypes); fill_(70000.0) on a float16 tensor of 3 elements raises while "
       "h[idx] = 70000.0 stores inf; h[idx] = 0 on a leaf that requires grad raises where h[idx].zero_() ran; and "
       "with a repeated index h[[0, 0]] += 1 adds once (index_add_ would add twice)",
       tags={"fix-caveat"})
def _tcl120_fix_caveats(device: str) -> None:
    import torch

    def raises(action) -> bool:
        try:
            action()
        except RuntimeError:
            return True
        return False

    h = torch.zeros(3, device=device)
    value = torch.tensor(2.5, dtype=torch.float64, device=device)
    assert h[[0, 1]].fill_(value).tolist() == [2.5, 2.5], "fill_ of a float64 0-d tensor did not cast"
    assert raises(lambda: h.__setitem__([0, 1], value)), "assigning a float64 tensor to a float32 index did not raise"
    half = torch.zeros(3, dtype=torch.float16, device=device)
    assert raises(lambda: half.clone().fill_(70000.0)), "fill_(70000.0) on float16 did not raise"
    half[[0, 1, 2]] = 70000.0
    assert torch.isinf(half).all(), f"h[idx] = 70000.0 on float16 gave {half.tolist()}"
    leaf = torch.zeros(3, device=device, requires_grad=True)
    leaf[[0, 1]].zero_()
    assert raises(lambda: leaf.__setitem__([0, 1], 0)), "assigning into a leaf that requires grad did not raise"
    counts = torch.zeros(3, device=device)
    counts[[0, 0]] += 1
    assert counts.tolist() == [1.0, 0.0, 0.0], counts.tolist()
    added = torch.zeros(3, device=device).index_add_(0, torch.tensor([0, 0], device=device),
                                                     torch.ones(2, device=device))
    assert added.tolist() == [2.0, 0.0, 0.0], added.tolist()
