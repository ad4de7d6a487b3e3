#!/usr/bin/env python
"""Every speed benchmark on torch's own sources in one run, with one table and one JSON report.

Run it with the project's virtualenv python (the one torchcopy-lint and libcst are installed in)::

    python benchmarks/bench.py --corpus subset            # torch/nn, torch/optim, torch/utils
    python benchmarks/bench.py --corpus full --skip-torchfix
    python benchmarks/bench.py --flake8-latency-only

It runs, in this order, what the single-benchmark scripts run on their own: speed.py (torchcopy-lint
cold alternating with ruff ``--select ALL``, then warm), floors.py (``ast`` and LibCST parse floors),
torchfix_compare.py (TorchFix), identical.py (same diagnostics whatever the cache and jobs) and, with
``--flake8-latency``, flake8_latency.py. The ``--skip-*`` options leave parts out. Results go to
``benchmarks/results/bench-<corpus>.json`` (or ``--json-out``).
"""
from __future__ import annotations

import argparse
import sys

import flake8_latency
import floors
import identical
import speed
import torchfix_compare
from _common import cores, print_table
from _setup import add_args, configure, corpus_of, new_report, require_linter, write_report


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                  "corpus", "linter", "torchfix", "ruff", "flake8")
    for name in ("linter", "floors", "torchfix", "ruff", "identical-check"):
        ap.add_argument(f"--skip-{name}", action="store_true")
    ap.add_argument("--flake8-latency", action="store_true",
                    help="also measure the flake8 plugin's added latency on a 1,000-line file")
    ap.add_argument("--flake8-latency-only", action="store_true")
    args = ap.parse_args(argv)
    configure(args, "bench-" + ("flake8-latency" if args.flake8_latency_only else args.corpus))
    return args


def run_corpus(args, report: dict, linter: str | None, torchfix: str | None) -> None:
    """Everything that lints the corpus, then the table and the ratios."""
    ruff = speed.prepare_ruff(args, report)
    with corpus_of(args) as (corpus, filelist):
        report["corpus"] = corpus
        results = report["results"] = speed.measure(args, linter, ruff, corpus, filelist) \
            if linter or ruff else {}
        if not args.skip_floors:
            results.update(floors.measure(args, corpus, filelist))
        if torchfix is not None:
            results.update(torchfix_compare.measure(torchfix, None, corpus["paths"], args, corpus))
    if linter and not args.skip_identical_check:
        report["identical_check"] = identical.check_identical(linter, corpus["paths"], args)
    rows = speed.rows(results, args, report) + floors.rows(results, corpus)
    if "torchfix" in results:
        rows.append(torchfix_compare.torchfix_row(results["torchfix"], args, report))
    print()
    print_table(rows)
    speed.print_footnote()
    print()
    cold = results.get("torchcopy_lint_cold")
    if "torchfix" in results:
        torchfix_compare.summary(results["torchfix"], cold, args, report)
    floors.summary(results, cold, report)
    speed.summary(results, args, report)
    if "identical_check" in report:
        identical.print_result(report["identical_check"], args.jobs or cores())


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    report = new_report(args)
    linter = None if args.skip_linter else require_linter(args, report)
    torchfix = None if args.skip_torchfix else torchfix_compare.prepare_torchfix(args, report)
    if not args.flake8_latency_only:
        run_corpus(args, report, linter, torchfix)
    if args.flake8_latency or args.flake8_latency_only:
        args.skip_linter = linter is None
        tf_venv = args.torchfix_venv if torchfix is not None else None
        report["flake8_latency"] = flake8_latency.run_flake8_latency(args, tf_venv)
        flake8_latency.print_flake8_latency(report["flake8_latency"], args)
    write_report(args, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
