"""The engine's targeted positions equal LibCST's PositionProvider for every reported node."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchcopy_lint.engine import parse
from torchcopy_lint.parse.positions import positions_in_statements, positions_of
from torchcopy_lint.rules import ALL_RULES

from _support import ROOT, fixture_inputs


_statement_path_used = []


def _check(source: bytes) -> int:
    parsed = parse(source, ALL_RULES)
    if parsed is None or not parsed.violations:
        return 0
    targets = [v.node for v in parsed.violations] + [v.fix.target for v in parsed.violations if v.fix]
    holders = [v.holder for v in parsed.violations] + [v.holder for v in parsed.violations if v.fix]
    reference = MetadataWrapper(parsed.module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = positions_of(parsed.module, targets)
    for node in targets:
        assert ours[id(node)] == reference[node], cst.Module([]).code_for_node(node)
    # the engine's fast path, which generates only the top-level statements holding a target
    local = None
    if parsed.starts is not None and all(h is not None for h in holders):
        local = positions_in_statements(parsed.module, targets, holders, parsed.starts)
    _statement_path_used.append(local is not None)
    for node in targets:
        if local is not None:
            assert local[id(node)] == reference[node], cst.Module([]).code_for_node(node)
        assert parsed.position(node) == reference[node]
    return len(targets)


def test_statement_starts_pair_decorated_and_semicolon_statements():
    source = (b"# header\n\nimport torch\na = 1; b = 2\n\n# lead\n@deco\n\n@other(\n  1)\ndef f(x):\n"
              b"    return torch.tensor(x.clone().detach())\n\n\nclass C:\n    y = x.clone().detach()\n")
    assert _check(source) >= 2
    assert _statement_path_used[-1]


def test_fixtures_and_examples():
    paths = fixture_inputs() + sorted((ROOT / "examples").glob("*.py"))
    del _statement_path_used[:]
    assert sum(_check(p.read_bytes()) for p in paths) > 40
    assert sum(_statement_path_used) > len(_statement_path_used) / 2, "the statement-local path is hardly used"


def test_statements_with_hoisted_positions():
    """Compound statements take their start/end from children: the hoisting path works too."""
    source = "if x:\n    y = 1\nelse:\n    z = 2\n"
    module = cst.parse_module(source)
    statement = module.body[0]
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert positions_of(module, [statement])[id(statement)] == reference[statement]


TORCH = importlib.util.find_spec("torch")


@pytest.mark.skipif(TORCH is None, reason="torch is not installed: no real-world sources to compare on")
def test_torch_sources():
    base = Path(TORCH.submodule_search_locations[0])
    paths = sorted(p for sub in ("nn", "optim", "ao") for p in (base / sub).rglob("*.py"))
    del _statement_path_used[:]
    assert sum(_check(p.read_bytes()) for p in paths) > 10
    assert sum(_statement_path_used) > len(_statement_path_used) / 2, "the statement-local path is hardly used"
