"""The claim decorator: each rule's module keeps its own list of claims."""

from __future__ import annotations

from typing import Callable, Iterable, List, Tuple

from ..core import ALL_DEVICES, Claim

Check = Callable[[str], None]


def registrar(claims: List[Claim]) -> Callable[..., Callable[[Check], Check]]:
    """A ``@claim(id, rule, statement, devices=..., tags=..., requires=...)`` decorator that appends to ``claims``.

    ``requires`` declares the modules besides torch a check needs (``("numpy",)``): without them
    ``verify`` reports the claim as skipped for that reason instead of running it."""

    def claim(
        claim_id: str,
        rule: str,
        statement: str,
        *,
        devices: Tuple[str, ...] = ALL_DEVICES,
        tags: Iterable[str] = (),
        requires: Tuple[str, ...] = (),
    ) -> Callable[[Check], Check]:
        def register(check: Check) -> Check:
            claims.append(Claim(claim_id, rule, statement, check, tuple(devices), frozenset(tags), tuple(requires)))
            return check

        return register

    return claim
