"""The claim registry is well-formed: what the verify table and docs/myths.md rely on."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

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


def test_a_check_that_uses_numpy_declares_it():
    """torch does not require numpy: verify skips a claim without numpy only where the claim says it needs it."""
    for c in CLAIMS:
        uses_numpy = re.search(r"\bnumpy\b|\bnp\.", inspect.getsource(c.check)) is not None
        assert uses_numpy == ("numpy" in c.requires), c.id


def test_the_verify_extra_installs_what_claims_require():
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^verify = \[(.*?)\]", text, re.MULTILINE | re.DOTALL).group(1)
    installed = {re.match(r"[A-Za-z0-9_.-]+", name.strip()).group(0) for name in re.findall(r'"([^"]+)"', extra)}
    assert {"torch", *(m for c in CLAIMS for m in c.requires)} <= installed, installed


def test_every_rule_has_a_hazard_claim():
    for rule in RULES - {"general"}:
        assert any(c.rule == rule and "hazard" in c.tags for c in CLAIMS), rule


def test_listing_claims_does_not_import_torch():
    code = "import sys, torchcopy_lint.verify.claims; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
