"""The claim registry is well-formed: what the verify table and docs/myths.md rely on."""

import re
import subprocess
import sys

from torchcopy_lint.codes import RULE_CODES
from torchcopy_lint.verify.claims import CLAIMS
from torchcopy_lint.verify.core import ALL_DEVICES

KNOWN_TAGS = {"hazard", "fix", "fix-caveat", "near-miss", "myth", "timing"}
RULES = {*RULE_CODES, "general"}


def test_claim_ids_are_unique_and_prefixed_by_their_rule():
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))
    for c in CLAIMS:
        assert c.rule in RULES, c.id
        assert c.id.startswith(c.rule + "-"), c.id
        assert re.fullmatch(r"[A-Za-z0-9-]+", c.id), c.id


def test_claims_are_one_line_with_known_tags_and_devices():
    for c in CLAIMS:
        assert c.statement and "\n" not in c.statement, c.id
        assert c.tags and c.tags <= KNOWN_TAGS, c.id
        assert c.devices and set(c.devices) <= set(ALL_DEVICES), c.id


def test_every_rule_has_a_hazard_claim():
    for rule in RULES - {"general"}:
        assert any(c.rule == rule and "hazard" in c.tags for c in CLAIMS), rule


def test_listing_claims_does_not_import_torch():
    code = "import sys, torchcopy_lint.verify.claims; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
