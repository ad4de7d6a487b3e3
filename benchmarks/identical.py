#!/usr/bin/env python
"""Same diagnostics whatever the cache and the number of jobs, on torch's own sources.

    python benchmarks/identical.py --corpus subset

Runs torchcopy-lint with ``--output-format json`` using ``--no-cache --jobs 1``, ``--no-cache
--jobs N``, a cold cache, a warm cache, and a warm cache with ``--jobs 1``, and compares each
output with the first, byte for byte and as an unordered set of diagnostics ("identical: yes/no";
exit status 1 when not). N is ``--jobs`` (default: the cores available).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile

from _common import cores, log, run_measured
from _setup import add_args, configure, corpus_of, new_report, require_linter, write_report


def _canonical(raw: bytes):
    """Diagnostics as a sorted list of canonical JSON strings (order-insensitive view)."""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            return sorted(text.splitlines()), None
    diags = data
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        diags = data.get("diagnostics", lists[0] if len(lists) == 1 else data)
    if isinstance(diags, list):
        return sorted(json.dumps(d, sort_keys=True) for d in diags), len(diags)
    return [json.dumps(diags, sort_keys=True)], None


def check_identical(linter: str, paths: list[str], args) -> dict:
    """Same diagnostics from --no-cache vs cache (cold and warm), and --jobs 1 vs --jobs N."""
    jobs = str(args.jobs or cores())
    outs: dict[str, dict] = {}
    d = tempfile.mkdtemp(prefix="tcl-bench-ident-")
    specs = [
        ("no-cache, jobs 1", ["--no-cache", "--jobs", "1"]),
        (f"no-cache, jobs {jobs}", ["--no-cache", "--jobs", jobs]),
        (f"cache cold, jobs {jobs}", ["--cache-dir", d, "--jobs", jobs]),
        (f"cache warm, jobs {jobs}", ["--cache-dir", d, "--jobs", jobs]),
        ("cache warm, jobs 1", ["--cache-dir", d, "--jobs", "1"]),
    ]
    try:
        for name, extra in specs:
            r = run_measured([linter, "--output-format", "json", *extra, *paths],
                             timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir(), keep_output=True)
            log(f"  identical-check run '{name}': {r['wall_s']:.2f} s (rc {r['rc']})")
            outs[name] = r
    finally:
        shutil.rmtree(d, ignore_errors=True)

    ref_name = specs[0][0]
    ref = outs[ref_name]
    ref_canon, ref_n = _canonical(ref["_stdout"])
    result: dict = {
        "reference": ref_name,
        "diagnostics": ref_n,
        "runs": {},
    }
    all_same = True
    for name, _ in specs:
        r = outs[name]
        canon, n = _canonical(r["_stdout"])
        ok_rc = r["rc"] in (0, 1) and not r["timed_out"]
        same_bytes = r["_stdout"] == ref["_stdout"]
        same_set = canon == ref_canon
        entry = {
            "wall_s": r["wall_s"], "rc": r["rc"], "diagnostics": n,
            "stdout_bytes": r["stdout_bytes"], "byte_identical": same_bytes,
            "identical_ignoring_order": same_set,
            "peak_rss_sum_bytes": r["peak_rss_sum_bytes"],
        }
        if not ok_rc:
            entry["stderr_tail"] = r["stderr_tail"]
        if not same_set:
            only_a = sorted(set(ref_canon) - set(canon))[:5]
            only_b = sorted(set(canon) - set(ref_canon))[:5]
            entry["examples_only_in_reference"] = only_a
            entry["examples_only_in_this"] = only_b
        result["runs"][name] = entry
        all_same &= ok_rc and same_set
    keys = [n for n, _ in specs]
    result["jobs_1_vs_jobs_n"] = (result["runs"][keys[1]]["identical_ignoring_order"]
                                  and result["runs"][keys[1]]["byte_identical"])
    result["cached_vs_no_cache"] = all(
        result["runs"][k]["identical_ignoring_order"] and result["runs"][k]["byte_identical"]
        for k in keys[2:]
    )
    result["identical"] = all_same and result["jobs_1_vs_jobs_n"] and result["cached_vs_no_cache"]
    return result


def print_result(ic: dict, jobs: int) -> None:
    print()
    print(f"identical diagnostics ({ic['diagnostics']} diagnostics in "
          f"'{ic['reference']}'): {'yes' if ic['identical'] else 'no'}")
    print(f"  --jobs 1 vs --jobs {jobs} (no cache): {'yes' if ic['jobs_1_vs_jobs_n'] else 'no'}")
    print(f"  cached (cold write, warm read, warm --jobs 1) vs --no-cache: "
          f"{'yes' if ic['cached_vs_no_cache'] else 'no'}")
    for name, e in ic["runs"].items():
        print(f"    {name:24s} {e['wall_s']:7.2f} s  rc {e['rc']}  "
              f"diags {e['diagnostics']}  bytes-identical {'yes' if e['byte_identical'] else 'no'}"
              f"  same-set {'yes' if e['identical_ignoring_order'] else 'no'}")


def main(argv: list[str] | None = None) -> int:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), "corpus", "linter")
    args = ap.parse_args(argv)
    args.repeats = 1  # each configuration runs once
    configure(args, f"identical-{args.corpus}")
    report = new_report(args)
    linter = require_linter(args, report)
    if linter is None:
        return 2
    with corpus_of(args) as (corpus, _):
        report["corpus"] = corpus
        log("identical-diagnostics check ...")
        report["identical_check"] = check_identical(linter, corpus["paths"], args)
    print_result(report["identical_check"], args.jobs or cores())
    write_report(args, report)
    return 0 if report["identical_check"]["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
