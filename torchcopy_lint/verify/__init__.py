"""``torchcopy-lint verify``: re-prove, on the installed torch, every claim the rules rely on.

Importing this package does not import torch; :func:`main` does, and reports cleanly when
torch is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import List, Optional, Sequence

from .core import (
    ALL_DEVICES, NOT_INSTALLED, Claim, Outcome, Status, available_devices, evaluate, missing_modules, torch_available,
)

__all__ = ["main", "available_devices", "run_claims", "Claim", "Outcome", "Status"]

#: Exit status when torch is not installed (1 is reserved for "a claim does not hold").
EXIT_NO_TORCH = 2


def run_claims(claims: Sequence[Claim], devices: Sequence[str] = ALL_DEVICES) -> List[Outcome]:
    """Evaluate every claim on every device, in registry order; a claim whose device or declared module is
    missing here is skipped with that reason."""
    available = available_devices()
    missing = missing_modules(module for claim in claims for module in claim.requires)
    return [evaluate(claim, device, available, missing) for claim in claims for device in devices]


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="torchcopy-lint verify",
        description="Check, on the installed torch, every claim torchcopy-lint's rules, fixes and docs make.",
    )
    parser.add_argument("--json", action="store_true", help="print results as JSON instead of a table")
    parser.add_argument("--rule", action="append", metavar="CODE",
                        help="only claims for this rule (TCL101..TCL110 or 'general'); repeatable")
    parser.add_argument("--tag", action="append", metavar="TAG",
                        help="only claims with this tag (hazard, fix, fix-caveat, near-miss, myth, timing); repeatable")
    parser.add_argument("--claim", action="append", metavar="ID", help="only this claim id; repeatable")
    return parser.parse_args(list(argv))


def _select(claims: Sequence[Claim], args: argparse.Namespace) -> List[Claim]:
    return [
        c for c in claims
        if (not args.rule or c.rule in args.rule)
        and (not args.tag or c.tags & set(args.tag))
        and (not args.claim or c.id in args.claim)
    ]


def _render_table(outcomes: Sequence[Outcome], devices: Sequence[str]) -> str:
    by_claim = {}
    for outcome in outcomes:
        by_claim.setdefault(outcome.claim.id, {"claim": outcome.claim})[outcome.device] = outcome.cell
    headers = ["rule", "claim", *devices, "statement"]
    rows = [[e["claim"].rule, e["claim"].id, *(e[d] for d in devices), e["claim"].statement] for e in by_claim.values()]
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers) - 1)]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " | " + cells[-1]

    rule = "-+-".join("-" * width for width in widths) + "-+-" + "-" * len("statement")
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def _as_json(outcomes: Sequence[Outcome], torch_version: str) -> str:
    return json.dumps(
        {
            "torch": torch_version,
            "results": [
                {
                    "claim": o.claim.id,
                    "rule": o.claim.rule,
                    "statement": o.claim.statement,
                    "tags": sorted(o.claim.tags),
                    "requires": list(o.claim.requires),
                    "device": o.device,
                    "status": o.status.name.lower(),
                    "detail": o.detail,
                }
                for o in outcomes
            ],
        },
        indent=2,
    )


def summary(outcomes: Sequence[Outcome]) -> str:
    """What ran and what did not: ``N hold, M do not hold, K skipped (numpy not installed: ...; ...)``."""
    held = sum(o.status is Status.HOLDS for o in outcomes)
    failed = sum(o.status is Status.FAILS for o in outcomes)
    reasons = Counter(o.detail for o in outcomes if o.status is Status.SKIPPED)
    line = f"{held} hold, {failed} do not hold, {sum(reasons.values())} skipped"
    if reasons:
        line += " (" + "; ".join(f"{reason}: {count}" for reason, count in sorted(reasons.items())) + ")"
    return line


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the selected claims; 0 when every claim that ran holds, 1 when one does not, 2 without torch.

    A claim whose device or declared module (numpy) is missing does not run: it is reported as skipped
    with the reason and counts neither way."""
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    if not torch_available():
        print("torchcopy-lint verify needs torch, which is not installed here "
              "(pip install 'torchcopy-lint[verify]'). Linting itself does not need torch.", file=sys.stderr)
        return EXIT_NO_TORCH

    import torch

    from .claims import CLAIMS

    claims = _select(CLAIMS, args)
    if not claims:
        print("no claim matches the selection", file=sys.stderr)
        return 1
    outcomes = run_claims(claims)
    failures = [o for o in outcomes if o.status is Status.FAILS]
    if args.json:
        print(_as_json(outcomes, torch.__version__))
    else:
        cuda = "available" if "cuda" in available_devices() else "not available"
        print(f"torch {torch.__version__} (CUDA {cuda}): {len(claims)} claims\n")
        print(_render_table(outcomes, ALL_DEVICES))
        for failure in failures:
            print(f"\n{failure.claim.id} on {failure.device} DOES NOT HOLD: {failure.detail}")
        print(f"\n{summary(outcomes)}")
        if any(o.status is Status.SKIPPED and o.detail.endswith(NOT_INSTALLED) for o in outcomes):
            print("Skipped claims were not checked: pip install 'torchcopy-lint[verify]' installs torch and numpy.")
    return 1 if failures else 0
