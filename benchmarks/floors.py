#!/usr/bin/env python
"""Parse floors on torch's sources: ``ast.parse`` and ``libcst.parse_module`` of every file, serially.

Each floor is one subprocess that reads every file of the corpus and parses it (``--repeats``
times); the libcst floor divided by the cores available is the "parallel floor", the ideal a
linter that parsed every file with LibCST could reach. torchcopy-lint parses only the files its
prefilter passes, which is why it can finish below the libcst floor::

    python benchmarks/floors.py --corpus subset
"""
from __future__ import annotations

import argparse
import json
import sys

from _common import cores, fmt_rate, fmt_s, log, print_table, ratio, row, run_measured, summarize
from _setup import add_args, configure, corpus_of, new_report, write_report

FLOOR = r"""
import json, sys, time
t0 = time.perf_counter()
import {module}
imp = time.perf_counter() - t0
files = open(sys.argv[1]).read().splitlines()
t = time.perf_counter(); errors = []
for f in files:
    with open(f, "rb") as fh:
        src = fh.read()
    try:
        {parse}
    except Exception as e:
        errors.append(f + ": " + {error})
print(json.dumps({{"parse_s": time.perf_counter() - t, "import_s": imp, "files": len(files),
                  "errors": errors, "version": getattr({module}, "__version__", None)}}))
"""
AST_FLOOR = FLOOR.format(module="ast", parse="ast.parse(src, f)", error="str(e)")
LIBCST_FLOOR = FLOOR.format(module="libcst", parse="libcst.parse_module(src)", error="type(e).__name__")


def run_floor(name: str, src: str, filelist: str, args, corpus: dict) -> dict:
    runs = []
    for i in range(args.repeats):
        r = run_measured([sys.executable, "-c", src, filelist], rss_interval=args.rss_interval,
                         keep_output=True)
        try:
            r["inner"] = json.loads(r.pop("_stdout").decode())
        except ValueError:
            r["inner"] = None
        r.pop("_stderr", None)
        runs.append(r)
        log(f"  {name} #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
    s = summarize(runs, corpus)
    inner = runs[-1].get("inner") or {}
    s["parse_errors"] = inner.get("errors")
    return s


def measure(args, corpus: dict, filelist: str) -> dict:
    """``{"ast_floor": ..., "libcst_floor": ...}``, the libcst one with its ``parallel_floor_s``."""
    log("ast.parse floor ...")
    af = run_floor("ast floor", AST_FLOOR, filelist, args, corpus)
    log("libcst.parse_module floor ...")
    lf = run_floor("libcst floor", LIBCST_FLOOR, filelist, args, corpus)
    if "wall_s_median" in lf:
        lf["parallel_floor_s"] = lf["wall_s_median"] / cores()
    return {"ast_floor": af, "libcst_floor": lf}


def rows(results: dict, corpus: dict) -> list[list[str]]:
    out = []
    af, lf = results.get("ast_floor"), results.get("libcst_floor")
    if af:
        n_err = len(af.get("parse_errors") or [])
        out.append(row("ast.parse floor (serial)", af, f"{n_err} SyntaxError" if n_err else ""))
    if lf:
        n_err = len(lf.get("parse_errors") or [])
        out.append(row("libcst parse floor (serial)", lf, f"{n_err} ParserSyntaxError" if n_err else ""))
        par = lf.get("parallel_floor_s")
        if par:
            out.append([f"libcst parallel floor (/{cores()})", fmt_s(par), "-",
                        fmt_rate(corpus["files"] / par), fmt_rate(corpus["lines"] / par),
                        "-", "-", "-", "-", "ideal: serial / cores"])
    return out


def summary(results: dict, cold: dict | None, report: dict) -> None:
    """torchcopy-lint cold over each floor (into ``report["ratios"]`` too)."""
    af, lf = results.get("ast_floor"), results.get("libcst_floor")
    ratios = report.setdefault("ratios", {})
    for key, label, value in (
            ("tcl_cold_over_ast_floor", "ast floor", ratio(cold, af)),
            ("tcl_cold_over_libcst_floor", "libcst floor (serial)", ratio(cold, lf)),
            ("tcl_cold_over_libcst_parallel_floor", "libcst parallel floor", ratio(cold, lf, "parallel_floor_s"))):
        ratios[key] = value
        if value is not None:
            print(f"  torchcopy-lint cold / {label}: {value:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), "corpus")
    args = ap.parse_args(argv)
    configure(args, f"floors-{args.corpus}")
    report = new_report(args)
    with corpus_of(args) as (corpus, filelist):
        report["corpus"] = corpus
        report["results"] = measure(args, corpus, filelist)
    print()
    print_table(rows(report["results"], corpus))
    write_report(args, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
