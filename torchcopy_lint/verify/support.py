"""Measuring helpers shared by the claims and the fix-equivalence oracle.

All of them import torch lazily so that importing this module is free.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from typing import Callable, Iterator, List, Tuple

#: Stable part of the UserWarning torch emits for torch.tensor(t) and x.new_tensor(t).
COPY_CONSTRUCT_WARNING = "To copy construct from a tensor"

#: The message autograd raises when a tensor saved for backward was modified in place.
INPLACE_ERROR = "modified by an inplace operation"


@contextlib.contextmanager
def recorded_warnings() -> Iterator[List[warnings.WarningMessage]]:
    """Record every warning, even repeats from the same line (the default filter hides those)."""
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        yield records


@contextlib.contextmanager
def silenced_warnings() -> Iterator[None]:
    """Hide warnings a check provokes on purpose (the copy-construct warning, deprecations)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def copy_construct_warnings(records: List[warnings.WarningMessage]) -> List[warnings.WarningMessage]:
    """The copy-construct UserWarnings among ``records``."""
    return [
        r for r in records if issubclass(r.category, UserWarning) and COPY_CONSTRUCT_WARNING in str(r.message)
    ]


def shares_storage(a, b) -> bool:
    """Whether two tensors live in the same storage (views of one another included)."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def bitwise_equal(a, b) -> bool:
    """Equal bit patterns: unlike ``torch.equal`` this treats NaN as equal to itself and 0.0 != -0.0."""
    import torch

    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    as_bytes = [
        t.detach().resolve_conj().resolve_neg().cpu().contiguous().reshape(-1).view(torch.uint8) for t in (a, b)
    ]
    return torch.equal(*as_bytes)


def tensor_differences(expected, actual) -> List[str]:
    """Every observable property in which ``actual`` differs from ``expected``.

    Covers what a copy's user can see: values (bitwise), dtype, device, shape, strides,
    requires_grad, leaf status and the kind of grad_fn. Storage identity is left to the caller.
    """
    differences = []
    for name, get in (
        ("dtype", lambda t: t.dtype),
        ("device", lambda t: t.device),
        ("shape", lambda t: tuple(t.shape)),
        ("stride", lambda t: t.stride()),
        ("requires_grad", lambda t: t.requires_grad),
        ("is_leaf", lambda t: t.is_leaf),
        ("grad_fn", lambda t: type(t.grad_fn).__name__ if t.grad_fn is not None else None),
    ):
        if get(expected) != get(actual):
            differences.append(f"{name}: {get(expected)!r} != {get(actual)!r}")
    if not differences and not bitwise_equal(expected, actual):
        differences.append(f"values: {expected!r} != {actual!r}")
    return differences


def assert_same_tensor(expected, actual, what: str) -> None:
    """Raise AssertionError naming ``what`` and each differing property."""
    differences = tensor_differences(expected, actual)
    assert not differences, f"{what}: " + "; ".join(differences)


def best_times(
    candidate: Callable[[], object], baseline: Callable[[], object], *, number: int = 5, repeat: int = 41
) -> Tuple[float, float]:
    """Best seconds per call of ``candidate`` and of ``baseline``.

    The two are warmed up and timed in alternating blocks of ``number`` calls. Each side's
    fastest block is its cost: noise (other processes, page faults after the allocator hands
    memory back to the OS) only ever adds time. Medians were tried first and swung between
    0.24 and 4.9 for two calls dispatching the same aten ops on a loaded 2-core machine; the
    minimum stayed within 0.91-1.12.
    """

    def per_call(fn: Callable[[], object]) -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - start) / number

    per_call(candidate)
    per_call(baseline)
    candidate_best = baseline_best = float("inf")
    for _ in range(repeat):
        candidate_best = min(candidate_best, per_call(candidate))
        baseline_best = min(baseline_best, per_call(baseline))
    return candidate_best, baseline_best


def timing_ratio(candidate: Callable[[], object], baseline: Callable[[], object], **kwargs: int) -> float:
    """How many times slower ``candidate`` is than ``baseline`` (see :func:`best_times`)."""
    candidate_time, baseline_time = best_times(candidate, baseline, **kwargs)
    return candidate_time / baseline_time
