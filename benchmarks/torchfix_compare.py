#!/usr/bin/env python
"""TorchFix against torchcopy-lint cold on torch's own sources, in the same run.

    python benchmarks/torchfix_compare.py --corpus subset      # issue 19: >= 40x faster than TorchFix

``torchfix --select ALL --jobs N PATHS`` (no ``--fix``: it only reports; ``--select ALL`` turns on
the rules disabled by default, TOR3/TOR4/TOR9), each repeat alternating with a cold torchcopy-lint
run (``--skip-linter``: TorchFix alone). TorchFix 0.7.0 pins ``libcst<1.6``, so it lives in its own
virtualenv (``--torchfix-venv``, default ``~/.cache/torchcopy-lint-bench/torchfix-venv``, created
with ``pip install torchfix`` on first use). A run over ``--torchfix-timeout`` is killed and not
repeated.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile

from _common import cores, fmt_s, log, MiB, print_table, ratio, row, run_measured, summarize
from _setup import (add_args, configure, corpus_of, ensure_venv_tool, jobs_label, new_report, require_linter,
                    tool_versions, write_report)
from speed import LINTER_OK, linter_cold, print_footnote

TORCHFIX_DIAG = re.compile(rb":\d+:\d+: TOR\d+")


def prepare_torchfix(args, report: dict) -> str | None:
    """The TorchFix executable (installed on first use), or None with the reason in the report."""
    try:
        exe = ensure_venv_tool(args.torchfix_venv, "torchfix", "torchfix")
        report["meta"]["torchfix_env"] = tool_versions(args.torchfix_venv, ("torchfix", "libcst", "flake8"))
        return exe
    except (subprocess.CalledProcessError, OSError) as e:
        log(f"TorchFix unavailable: {e}")
        report["meta"]["torchfix_error"] = str(e)
        return None


def torchfix_run(exe: str, paths: list[str], args, i: int) -> dict:
    cmd = [exe, "--select", "ALL", "--jobs", str(args.jobs or cores()), *paths]
    r = run_measured(cmd, timeout=args.torchfix_timeout, rss_interval=args.rss_interval,
                     cwd=tempfile.gettempdir(), keep_output=True)
    out, err = r.pop("_stdout"), r.pop("_stderr")
    r["diagnostics"] = len(TORCHFIX_DIAG.findall(out))
    m = re.search(rb"Finished checking (\d+) files", err)
    r["files_checked"] = int(m.group(1)) if m else None
    r["command"] = cmd
    if r["timed_out"]:
        log(f"  torchfix #{i + 1}: did not finish in {args.torchfix_timeout:g} s")
    else:
        log(f"  torchfix #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']}, "
            f"{r['diagnostics']} diagnostics, {r['files_checked']} files checked)")
    return r


def measure(exe: str, linter: str | None, paths: list[str], args, corpus: dict) -> dict:
    """TorchFix (and, with ``linter``, torchcopy-lint cold before each of its runs)."""
    along = ", alternating with torchcopy-lint cold" if linter else ""
    log(f"TorchFix (timeout {args.torchfix_timeout:g} s){along} ...")
    tf_runs, tcl_runs = [], []
    for i in range(args.repeats):
        if linter:
            r = linter_cold(linter, paths, args)
            tcl_runs.append(r)
            log(f"  torchcopy-lint cold #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
        if not (tf_runs and tf_runs[-1]["timed_out"]):
            tf_runs.append(torchfix_run(exe, paths, args, i))
    # rc 1 = some files failed to parse/transform; the run still completed.
    s = summarize(tf_runs, corpus, ok_rcs=(0, 1))
    s["timed_out"] = any(r["timed_out"] for r in tf_runs)
    results = {"torchfix": s}
    if linter:
        results["torchcopy_lint_cold"] = summarize(tcl_runs, corpus, LINTER_OK)
    return results


def torchfix_row(tf: dict, args, report: dict) -> list[str]:
    version = (report["meta"].get("torchfix_env") or {}).get("torchfix")
    name = f"TorchFix {version} (--jobs {args.jobs or cores()})"
    r0 = tf["runs"][0]
    if tf.get("timed_out"):
        return [name, f"> {args.torchfix_timeout:g}", "-", "-", "-",
                fmt_s(max(r0["cpu_user_s"] + r0["cpu_sys_s"], r0["cpu_sampled_s"])),
                f"{r0['peak_rss_sum_bytes'] / MiB:,.0f}", "-", f"{r0['other_load_cores']:.2f}",
                f"did not finish in {args.torchfix_timeout:g} s"]
    return row(name, tf, f"{r0.get('diagnostics')} diags, rc {r0['rc']}")


def summary(tf: dict, cold: dict | None, args, report: dict) -> None:
    value = ratio(tf, cold)
    report.setdefault("ratios", {})["torchfix_over_tcl_cold"] = value
    if value is None and tf.get("timed_out") and cold and "wall_s_median" in cold:
        print(f"  TorchFix / torchcopy-lint cold: > {args.torchfix_timeout / cold['wall_s_median']:.1f}x "
              "(TorchFix timed out)")
    elif value is not None:
        target = f"; issue 19 target (subset, >= 40x): {'MET' if value >= 40 else 'NOT MET'}" \
            if args.corpus == "subset" else ""
        print(f"  TorchFix / torchcopy-lint cold: {value:.2f}x{target}")


def main(argv: list[str] | None = None) -> int:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), "corpus", "linter", "torchfix")
    ap.add_argument("--skip-linter", action="store_true", help="TorchFix alone")
    args = ap.parse_args(argv)
    configure(args, f"torchfix-{args.corpus}")
    report = new_report(args)
    exe = prepare_torchfix(args, report)
    if exe is None:
        return 2
    linter = None if args.skip_linter else require_linter(args, report)
    with corpus_of(args) as (corpus, _):
        report["corpus"] = corpus
        results = report["results"] = measure(exe, linter, corpus["paths"], args, corpus)
    cold = results.get("torchcopy_lint_cold")
    print()
    print_table(([row(f"torchcopy-lint cold ({jobs_label(args)})", cold, "empty cache")] if cold else [])
                + [torchfix_row(results["torchfix"], args, report)])
    print_footnote()
    print()
    summary(results["torchfix"], cold, args, report)
    write_report(args, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
