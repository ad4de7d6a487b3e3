"""No module of the package grows past 400 lines, and engine.py stays a thin seam (issue 19)."""

from __future__ import annotations

from _support import ROOT

LIMIT = 400


def _lines(path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def test_no_module_over_the_limit():
    sizes = {str(p.relative_to(ROOT)): _lines(p) for p in (ROOT / "torchcopy_lint").rglob("*.py")}
    assert len(sizes) > 50  # the whole package was read
    too_long = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not too_long, f"modules over {LIMIT} lines: {too_long}"
