#!/usr/bin/env python
"""What reaches LibCST, and which rule keeps it there: the text the engine hands LibCST's parser.

For every ``.py`` file under the given directories (default: the installed torch's sources, as speed.py
lints them) that passes the text prefilter, builds the structural plan and prunes as the engine does, and
reports how many files pass the prefilter, how many reach LibCST, the non-blank bytes and the lines handed to
LibCST (all rules together), and per rule the non-blank bytes pruning would keep for that rule alone (a rule that
keeps much is where a finer shape or trigger pays). In-process, one core; torch is never imported::

    python benchmarks/libcst_share.py
    python benchmarks/libcst_share.py ~/.cache/torchcopy-lint/corpus/transformers-5.23.0 --select ALL
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchcopy_lint.codes import DEFAULT_CODES, RULE_CODES, active_codes  # noqa: E402
from torchcopy_lint.rulepass.parsing import _segment_matcher  # noqa: E402
from torchcopy_lint.parse.prune import prune_file  # noqa: E402
from torchcopy_lint.rules import RULES_BY_CODE  # noqa: E402
from torchcopy_lint.plan.structure import plan  # noqa: E402

_SPACE = re.compile(rb"\s")


def _non_blank(text: bytes) -> int:
    return len(_SPACE.sub(b"", text))


def _torch_sources() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed here: give a directory")
    return Path(list(spec.submodule_search_locations)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="*", type=Path, help="directories (default: the installed torch)")
    parser.add_argument("--select", default="", help="ALL for every rule, or codes separated by commas "
                        "(default: the default rules)")
    args = parser.parse_args()
    codes = frozenset(RULE_CODES if args.select == "ALL" else args.select.split(",") if args.select
                      else DEFAULT_CODES)
    roots = args.roots or [_torch_sources()]
    passing = reaching = kept_all = total = lines_all = lines = 0
    per_rule: collections.Counter = collections.Counter()
    for path in sorted(p for root in roots for p in root.rglob("*.py")):
        source = path.read_bytes()
        active = active_codes(source, codes)
        if not active:
            continue
        passing += 1
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found = plan(tree, source, active)
        if not found.codes:
            continue
        reaching += 1
        total += _non_blank(source)
        lines += source.count(b"\n")
        rules = [RULES_BY_CODE[c] for c in sorted(found.codes)]
        pruned = prune_file(source, _segment_matcher(rules, found), tree, found.dropped)
        kept_all += _non_blank(pruned.text if pruned is not None else source)
        lines_all += (pruned.text if pruned is not None else source).count(b"\n")
        for rule in rules:
            alone = prune_file(source, _segment_matcher([rule], found), tree, found.dropped)
            per_rule[rule.code] += _non_blank(alone.text if alone is not None else source)
    print(f"{passing} files pass the text prefilter, {reaching} reach LibCST; non-blank bytes of those files "
          f"{total:,}, handed to LibCST {kept_all:,} (approximate: every rule's own pruning, not the engine's "
          f"extra keeps for aliases, TCL109 and the callers of .data writers); lines {lines:,}, handed to LibCST "
          f"{lines_all:,} (a blanked span's inner lines are cut out)")
    for code, kept in per_rule.most_common():
        print(f"  {code}: {kept:,} non-blank bytes kept when pruning for it alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
