#!/usr/bin/env python
"""Editor latency of the flake8 plugin: the time it adds to a flake8 run on a 1,000-line file.

    python benchmarks/flake8_latency.py            # torchcopy-lint's plugin (and TorchFix's, if its venv exists)

The file is _latency_file.py's deterministic training script. The script times
``flake8 --select TCL,E,F,W`` against ``flake8 --select E,F,W`` with the plugin *disabled*:
selecting only ``E,F,W`` is not enough, because flake8 loads and runs every installed plugin
whatever ``--select`` says, so both commands run through a small driver, in the same interpreter,
that removes the plugin's distribution from flake8's plugin discovery. The runs are interleaved,
``--flake8-runs`` times each. Also: the plugin's import time and its check time in-process on
flake8's own ``FileProcessor`` lines and tree.
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import BENCH_ENV, busy_seconds, dist_version, log, wait_for_idle
from _latency_file import make_latency_file
from _setup import (DEFAULT_TORCHFIX_VENV, LINTER_DIST, add_args, configure, count_lines, new_report,
                    write_report)

FLAKE8_DRIVER = r"""
import sys
exclude = {x for x in sys.argv[1].split(",") if x}
import flake8.plugins.finder as finder
from flake8.utils import normalize_pypi_name
_orig = finder._find_importlib_plugins
def _filtered():
    for p in _orig():
        if normalize_pypi_name(p.package) not in exclude:
            yield p
finder._find_importlib_plugins = _filtered
from flake8.main.cli import main
sys.argv = ["flake8"] + sys.argv[2:]
raise SystemExit(main())
"""

INPROCESS_PLUGIN = r"""
import json, statistics, sys, time
path, package, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
from flake8.api import legacy
from flake8.plugins import finder
from flake8.processor import FileProcessor
from flake8.utils import normalize_pypi_name
sg = legacy.get_style_guide()
app = sg._application
ours = [lp for lp in app.plugins.checkers.tree
        if normalize_pypi_name(lp.plugin.package) == normalize_pypi_name(package)]
if not ours:
    print(json.dumps({"error": "plugin not loaded as a tree checker"})); sys.exit(0)
times = []; ndiag = None
for i in range(runs + 1):
    t = time.perf_counter()
    proc = FileProcessor(path, app.options)
    tree = proc.build_ast()
    t_plug = time.perf_counter()
    diags = []
    for lp in ours:
        kwargs = proc.keyword_arguments_for(lp.parameters, {"tree": tree})
        diags.extend(lp.obj(tree=tree, **kwargs).run())
    dt = time.perf_counter() - t_plug
    ndiag = len(diags)
    times.append(dt)
print(json.dumps({"first_call_s": times[0], "median_s": statistics.median(times[1:]),
                  "min_s": min(times[1:]), "diagnostics": ndiag,
                  "codes": sorted({d[2].split()[0] for d in diags})}))
"""

IMPORT_TIME = r"""
import sys, time, json, importlib.metadata as md
group = [ep for ep in md.entry_points(group="flake8.extension") if ep.dist is not None
         and ep.dist.metadata["Name"].lower().replace("_", "-") == sys.argv[1]]
t = time.perf_counter()
for ep in group:
    ep.load()
print(json.dumps({"entry_points": [ep.name for ep in group],
                  "import_s": time.perf_counter() - t}))
"""


def _time_cmd(cmd: list[str], cwd: str) -> tuple[float, bytes, int]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, cwd=cwd, check=False, env=BENCH_ENV)
    return time.perf_counter() - t, p.stdout, p.returncode


def flake8_plugin_cost(python: str, package: str, code_prefix: str, select: str,
                       runs: int, path: Path) -> dict:
    """Added wall time of `package`'s flake8 plugin: same flake8 run with it filtered out."""
    cwd = str(path.parent)
    common = ["--isolated", str(path)]
    flake8_bin = str(Path(python).parent / "flake8")
    configs = {
        # plugin installed and loaded (what an editor runs)
        "with_plugin": [python, "-c", FLAKE8_DRIVER, "", f"--select={code_prefix},{select}",
                        *common],
        # same, but the plugin's --select code dropped: flake8 still loads and runs it
        "with_plugin_select_without_code": [python, "-c", FLAKE8_DRIVER, "",
                                            f"--select={select}", *common],
        # plugin filtered out of flake8's plugin discovery (same driver, same interpreter)
        "without_plugin": [python, "-c", FLAKE8_DRIVER, normalize(package),
                           f"--select={select}", *common],
        # sanity: the real flake8 entry point, to show the driver adds nothing
        "flake8_binary_with_plugin": [flake8_bin, f"--select={code_prefix},{select}", *common],
    }
    times: dict[str, list[float]] = {k: [] for k in configs}
    outs: dict[str, bytes] = {}
    for k, cmd in configs.items():  # warm-up (page cache, pyc)
        for _ in range(2):
            _, outs[k], _ = _time_cmd(cmd, cwd)
    other_busy = other_wall = 0.0
    for _ in range(runs):  # interleaved, so drift hits every config alike
        wait_for_idle()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        b0, s0, w0 = busy_seconds(), time.process_time(), time.perf_counter()
        for k, cmd in configs.items():
            dt, _, _ = _time_cmd(cmd, cwd)
            times[k].append(dt)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        mine = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime
                + time.process_time() - s0)
        other_busy += max(0.0, busy_seconds() - b0 - mine)
        other_wall += time.perf_counter() - w0
    med = {k: statistics.median(v) for k, v in times.items()}
    code_re = re.compile(rb": " + re.escape(code_prefix.encode()) + rb"\d+")
    res: dict = {
        "runs": runs,
        "commands": {k: [c if c != FLAKE8_DRIVER else "<driver>" for c in v]
                     for k, v in configs.items()},
        "median_ms": {k: v * 1000 for k, v in med.items()},
        "min_ms": {k: min(v) * 1000 for k, v in times.items()},
        "max_ms": {k: max(v) * 1000 for k, v in times.items()},
        "plugin_diagnostics": {k: len(code_re.findall(o)) for k, o in outs.items()},
        "added_ms": (med["with_plugin"] - med["without_plugin"]) * 1000,
        "added_ms_select_without_code": (med["with_plugin_select_without_code"]
                                         - med["without_plugin"]) * 1000,
        "other_load_cores": other_busy / other_wall if other_wall else 0.0,
    }
    p = subprocess.run([python, "-c", IMPORT_TIME, normalize(package)], capture_output=True,
                       text=True, check=False, env=BENCH_ENV)
    try:
        res["plugin_import"] = json.loads(p.stdout)
    except ValueError:
        res["plugin_import"] = {"error": p.stderr[-500:]}
    p = subprocess.run([python, "-c", INPROCESS_PLUGIN, str(path), package, str(max(runs, 10))],
                       capture_output=True, text=True, check=False, cwd=cwd, env=BENCH_ENV)
    try:
        res["in_process"] = json.loads(p.stdout)
    except ValueError:
        res["in_process"] = {"error": p.stderr[-800:]}
    return res


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run_flake8_latency(args, torchfix_venv: Path | None) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="tcl-bench-flake8-") as d:
        path = make_latency_file(Path(d))
        text = path.read_text()
        out["file"] = {"lines": count_lines(text.encode()), "bytes": len(text.encode()),
                       "clone_detach_hazards": text.count(".clone().detach()")}
        if dist_version(LINTER_DIST) and not args.skip_linter:
            log("flake8 latency: torchcopy-lint plugin ...")
            out["torchcopy_lint"] = flake8_plugin_cost(
                sys.executable, LINTER_DIST, "TCL", "E,F,W", args.flake8_runs, path)
        else:
            out["torchcopy_lint"] = {"skipped": "torchcopy-lint not installed / --skip-linter"}
        if torchfix_venv is not None:
            log("flake8 latency: TorchFix plugin (for comparison) ...")
            out["torchfix"] = flake8_plugin_cost(
                str(torchfix_venv / "bin" / "python"), "torchfix", "TOR", "E,F,W",
                args.flake8_runs, path)
    return out


def print_flake8_latency(fl8: dict, args) -> None:
    print()
    print(f"flake8 latency on a {fl8['file']['lines']}-line file "
          f"(median of {args.flake8_runs} runs each, interleaved):")
    for key, label, code in (("torchcopy_lint", "torchcopy-lint", "TCL"),
                             ("torchfix", "TorchFix", "TOR")):
        r = fl8.get(key)
        if not r:
            continue
        if "skipped" in r:
            print(f"  {label}: skipped ({r['skipped']})")
            continue
        md = r["median_ms"]
        print(f"  {label}: flake8 --select {code},E,F,W {md['with_plugin']:.0f} ms vs "
              f"plugin disabled --select E,F,W {md['without_plugin']:.0f} ms -> "
              f"added {r['added_ms']:+.0f} ms"
              + (f" (target <= 100 ms: {'MET' if r['added_ms'] <= 100 else 'NOT MET'})"
                 if key == "torchcopy_lint" else ""))
        print(f"    plugin still loaded, --select E,F,W: {md['with_plugin_select_without_code']:.0f}"
              f" ms (added {r['added_ms_select_without_code']:+.0f} ms); real flake8 binary"
              f" with plugin: {md['flake8_binary_with_plugin']:.0f} ms;"
              f" {code} diagnostics: {r['plugin_diagnostics']['with_plugin']};"
              f" other load {r['other_load_cores']:.2f} cores")
        imp = r.get("plugin_import", {})
        inp = r.get("in_process", {})
        if "import_s" in imp:
            print(f"    plugin import (entry point load, fresh process): "
                  f"{imp['import_s'] * 1000:.0f} ms")
        if "median_s" in inp:
            print(f"    plugin check in-process on flake8's lines: median "
                  f"{inp['median_s'] * 1000:.1f} ms (first call {inp['first_call_s'] * 1000:.1f} ms,"
                  f" {inp['diagnostics']} diagnostics)")
        elif inp:
            print(f"    in-process: {inp.get('error', '')[:300]}")


def main(argv: list[str] | None = None) -> int:
    ap = add_args(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), "flake8")
    ap.add_argument("--skip-linter", action="store_true", help="leave torchcopy-lint's plugin out")
    ap.add_argument("--torchfix-venv", type=Path, default=DEFAULT_TORCHFIX_VENV,
                    help="TorchFix's plugin is measured too when this venv exists")
    args = ap.parse_args(argv)
    configure(args, "flake8-latency")
    report = new_report(args)
    tf_venv = args.torchfix_venv if (args.torchfix_venv / "bin" / "python").exists() else None
    report["flake8_latency"] = run_flake8_latency(args, tf_venv)
    print_flake8_latency(report["flake8_latency"], args)
    write_report(args, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
