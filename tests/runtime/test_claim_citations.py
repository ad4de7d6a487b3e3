"""Docs cite claims by id: every cited id must exist, and every claim must be cited where it belongs.

Keeps docs/rules/TCL10x.md and docs/myths.md from drifting away from the registry they quote.
"""

import re
from pathlib import Path

import pytest

from torchcopy_lint.verify.claims import CLAIMS

DOCS = Path(__file__).resolve().parents[2] / "docs"
CLAIM_ID = re.compile(r"`((?:TCL1\d\d|general)-[a-z0-9-]+)`")
PROOF_ROW = re.compile(r"^\| `(?P<id>[^`]+)` \| (?P<devices>[a-z, ]+) \| `(?P<test>[^`]+)` \|$", re.MULTILINE)
RULES = sorted({c.rule for c in CLAIMS} - {"general"})
BY_ID = {c.id: c for c in CLAIMS}


def _cited(path: Path) -> set:
    return set(CLAIM_ID.findall(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", [*(f"rules/{rule}.md" for rule in RULES), "myths.md"])
def test_every_cited_claim_exists(page):
    unknown = _cited(DOCS / page) - BY_ID.keys()
    assert not unknown, f"{page} cites claims that are not in the registry: {sorted(unknown)}"


@pytest.mark.parametrize("rule", RULES)
def test_rule_page_proof_table_lists_exactly_its_claims(rule):
    text = (DOCS / "rules" / f"{rule}.md").read_text(encoding="utf-8")
    rows = {m["id"]: m for m in PROOF_ROW.finditer(text)}
    assert rows.keys() == {c.id for c in CLAIMS if c.rule == rule}
    for claim_id, row in rows.items():
        claim = BY_ID[claim_id]
        assert row["devices"] == ", ".join(claim.devices), claim_id
        assert row["test"] == f"tests/runtime/test_claims.py::test_claim_holds[{claim_id}-{claim.devices[0]}]"


@pytest.mark.parametrize("rule", RULES)
def test_rule_page_cites_each_claim_in_its_prose(rule):
    text = (DOCS / "rules" / f"{rule}.md").read_text(encoding="utf-8")
    prose = text.split("## Proof")[0]
    missing = {c.id for c in CLAIMS if c.rule == rule} - set(CLAIM_ID.findall(prose))
    assert not missing, f"{rule}.md has claims only in its proof table: {sorted(missing)}"


def test_myths_page_covers_every_myth_claim():
    missing = {c.id for c in CLAIMS if "myth" in c.tags} - _cited(DOCS / "myths.md")
    assert not missing, f"docs/myths.md does not cite: {sorted(missing)}"


def _scope(subset, claims) -> str:
    """Which of a rule's claims ``subset`` is: '' for all of them, one claim by id, else a count."""
    if len(subset) == len(claims):
        return ""
    return f"`{subset[0].id}` only" if len(subset) == 1 else f"{len(subset)} of {len(claims)} claims"


def verified_line(claims) -> str:
    """The line a rule page states where its claims were verified, derived from their devices and
    prerequisites: CPU by ``verify`` here; CUDA never on the project's CI machines, which have no GPU."""
    on_cpu, on_cuda = ([c for c in claims if device in c.devices] for device in ("cpu", "cuda"))
    parts = []
    if on_cpu:
        scope = _scope(on_cpu, claims)
        parts.append(f"CPU{f' ({scope})' if scope else ''} by `torchcopy-lint verify`")
    if on_cuda:
        scope = _scope(on_cuda, claims)
        parts.append(f"CUDA{f' ({scope})' if scope else ''}: checked by `verify` when a GPU is present "
                     "(not verified on the project's CI machines, which have none)")
    else:
        parts.append("no claim has a CUDA variant")
    for module in sorted({m for c in claims for m in c.requires}):
        users = [c for c in claims if module in c.requires]
        parts.append(f"{module} needed by {_scope(users, claims) or 'every claim'} (reported as skipped without it)")
    return "Verified: " + "; ".join(parts) + "."


@pytest.mark.parametrize("rule", RULES)
def test_rule_page_says_on_which_devices_its_claims_were_verified(rule):
    text = (DOCS / "rules" / f"{rule}.md").read_text(encoding="utf-8")
    stated = [line for line in text.split("## Proof")[1].splitlines() if line.startswith("Verified")]
    assert stated == [verified_line([c for c in CLAIMS if c.rule == rule])]
