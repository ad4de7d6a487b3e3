#!/usr/bin/env python
"""torchcopy-lint cold and warm on torch's own sources, side by side with ruff ``--select ALL``.

Run it with the project's virtualenv python (the one torchcopy-lint and libcst are installed in)::

    python benchmarks/speed.py --corpus full                 # issue 19's figure: cold vs ruff
    python benchmarks/speed.py --corpus subset --repeats 1   # a quick check
    python benchmarks/speed.py --corpus full --skip-ruff

Cold: ``torchcopy-lint --quiet --cache-dir <new empty dir> [--jobs N] PATHS``, every rule, each
repeat alternating with ``ruff check --select ALL --no-cache --isolated --extend-exclude '*.pyi'
--output-format concise PATHS`` (the same 2,285 files of full torch: ruff would add the 43 ``.pyi``
stubs; ruff pinned, ``--ruff-version``, in its own virtualenv), so drift in the machine's load
hits both alike; the ratio of the medians is printed. Warm: the same command after one untimed
run filled the cache dir. Also printed: how many files pass torchcopy-lint's text prefilter.

``--floor`` adds the findings-only floor: torchcopy-lint cold on *only* the files that hold a finding
(those one JSON run reports), alternating with ruff on all the files. It is what a perfect, free
prefilter would leave (every other file skipped at no cost): the least a linter whose rules run on
LibCST must spend. Where it is over ruff's whole run, no prefilter can bring the full run to ruff.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import BENCH_ENV, MiB, log, print_table, ratio, row, run_measured, summarize
from _setup import (add_args, configure, corpus_of, ensure_venv_tool, jobs_flag, jobs_label, new_report,
                    require_linter, tool_versions, write_report)

#: The semantic-model issue's bound on a full, cold run of torch's sources on 2 cores (seconds).
COLD_TARGET_S = 15.0
LINTER_OK = (0, 1)
RUFF_DIAG = re.compile(rb"^.+:\d+:\d+: ", re.M)

PREFILTER_STATS = r"""
import json, sys
from torchcopy_lint.rules import ALL_RULES
files = open(sys.argv[1]).read().splitlines()
n = 0
for f in files:
    with open(f, "rb") as fh:
        src = fh.read()
    n += any(r.may_match(src) for r in ALL_RULES)
print(json.dumps({"files": len(files), "files_passing_prefilter": n}))
"""


def prefilter_stats(filelist: str) -> dict:
    """Best effort (uses linter internals): how many files survive the regex prefilter."""
    p = subprocess.run([sys.executable, "-c", PREFILTER_STATS, filelist], capture_output=True,
                       text=True, check=False, env=BENCH_ENV)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stderr[-300:]}


def ruff_command(ruff: str, paths: list[str]) -> list[str]:
    """Every rule, no cache, no configuration file, the same files as torchcopy-lint (no ``.pyi``)."""
    return [ruff, "check", "--select", "ALL", "--no-cache", "--isolated", "--extend-exclude", "*.pyi",
            "--output-format", "concise", *paths]


def select_flag(args) -> list[str]:
    """``--select CODES`` when the run names the rules (issue 17 measures TCL101-TCL115), else the defaults."""
    select = getattr(args, "select", None)  # bench.py and torchfix_compare.py reuse linter_cold without it
    return ["--select", select] if select else []


def linter_cold(linter: str, paths: list[str], args) -> dict:
    """One cold run: a fresh, empty cache dir."""
    d = tempfile.mkdtemp(prefix="tcl-bench-cold-")
    try:
        return run_measured([linter, "--quiet", "--cache-dir", d, *jobs_flag(args), *select_flag(args), *paths],
                            timeout=args.linter_timeout, rss_interval=args.rss_interval,
                            cwd=tempfile.gettempdir())
    finally:
        shutil.rmtree(d, ignore_errors=True)


def ruff_run(ruff: str, paths: list[str], args) -> dict:
    r = run_measured(ruff_command(ruff, paths), timeout=args.ruff_timeout, rss_interval=args.rss_interval,
                     cwd=tempfile.gettempdir(), keep_output=True)
    out = r.pop("_stdout")
    r.pop("_stderr")
    r["diagnostics"] = len(RUFF_DIAG.findall(out))
    r["files_with_diagnostics"] = len({line.split(b":", 1)[0] for line in out.splitlines()
                                       if RUFF_DIAG.match(line)})
    return r


def measure_cold(linter: str | None, ruff: str | None, paths: list[str], args, corpus: dict,
                 warmup_file: str) -> dict:
    """torchcopy-lint cold and ruff, alternating, ``--repeats`` times each."""
    res = {}
    if linter:  # untimed warm-up: page cache, and .pyc files for an editable install
        for _ in range(2):
            run_measured([linter, "--quiet", "--no-cache", *jobs_flag(args), warmup_file],
                         timeout=args.linter_timeout, cwd=tempfile.gettempdir())
    if ruff:
        run_measured(ruff_command(ruff, [warmup_file]), timeout=args.ruff_timeout, cwd=tempfile.gettempdir())
    tcl_runs, ruff_runs = [], []
    for i in range(args.repeats):
        if linter:
            r = linter_cold(linter, paths, args)
            tcl_runs.append(r)
            log(f"  torchcopy-lint cold #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']}, "
                f"other load {r['other_load_cores']:.2f})")
        if ruff:
            r = ruff_run(ruff, paths, args)
            ruff_runs.append(r)
            log(f"  ruff --select ALL #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']}, {r['diagnostics']:,} "
                f"diagnostics, other load {r['other_load_cores']:.2f})")
    if linter:
        res["torchcopy_lint_cold"] = summarize(tcl_runs, corpus, LINTER_OK)
    if ruff:
        res["ruff"] = summarize(ruff_runs, corpus, LINTER_OK)
        res["ruff"]["command"] = ruff_command("ruff", ["PATHS"])
    return res


def measure_warm(linter: str, paths: list[str], args, corpus: dict) -> dict:
    """One untimed priming run fills a cache dir, then the repeats reuse it."""
    res = {}
    d = tempfile.mkdtemp(prefix="tcl-bench-warm-")
    try:
        cmd = [linter, "--quiet", "--cache-dir", d, *jobs_flag(args), *select_flag(args), *paths]
        prime = run_measured(cmd, timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir())
        log(f"  torchcopy-lint warm (priming): {prime['wall_s']:.2f} s (rc {prime['rc']})")
        runs = []
        for i in range(args.repeats):
            r = run_measured(cmd, timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir())
            runs.append(r)
            log(f"  torchcopy-lint warm #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
        res["torchcopy_lint_warm"] = summarize(runs, corpus, LINTER_OK)
        res["torchcopy_lint_warm"]["priming_run"] = {k: v for k, v in prime.items() if not k.startswith("_")}
        res["torchcopy_lint_cache_dir_bytes"] = sum(f.stat().st_size for f in Path(d).rglob("*") if f.is_file())
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return res


def prepare_ruff(args, report: dict) -> str | None:
    """The pinned ruff executable (installed on first use), or None with the reason in the report."""
    if args.skip_ruff:
        return None
    try:
        ruff = ensure_venv_tool(args.ruff_venv, "ruff", "ruff", args.ruff_version)
        report["meta"]["ruff_env"] = tool_versions(args.ruff_venv, ("ruff",))
        return ruff
    except (subprocess.CalledProcessError, OSError) as e:
        log(f"ruff unavailable: {e}")
        report["meta"]["ruff_error"] = str(e)
        return None


def files_with_findings(linter: str, paths: list[str], args) -> list[str]:
    """The files one cold JSON run reports a finding in (sorted)."""
    d = tempfile.mkdtemp(prefix="tcl-bench-floor-")
    try:
        p = subprocess.run([linter, "--cache-dir", d, "--output-format", "json", *jobs_flag(args),
                            *select_flag(args), *paths], capture_output=True, check=False, env=BENCH_ENV,
                           cwd=tempfile.gettempdir(), timeout=args.linter_timeout)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if p.returncode not in LINTER_OK:
        raise RuntimeError(f"torchcopy-lint exited {p.returncode}: {p.stderr[-300:]!r}")
    return sorted({d["path"] for d in json.loads(p.stdout) if d["code"].startswith("TCL1")})


def measure_floor(linter: str, ruff: str | None, paths: list[str], args, corpus: dict) -> dict:
    """torchcopy-lint cold on the files with findings only, alternating with ruff on every file."""
    found = files_with_findings(linter, paths, args)
    log(f"findings-only floor: {len(found)} files hold a finding; linting only them, alternating with ruff ...")
    tcl_runs, ruff_runs = [], []
    for i in range(args.repeats):
        r = linter_cold(linter, found, args)
        tcl_runs.append(r)
        log(f"  torchcopy-lint cold, files with findings only #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
        if ruff:
            r = ruff_run(ruff, paths, args)
            ruff_runs.append(r)
            log(f"  ruff --select ALL, all files #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
    lines = 0
    for path in found:
        with open(path, "rb") as fh:
            lines += fh.read().count(b"\n")
    res = {"torchcopy_lint_floor": summarize(tcl_runs, {"files": len(found), "lines": lines}, LINTER_OK)}
    res["torchcopy_lint_floor"]["files"] = len(found)
    if ruff:
        res["ruff_beside_floor"] = summarize(ruff_runs, corpus, LINTER_OK)
    return res


def measure(args, linter: str | None, ruff: str | None, corpus: dict, filelist: str) -> dict:
    paths = corpus["paths"]
    with open(filelist) as fh:
        first = fh.readline().strip()
    log("torchcopy-lint cold" + (" and ruff --select ALL, alternating" if ruff else "") + " ...")
    results = measure_cold(linter, ruff, paths, args, corpus, first)
    if linter:
        results.update(measure_warm(linter, paths, args, corpus))
        results["torchcopy_lint_prefilter"] = prefilter_stats(filelist)
        if args.floor:
            results.update(measure_floor(linter, ruff, paths, args, corpus))
    return results


def rows(results: dict, args, report: dict) -> list[list[str]]:
    out = []
    if "torchcopy_lint_cold" in results:
        out.append(row(f"torchcopy-lint cold ({jobs_label(args)})", results["torchcopy_lint_cold"], "empty cache"))
    if "torchcopy_lint_warm" in results:
        out.append(row(f"torchcopy-lint warm ({jobs_label(args)})", results["torchcopy_lint_warm"], "filled cache"))
    rf = results.get("ruff")
    if rf is not None:
        version = (report["meta"].get("ruff_env") or {}).get("ruff")
        r0 = rf["runs"][0] if rf["runs"] else {}
        out.append(row(f"ruff {version} --select ALL", rf, f"{r0.get('diagnostics', 0):,} diags, no cache"))
    floor = results.get("torchcopy_lint_floor")
    if floor is not None:
        out.append(row(f"torchcopy-lint cold, {floor['files']} files with findings", floor, "findings-only floor"))
    if results.get("ruff_beside_floor") is not None:
        out.append(row("ruff --select ALL (beside the floor)", results["ruff_beside_floor"], "all files"))
    return out


def summary(results: dict, args, report: dict) -> None:
    """Ratios and targets below the table (into ``report["ratios"]`` too)."""
    cold, warm, rf = (results.get(k) for k in ("torchcopy_lint_cold", "torchcopy_lint_warm", "ruff"))
    ratios = report.setdefault("ratios", {})
    ratios["tcl_cold_over_ruff"] = ratio(cold, rf)
    ratios["tcl_warm_over_cold"] = ratio(warm, cold)
    if ratios["tcl_cold_over_ruff"] is not None:
        met = ratios["tcl_cold_over_ruff"] <= 1.0
        report["target_ruff_met"] = met if args.corpus == "full" else None
        print(f"  torchcopy-lint cold / ruff --select ALL: {ratios['tcl_cold_over_ruff']:.2f}x (medians, "
              f"alternating runs)" + (f"; issue 19 target (full torch cold <= ruff): {'MET' if met else 'NOT MET'}"
                                      if args.corpus == "full" else ""))
    if cold and rf and "cpu_s_median" in cold and rf.get("cpu_s_median"):
        ratios["tcl_cold_cpu_over_ruff_cpu"] = cold["cpu_s_median"] / rf["cpu_s_median"]
        print(f"  torchcopy-lint cold / ruff, CPU time of the process trees: "
              f"{ratios['tcl_cold_cpu_over_ruff_cpu']:.2f}x (less disturbed by other load than wall time)")
    floor_ratio = ratio(results.get("torchcopy_lint_floor"), results.get("ruff_beside_floor"))
    if floor_ratio is not None:
        ratios["tcl_floor_over_ruff"] = floor_ratio
        print(f"  findings-only floor (torchcopy-lint on only the files with findings) / ruff on all files: "
              f"{floor_ratio:.2f}x" + (" -- no prefilter can bring the full run to ruff" if floor_ratio > 1 else ""))
    if ratios["tcl_warm_over_cold"] is not None:
        print(f"  torchcopy-lint warm / cold: {ratios['tcl_warm_over_cold']:.2f}x")
    if cold and "wall_s_median" in cold:
        print(f"  cache dir after a full run: {(results.get('torchcopy_lint_cache_dir_bytes') or 0) / MiB:,.2f} MiB")
        pf = results.get("torchcopy_lint_prefilter") or {}
        if "files_passing_prefilter" in pf:
            print(f"  files passing torchcopy-lint's regex prefilter (parsed at all): "
                  f"{pf['files_passing_prefilter']:,} of {pf['files']:,}")
        if args.corpus == "full":
            ok = cold["wall_s_median"] <= COLD_TARGET_S
            report["target_cold_met"] = ok
            print(f"  target (full torch, cold, <= {COLD_TARGET_S:g} s): {'MET' if ok else 'NOT MET'} "
                  f"({cold['wall_s_median']:.1f} s)")


def print_footnote() -> None:
    print("(CPU s: user+sys of the process tree; peak RSS sum: all processes of the tree, "
          "sampled; max 1-proc: ru_maxrss;\n other load: cores used by other processes "
          "during the run, max over repeats)")


def main(argv: list[str] | None = None) -> int:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), "corpus", "linter", "ruff")
    ap.add_argument("--skip-ruff", action="store_true")
    ap.add_argument("--floor", action="store_true",
                    help="also time torchcopy-lint on only the files that hold a finding (alternating with ruff)")
    ap.add_argument("--select", default=None,
                    help="rules for torchcopy-lint (its --select; default: its default rules), e.g. TCL101,...,TCL115")
    args = ap.parse_args(argv)
    configure(args, f"speed-{args.corpus}")
    report = new_report(args)
    linter = require_linter(args, report)
    ruff = prepare_ruff(args, report)
    if linter is None and ruff is None:
        return 2
    with corpus_of(args) as (corpus, filelist):
        report["corpus"] = corpus
        report["results"] = measure(args, linter, ruff, corpus, filelist)
    print()
    print_table(rows(report["results"], args, report))
    print_footnote()
    print()
    summary(report["results"], args, report)
    write_report(args, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
