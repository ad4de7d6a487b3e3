#!/usr/bin/env python
"""The structural prefilter (structure.py) changes nothing: every file, linted with it and without it.

For each ``.py`` file under the given directories (default: the whole corpus) that passes the text
prefilter, lints it in-process as the CLI does (pruned) with and without the structural prefilter
and compares the diagnostics (fixes included); prints the differences, the CPU time of each path and
how many files reached LibCST with it. Exit status 1 when any file differs.

    python benchmarks/structure_check.py                           # the whole corpus
    python benchmarks/structure_check.py ~/.cache/torchcopy-lint/corpus/torch-2.13.0 --drop-min 0
    python benchmarks/structure_check.py --full-reference         # pruning too: against the whole file's parse
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import default_dest  # noqa: E402

from torchcopy_lint.plan import structure  # noqa: E402
from torchcopy_lint.codes import active_codes  # noqa: E402
from torchcopy_lint.engine import lint_source  # noqa: E402
from torchcopy_lint.source.precheck import cpython_tree  # noqa: E402
from torchcopy_lint.rules import RULES_BY_CODE  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="*", type=Path, help="directories (default: the corpus)")
    parser.add_argument("--drop-min", type=int, default=None, help="structure.DROP_MIN (0: drop any inert statement)")
    parser.add_argument("--unpruned", action="store_true", help="compare unpruned parses (the editor's path)")
    parser.add_argument("--full-reference", action="store_true",
                        help="compare with the full parse: without the structural prefilter and without pruning")
    args = parser.parse_args()
    if args.drop_min is not None:
        structure.DROP_MIN = args.drop_min
    roots = args.roots or [default_dest()]
    paths = sorted(p for root in roots for p in root.rglob("*.py"))
    prune = not args.unpruned
    differ = candidates = reached = findings = dropped = 0
    cpu_with = cpu_without = 0.0
    for path in paths:
        source = path.read_bytes()
        codes = active_codes(source)
        if not codes:
            continue
        candidates += 1
        rules = [RULES_BY_CODE[c] for c in sorted(codes)]
        start = time.process_time()
        without = lint_source(source, str(path), rules, prune=prune and not args.full_reference, structural=False)
        middle = time.process_time()
        with_it = lint_source(source, str(path), rules, prune=prune)
        cpu_with += time.process_time() - middle
        cpu_without += middle - start
        findings += len(with_it)
        try:
            tree = cpython_tree(source)
        except SyntaxError:
            tree = None
        plan = structure.plan(tree, source, codes) if tree is not None else None
        reached += plan is None or bool(plan.codes)
        dropped += len(plan.dropped) if plan is not None else 0
        if with_it != without:
            differ += 1
            print(f"DIFFERS {path}")
            for d in sorted(set(without) ^ set(with_it), key=lambda d: d.sort_key):
                print(f"    {'-' if d in without else '+'} {d.line}:{d.column} {d.code} {d.fix}")
    print(f"{len(paths)} files, {candidates} pass the text prefilter, {reached} reach LibCST with the structural "
          f"prefilter, {dropped} top-level statements dropped; {findings} diagnostics; {differ} files differ")
    print(f"CPU: {cpu_without:.2f} s without, {cpu_with:.2f} s with (in-process, the same files)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
