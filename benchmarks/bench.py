#!/usr/bin/env python
"""Benchmark torchcopy-lint on torch's own sources, side by side with floors and TorchFix.

Run it with the project's virtualenv python (the one torchcopy-lint and libcst are
installed in)::

    python benchmarks/bench.py --corpus subset            # torch/nn, torch/optim, torch/utils
    python benchmarks/bench.py --corpus full --skip-torchfix
    python benchmarks/bench.py --flake8-latency-only

Every tool runs as its own subprocess (new session / process group), several times;
the table reports the median wall time with min/max, files/s and lines/s at the median,
the CPU time of the process tree (from wait4) and the peak RSS *summed over the whole
process tree* (sampled from /proc every --rss-interval seconds, so parallel workers
count).  All numbers go to a JSON file (default benchmarks/results/bench-<corpus>.json).

Standard library only (plus the tools it measures).  torch is located with
importlib.util.find_spec and never imported here.
"""
from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUBSET_DIRS = ("nn", "optim", "utils")
DEFAULT_TORCHFIX_VENV = Path.home() / ".cache" / "torchcopy-lint-bench" / "torchfix-venv"
LINTER_DIST = "torchcopy-lint"
PAGE = os.sysconf("SC_PAGE_SIZE")
#: The semantic-model issue's bound on a full, cold run of torch's sources on 2 cores (seconds).
COLD_TARGET_S = 15.0
MiB = 1024 * 1024
# The sandbox sets PYTHONDONTWRITEBYTECODE=1, which would make every measured process
# recompile the (editable-installed) linter on start-up; users have .pyc files, so the
# measured processes run without it (--keep-env to measure as-is).
BENCH_ENV = dict(os.environ)


# --------------------------------------------------------------------------- helpers


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_commit() -> dict:
    def git(*a: str) -> str:
        return subprocess.run(
            ["git", "-C", str(REPO), *a], capture_output=True, text=True, check=False
        ).stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


def machine_info() -> dict:
    info = {
        "cores_available": cores(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["mem_total_kib"] = int(line.split()[1])
                break
    except OSError:
        pass
    return info


def fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 100 else f"{x:.1f}"


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}"


# --------------------------------------------------------------------------- corpus


def torch_root() -> Path:
    spec = importlib.util.find_spec("torch")  # does not import torch
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed in this interpreter; use --corpus-root")
    return Path(list(spec.submodule_search_locations)[0])


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def gather_corpus(root: Path, which: str) -> dict:
    paths = [root] if which == "full" else [root / d for d in SUBSET_DIRS]
    files: list[str] = []
    for p in paths:
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames.sort()
            files.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    lines = nbytes = 0
    for f in files:  # also warms the page cache before anything is timed
        with open(f, "rb") as fh:
            data = fh.read()
        nbytes += len(data)
        lines += count_lines(data)
    return {
        "name": which,
        "root": str(root),
        "paths": [str(p) for p in paths],
        "files": len(files),
        "lines": lines,
        "bytes": nbytes,
        "file_list": files,
    }


# --------------------------------------------------------------------------- process runner

HZ = os.sysconf("SC_CLK_TCK")
IDLE = {"max_wait": 0.0, "threshold": 0.3}  # set from --idle-wait / --idle-threshold


def _busy_seconds() -> float:
    """CPU-seconds the whole machine spent busy since boot (all cores)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is included in user)
    return (sum(f[:8]) - f[3] - f[4]) / HZ


def wait_for_idle() -> float:
    """Wait (up to IDLE['max_wait'] s) until other processes use < threshold cores."""
    if IDLE["max_wait"] <= 0:
        return 0.0
    t0 = time.monotonic()
    warned = False
    while True:
        b0 = _busy_seconds()
        time.sleep(0.5)
        load = (_busy_seconds() - b0) / 0.5
        waited = time.monotonic() - t0
        if load < IDLE["threshold"] or waited >= IDLE["max_wait"]:
            if warned:
                log(f"    (waited {waited:.0f} s for the machine to go idle; load now {load:.2f} cores)")
            return waited
        if not warned:
            log(f"    machine busy ({load:.2f} cores used by other processes); waiting up to "
                f"{IDLE['max_wait']:g} s ...")
            warned = True


def _tree_pids(root_pid: int) -> list[int]:
    """root_pid and all its descendants, via /proc/<pid>/task/<tid>/children."""
    out, stack = [], [root_pid]
    while stack:
        pid = stack.pop()
        out.append(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
            except OSError:
                pass
    return out


def _tree_rss(root_pid: int, cpu: dict | None = None) -> tuple[int, int]:
    """Summed RSS of the tree and its process count; records each pid's CPU ticks in cpu."""
    total = n = 0
    for pid in _tree_pids(root_pid):
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * PAGE
                n += 1
            if cpu is not None:
                with open(f"/proc/{pid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
                cpu[pid] = int(f[11]) + int(f[12])  # utime + stime, in clock ticks
        except (OSError, IndexError, ValueError):
            pass
    return total, n


class RssSampler(threading.Thread):
    def __init__(self, pid: int, interval: float):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak = 0
        self.peak_procs = 0
        self.max_procs = 0
        self.samples = 0
        self.cpu_ticks: dict[int, int] = {}  # last seen per pid (counts killed workers too)
        self._stop_evt = threading.Event()

    def run(self) -> None:
        while not self._stop_evt.is_set():
            rss, n = _tree_rss(self.pid, self.cpu_ticks)
            self.samples += 1
            if rss > self.peak:
                self.peak, self.peak_procs = rss, n
            self.max_procs = max(self.max_procs, n)
            self._stop_evt.wait(self.interval)

    def stop(self) -> None:
        self._stop_evt.set()
        self.join()


def run_measured(
    cmd: list[str],
    *,
    timeout: float | None = None,
    rss_interval: float = 0.02,
    cwd: str | None = None,
    env: dict | None = None,
    keep_output: bool = False,
) -> dict:
    """Run cmd in its own process group; wall time, rusage of the tree, peak summed RSS."""
    idle_wait = wait_for_idle()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        busy0 = _busy_seconds()
        self0 = time.process_time()
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            cwd=cwd, env=BENCH_ENV if env is None else env, start_new_session=True,
        )
        sampler = RssSampler(proc.pid, rss_interval)
        sampler.start()
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, _kill) if timeout else None
        if timer:
            timer.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        busy = _busy_seconds() - busy0
        self_cpu = time.process_time() - self0  # this script (mostly the RSS sampler)
        if timer:
            timer.cancel()
        sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        # stray grandchildren (should not exist) are killed so they cannot skew later runs
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        # wait4's rusage misses workers that were killed (timeout) rather than reaped, so
        # the tree's CPU is the larger of it and the sampled per-process CPU ticks
        sampled_cpu = sum(sampler.cpu_ticks.values()) / HZ
        tree_cpu = max(ru.ru_utime + ru.ru_stime, sampled_cpu)
        # other_load_cores: CPU used by everything else on the machine during the run
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    res = {
        "wall_s": wall,
        "rc": proc.returncode,
        "timed_out": timed_out.is_set(),
        "cpu_user_s": ru.ru_utime,
        "cpu_sys_s": ru.ru_stime,
        "peak_rss_sum_bytes": sampler.peak,
        "procs_at_peak": sampler.peak_procs,
        "max_procs": sampler.max_procs,
        "rss_samples": sampler.samples,
        "maxrss_largest_single_bytes": ru.ru_maxrss * 1024,
        "cpu_sampled_s": sampled_cpu,
        "other_load_cores": max(0.0, busy - tree_cpu - self_cpu) / wall if wall else 0.0,
        "bench_self_cpu_s": self_cpu,
        "idle_wait_s": idle_wait,
        "stdout_bytes": len(stdout),
        "stdout_lines": stdout.count(b"\n"),
        "stderr_tail": stderr[-2000:].decode("utf-8", "replace"),
    }
    if keep_output:
        res["_stdout"] = stdout
        res["_stderr"] = stderr
    return res


def summarize(runs: list[dict], corpus: dict | None, ok_rcs=(0,)) -> dict:
    good = [r for r in runs if not r["timed_out"] and r["rc"] in ok_rcs]
    s: dict = {"runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in runs]}
    s["ok"] = bool(runs) and len(good) == len(runs)
    if not good:
        return s
    walls = [r["wall_s"] for r in good]
    s["wall_s_median"] = statistics.median(walls)
    s["wall_s_min"] = min(walls)
    s["wall_s_max"] = max(walls)
    s["cpu_s_median"] = statistics.median(r["cpu_user_s"] + r["cpu_sys_s"] for r in good)
    s["other_load_cores_max"] = max(r["other_load_cores"] for r in good)
    s["peak_rss_sum_bytes_median"] = statistics.median(r["peak_rss_sum_bytes"] for r in good)
    s["peak_rss_sum_bytes_max"] = max(r["peak_rss_sum_bytes"] for r in good)
    s["maxrss_largest_single_bytes_max"] = max(r["maxrss_largest_single_bytes"] for r in good)
    if corpus:
        s["files_per_s"] = corpus["files"] / s["wall_s_median"]
        s["lines_per_s"] = corpus["lines"] / s["wall_s_median"]
    return s


# --------------------------------------------------------------------------- floors

AST_FLOOR = r"""
import ast, json, sys, time
files = open(sys.argv[1]).read().splitlines()
t = time.perf_counter(); errors = []
for f in files:
    with open(f, "rb") as fh:
        src = fh.read()
    try:
        ast.parse(src, f)
    except SyntaxError as e:
        errors.append(f + ": " + str(e))
print(json.dumps({"parse_s": time.perf_counter() - t, "files": len(files), "errors": errors}))
"""

LIBCST_FLOOR = r"""
import json, sys, time
t0 = time.perf_counter()
import libcst
imp = time.perf_counter() - t0
files = open(sys.argv[1]).read().splitlines()
t = time.perf_counter(); errors = []
for f in files:
    with open(f, "rb") as fh:
        src = fh.read()
    try:
        libcst.parse_module(src)
    except Exception as e:
        errors.append(f + ": " + type(e).__name__)
print(json.dumps({"parse_s": time.perf_counter() - t, "import_s": imp, "files": len(files),
                  "errors": errors, "libcst": getattr(libcst, "__version__", None)}))
"""


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


# --------------------------------------------------------------------------- torchcopy-lint


def find_linter(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    cand = Path(sys.executable).parent / "torchcopy-lint"
    if cand.exists():
        return str(cand)
    return shutil.which("torchcopy-lint")


def linter_usable(linter: str | None) -> tuple[bool, str]:
    if not linter or not Path(linter).exists():
        return False, "torchcopy-lint executable not found"
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(
            [linter, "--jobs", "1", "--cache-dir", d, str(REPO / "pyproject.toml")],
            capture_output=True, text=True, check=False, timeout=120, env=BENCH_ENV,
        )
    if p.returncode in (0, 1):
        return True, ""
    return False, f"rc {p.returncode}: {(p.stderr or p.stdout).strip()[-500:]}"


def run_linter_timings(linter: str, paths: list[str], args, corpus: dict,
                       warmup_file: str) -> dict:
    ok = (0, 1)
    base = [linter, "--quiet", "--jobs", str(args.jobs)]
    res = {}
    # untimed warm-up: page cache, and .pyc files for an editable install
    for _ in range(2):
        run_measured([linter, "--quiet", "--no-cache", "--jobs", str(args.jobs), warmup_file],
                     timeout=args.linter_timeout, cwd=tempfile.gettempdir())
    # (a) cold: a fresh, empty cache dir for every repeat
    runs = []
    for i in range(args.repeats):
        d = tempfile.mkdtemp(prefix="tcl-bench-cold-")
        try:
            r = run_measured(base[:2] + ["--cache-dir", d] + base[2:] + paths,
                             timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir())
        finally:
            shutil.rmtree(d, ignore_errors=True)
        runs.append(r)
        log(f"  torchcopy-lint cold #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
    res["cold"] = summarize(runs, corpus, ok)
    # (b) warm: one untimed priming run fills the cache dir, then the repeats reuse it
    d = tempfile.mkdtemp(prefix="tcl-bench-warm-")
    try:
        cmd = base[:2] + ["--cache-dir", d] + base[2:] + paths
        prime = run_measured(cmd, timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir())
        log(f"  torchcopy-lint warm (priming): {prime['wall_s']:.2f} s (rc {prime['rc']})")
        runs = []
        for i in range(args.repeats):
            r = run_measured(cmd, timeout=args.linter_timeout, rss_interval=args.rss_interval,
                             cwd=tempfile.gettempdir())
            runs.append(r)
            log(f"  torchcopy-lint warm #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']})")
        res["warm"] = summarize(runs, corpus, ok)
        res["warm"]["priming_run"] = {k: v for k, v in prime.items() if not k.startswith("_")}
        res["cache_dir_bytes"] = sum(
            f.stat().st_size for f in Path(d).rglob("*") if f.is_file()
        )
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return res


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
    jobs = str(args.jobs)
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


# --------------------------------------------------------------------------- TorchFix


def _requires_torch(venv_pip: str) -> bool:
    """pip download torchfix --no-deps, and look at its Requires-Dist for plain torch."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([venv_pip, "download", "--no-deps", "-q", "-d", d, "torchfix"],
                       check=True, capture_output=True)
        import zipfile

        for whl in Path(d).glob("*.whl"):
            with zipfile.ZipFile(whl) as z:
                meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
                for line in z.read(meta).decode().splitlines():
                    if line.startswith("Requires-Dist:"):
                        req = line.split(":", 1)[1].strip()
                        name = re.split(r"[\s<>=!~;\[(]", req, 1)[0].lower()
                        if name == "torch" and "extra ==" not in req:
                            return True
    return False


def ensure_torchfix(venv: Path) -> str:
    exe = venv / "bin" / "torchfix"
    if exe.exists():
        return str(exe)
    log(f"creating TorchFix virtualenv at {venv}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    pip = str(venv / "bin" / "pip")
    if _requires_torch(pip):
        # Avoid pulling the multi-GB CUDA build: install the same torch as ours first.
        tv = dist_version("torch")
        log(f"torchfix requires torch: pre-installing torch=={tv} into its venv")
        subprocess.run([pip, "install", "-q", f"torch=={tv}"], check=True)
    subprocess.run([pip, "install", "-q", "torchfix"], check=True)
    return str(exe)


def torchfix_info(venv: Path) -> dict:
    py = str(venv / "bin" / "python")
    p = subprocess.run(
        [py, "-c", "import importlib.metadata as m, json; print(json.dumps("
         "{n: m.version(n) for n in ('torchfix', 'libcst', 'flake8')}))"],
        capture_output=True, text=True, check=False,
    )
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stderr[-500:]}


TORCHFIX_DIAG = re.compile(rb":\d+:\d+: TOR\d+")


def run_torchfix(exe: str, paths: list[str], args, corpus: dict) -> dict:
    # No --fix: TorchFix only reports (and prints would-be diffs); --select ALL turns on
    # the rules that are disabled by default (TOR3, TOR4, TOR9).
    cmd = [exe, "--select", "ALL", "--jobs", str(args.jobs), *paths]
    runs = []
    for i in range(args.repeats):
        r = run_measured(cmd, timeout=args.torchfix_timeout, rss_interval=args.rss_interval,
                         cwd=tempfile.gettempdir(), keep_output=True)
        out, err = r.pop("_stdout"), r.pop("_stderr")
        r["diagnostics"] = len(TORCHFIX_DIAG.findall(out))
        m = re.search(rb"Finished checking (\d+) files", err)
        r["files_checked"] = int(m.group(1)) if m else None
        runs.append(r)
        if r["timed_out"]:
            log(f"  torchfix #{i + 1}: did not finish in {args.torchfix_timeout:g} s")
            break
        log(f"  torchfix #{i + 1}: {r['wall_s']:.2f} s (rc {r['rc']}, "
            f"{r['diagnostics']} diagnostics, {r['files_checked']} files checked)")
    # rc 1 = some files failed to parse/transform; the run still completed.
    s = summarize(runs, corpus, ok_rcs=(0, 1))
    s["command"] = cmd
    s["timed_out"] = any(r["timed_out"] for r in runs)
    return s


# --------------------------------------------------------------------------- flake8 latency

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

HAZARD_BLOCKS = [
    # each block is a template; {i} is replaced by the block index
    '''

class Encoder{i}(nn.Module):
    """Small convolutional encoder number {i}."""

    def __init__(self, in_ch: int = 3, width: int = {w}) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, width, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width * 2, kernel_size=3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.register_buffer("running_scale", torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        return self.pool(x).flatten(1)
''',
    '''

def make_ema_{i}(model: nn.Module, decay: float = 0.99{i}) -> nn.Module:
    ema = copy.deepcopy(model)
    for p in ema.parameters():
        p.requires_grad_(False)
    return ema


def update_ema_{i}(ema: nn.Module, model: nn.Module, decay: float) -> None:
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.data = pe.data * decay + pm.data * (1.0 - decay)
''',
    '''

def snapshot_{i}(x: torch.Tensor) -> torch.Tensor:
    saved = x.clone().detach()
    also = torch.tensor(x)
    good = x.detach().clone()
    return saved + also + good
''',
    '''

def train_epoch_{i}(model, loader, optimizer, device="cpu"):
    model.train()
    best_loss = float("inf")
    best_state = None
    losses = []
    for step, (inputs, targets) in enumerate(loader):
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if loss.item() < best_loss:
            best_loss = loss.item()
            best_state = model.state_dict()
    return best_state, losses
''',
    '''

def to_numpy_{i}(t: torch.Tensor) -> np.ndarray:
    arr = t.numpy()
    arr *= 2.0
    back = torch.from_numpy(arr)
    return back.cpu().numpy()
''',
    '''

def checkpoint_{i}(model: nn.Module, optimizer, path: str) -> dict:
    state = {{
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": {i},
    }}
    torch.save(state, path)
    weights = {{k: v.clone() for k, v in model.state_dict().items()}}
    return weights
''',
    '''

def stats_{i}(batch: torch.Tensor) -> tuple:
    mean = batch.mean(dim=0, keepdim=True)
    std = batch.std(dim=0, keepdim=True).clamp_min(1e-6)
    normed = (batch - mean) / std
    hist = normed.detach().cpu()
    grads = [p.grad.clone() for p in [batch] if p.grad is not None]
    return normed, hist, grads
''',
]

HEADER = '''"""Synthetic training script used by benchmarks/bench.py for flake8 latency."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

'''


def make_latency_file(directory: Path, n_lines: int = 1000) -> Path:
    """A deterministic ~n_lines file of plausible PyTorch code with some copy hazards."""
    text = HEADER
    i = 0
    while True:
        block = HAZARD_BLOCKS[i % len(HAZARD_BLOCKS)].format(i=i, w=16 + (i % 7) * 8)
        if (text + block).count("\n") > n_lines - 1:
            break
        text += block
        i += 1
    while text.count("\n") < n_lines:
        text += f"CONSTANT_{text.count(chr(10))} = {i}\n"
    ast.parse(text)
    path = directory / "train_synthetic.py"
    path.write_text(text)
    return path


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
        b0, s0, w0 = _busy_seconds(), time.process_time(), time.perf_counter()
        for k, cmd in configs.items():
            dt, _, _ = _time_cmd(cmd, cwd)
            times[k].append(dt)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        mine = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime
                + time.process_time() - s0)
        other_busy += max(0.0, _busy_seconds() - b0 - mine)
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


# --------------------------------------------------------------------------- report


def row(name: str, s: dict | None, note: str = "") -> list[str]:
    if not s or "wall_s_median" not in s:
        return [name, "-", "-", "-", "-", "-", "-", "-", "-", note or "failed"]
    return [
        name,
        fmt_s(s["wall_s_median"]),
        f"{fmt_s(s['wall_s_min'])}-{fmt_s(s['wall_s_max'])}",
        fmt_rate(s.get("files_per_s")),
        fmt_rate(s.get("lines_per_s")),
        fmt_s(s.get("cpu_s_median")),
        f"{s['peak_rss_sum_bytes_max'] / MiB:,.0f}",
        f"{s['maxrss_largest_single_bytes_max'] / MiB:,.0f}",
        f"{s['other_load_cores_max']:.2f}",
        note,
    ]


def print_table(rows: list[list[str]]) -> None:
    header = ["tool", "median s", "min-max s", "files/s", "lines/s", "CPU s",
              "peak RSS sum MiB", "max 1-proc MiB", "other load", "note"]
    rows = [header] + rows
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for j, r in enumerate(rows):
        print("  ".join(c.rjust(w) if 0 < i < len(header) - 1 else c.ljust(w)
                        for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))


def ratio(a: dict | None, b: dict | None, bkey: str = "wall_s_median") -> float | None:
    try:
        return a["wall_s_median"] / b[bkey]
    except (TypeError, KeyError, ZeroDivisionError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("subset", "full"), default="subset")
    ap.add_argument("--corpus-root", type=Path, help="torch package dir (default: find_spec)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=cores(), help="default: cores available")
    ap.add_argument("--linter", help="torchcopy-lint executable (default: next to python)")
    ap.add_argument("--linter-timeout", type=float, default=1800)
    ap.add_argument("--skip-linter", action="store_true")
    ap.add_argument("--skip-floors", action="store_true")
    ap.add_argument("--skip-torchfix", action="store_true")
    ap.add_argument("--skip-identical-check", action="store_true")
    ap.add_argument("--torchfix-timeout", type=float, default=600)
    ap.add_argument("--torchfix-venv", type=Path, default=DEFAULT_TORCHFIX_VENV)
    ap.add_argument("--rss-interval", type=float, default=0.02)
    ap.add_argument("--flake8-latency", action="store_true",
                    help="also measure the flake8 plugin's added latency on a 1,000-line file")
    ap.add_argument("--flake8-latency-only", action="store_true")
    ap.add_argument("--flake8-runs", type=int, default=15)
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--keep-env", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE for the measured processes")
    ap.add_argument("--idle-wait", type=float, default=60,
                    help="before each timed run, wait up to this many seconds for other "
                         "processes to use < --idle-threshold cores (0: don't wait)")
    ap.add_argument("--idle-threshold", type=float, default=0.3)
    args = ap.parse_args(argv)
    IDLE["max_wait"], IDLE["threshold"] = args.idle_wait, args.idle_threshold
    if not args.keep_env:
        BENCH_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.json_out is None:
        name = "flake8-latency" if args.flake8_latency_only else args.corpus
        args.json_out = REPO / "benchmarks" / "results" / f"bench-{name}.json"

    linter = find_linter(args.linter)
    report: dict = {
        "meta": {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": sys.argv,
            "machine": machine_info(),
            "python": sys.version.split()[0],
            "python_executable": sys.executable,
            "python_impl": platform.python_implementation(),
            "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
            "libcst": dist_version("libcst"),
            "torch": dist_version("torch"),
            "flake8": dist_version("flake8"),
            "torchcopy_lint": dist_version(LINTER_DIST),
            "linter_executable": linter,
            "git": git_commit(),
            "jobs": args.jobs,
            "repeats": args.repeats,
            "PYTHONDONTWRITEBYTECODE_in_measured_env": BENCH_ENV.get("PYTHONDONTWRITEBYTECODE"),
        }
    }
    m = report["meta"]
    print(f"machine: {m['machine']['cores_available']} cores ({m['machine'].get('cpu_model', '?')}),"
          f" python {m['python']}, libcst {m['libcst']}, torch {m['torch']},"
          f" torchcopy-lint {m['torchcopy_lint']}, commit {(m['git']['commit'] or '?')[:10]}"
          f"{' (dirty)' if m['git']['dirty'] else ''}")

    if not args.skip_linter:
        usable, why = linter_usable(linter)
        if not usable:
            log(f"torchcopy-lint not usable ({why}); continuing with --skip-linter")
            report["meta"]["linter_skipped_reason"] = why
            args.skip_linter = True

    tf_venv = None
    if not args.skip_torchfix:
        try:
            tf_exe = ensure_torchfix(args.torchfix_venv)
            tf_venv = args.torchfix_venv
            report["meta"]["torchfix_env"] = torchfix_info(tf_venv)
        except (subprocess.CalledProcessError, OSError) as e:
            log(f"TorchFix unavailable: {e}")
            report["meta"]["torchfix_error"] = str(e)

    if not args.flake8_latency_only:
        root = args.corpus_root or torch_root()
        corpus = gather_corpus(root, args.corpus)
        files = corpus.pop("file_list")
        report["corpus"] = corpus
        print(f"corpus '{corpus['name']}': {', '.join(corpus['paths'])}")
        print(f"  {corpus['files']:,} .py files, {corpus['lines']:,} lines, "
              f"{corpus['bytes'] / MiB:,.1f} MiB")
        paths = corpus["paths"]
        results: dict = {}
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fl:
            fl.write("\n".join(files))
        try:
            if not args.skip_linter:
                log("torchcopy-lint ...")
                lr = run_linter_timings(linter, paths, args, corpus, files[0])
                results["torchcopy_lint_cold"] = lr["cold"]
                results["torchcopy_lint_warm"] = lr["warm"]
                results["torchcopy_lint_cache_dir_bytes"] = lr.get("cache_dir_bytes")
                results["torchcopy_lint_prefilter"] = prefilter_stats(fl.name)
            if not args.skip_floors:
                log("ast.parse floor ...")
                results["ast_floor"] = run_floor("ast floor", AST_FLOOR, fl.name, args, corpus)
                log("libcst.parse_module floor ...")
                results["libcst_floor"] = run_floor("libcst floor", LIBCST_FLOOR, fl.name, args,
                                                    corpus)
            if tf_venv is not None:
                log(f"TorchFix (timeout {args.torchfix_timeout:g} s) ...")
                results["torchfix"] = run_torchfix(tf_exe, paths, args, corpus)
        finally:
            os.unlink(fl.name)
        if not args.skip_linter and not args.skip_identical_check:
            log("identical-diagnostics check ...")
            report["identical_check"] = check_identical(linter, paths, args)
        report["results"] = results

        # ---- table
        ncores = cores()
        rows = []
        cold = results.get("torchcopy_lint_cold")
        warm = results.get("torchcopy_lint_warm")
        if cold is not None:
            rows.append(row(f"torchcopy-lint cold (--jobs {args.jobs})", cold, "empty cache"))
            rows.append(row(f"torchcopy-lint warm (--jobs {args.jobs})", warm, "filled cache"))
        af, lf = results.get("ast_floor"), results.get("libcst_floor")
        if af:
            n_err = len(af.get("parse_errors") or [])
            rows.append(row("ast.parse floor (serial)", af,
                            f"{n_err} SyntaxError" if n_err else ""))
        if lf:
            n_err = len(lf.get("parse_errors") or [])
            rows.append(row("libcst parse floor (serial)", lf,
                            f"{n_err} ParserSyntaxError" if n_err else ""))
            if "wall_s_median" in lf:
                par = lf["wall_s_median"] / ncores
                lf["parallel_floor_s"] = par
                rows.append([f"libcst parallel floor (/{ncores})", fmt_s(par), "-",
                             fmt_rate(corpus["files"] / par), fmt_rate(corpus["lines"] / par),
                             "-", "-", "-", "-", "ideal: serial / cores"])
        tf = results.get("torchfix")
        if tf is not None:
            tfv = (report["meta"].get("torchfix_env") or {}).get("torchfix")
            if tf.get("timed_out"):
                r0 = tf["runs"][0]
                rows.append([f"TorchFix {tfv} (--jobs {args.jobs})", f"> {args.torchfix_timeout:g}",
                             "-", "-", "-", fmt_s(max(r0["cpu_user_s"] + r0["cpu_sys_s"],
                                                      r0["cpu_sampled_s"])),
                             f"{r0['peak_rss_sum_bytes'] / MiB:,.0f}", "-",
                             f"{r0['other_load_cores']:.2f}",
                             f"did not finish in {args.torchfix_timeout:g} s"])
            else:
                r0 = tf["runs"][0]
                rows.append(row(f"TorchFix {tfv} (--jobs {args.jobs})", tf,
                                f"{r0.get('diagnostics')} diags, rc {r0['rc']}"))
        print()
        print_table(rows)
        print("(CPU s: user+sys of the process tree; peak RSS sum: all processes of the tree, "
              "sampled; max 1-proc: ru_maxrss;\n other load: cores used by other processes "
              "during the run, max over repeats)")

        ratios = {
            "torchfix_over_tcl_cold": ratio(tf, cold),
            "tcl_cold_over_ast_floor": ratio(cold, af),
            "tcl_cold_over_libcst_floor": ratio(cold, lf),
            "tcl_cold_over_libcst_parallel_floor": ratio(cold, lf, "parallel_floor_s"),
            "tcl_warm_over_cold": ratio(warm, cold),
        }
        report["ratios"] = ratios
        print()
        labels = {
            "torchfix_over_tcl_cold": "TorchFix / torchcopy-lint cold",
            "tcl_cold_over_ast_floor": "torchcopy-lint cold / ast floor",
            "tcl_cold_over_libcst_floor": "torchcopy-lint cold / libcst floor (serial)",
            "tcl_cold_over_libcst_parallel_floor": "torchcopy-lint cold / libcst parallel floor",
            "tcl_warm_over_cold": "torchcopy-lint warm / cold",
        }
        for k, label in labels.items():
            v = ratios[k]
            if v is None and k == "torchfix_over_tcl_cold" and tf and tf.get("timed_out") \
                    and cold and "wall_s_median" in cold:
                print(f"  {label}: > {args.torchfix_timeout / cold['wall_s_median']:.1f}x "
                      "(TorchFix timed out)")
            elif v is not None:
                print(f"  {label}: {v:.2f}x")
        if cold and "wall_s_median" in cold:
            ok = cold["wall_s_median"] <= COLD_TARGET_S
            report["target_cold_met"] = ok if args.corpus == "full" else None
            print(f"  cache dir after a full run: "
                  f"{(results.get('torchcopy_lint_cache_dir_bytes') or 0) / MiB:,.2f} MiB")
            pf = results.get("torchcopy_lint_prefilter") or {}
            if "files_passing_prefilter" in pf:
                print(f"  files passing torchcopy-lint's regex prefilter (parsed at all): "
                      f"{pf['files_passing_prefilter']:,} of {pf['files']:,}")
            if args.corpus == "full":
                print(f"  target (full torch, cold, <= {COLD_TARGET_S:g} s on {ncores} cores): "
                      f"{'MET' if ok else 'NOT MET'} ({cold['wall_s_median']:.1f} s)")
        ic = report.get("identical_check")
        if ic:
            print()
            print(f"identical diagnostics ({ic['diagnostics']} diagnostics in "
                  f"'{ic['reference']}'): {'yes' if ic['identical'] else 'no'}")
            print(f"  --jobs 1 vs --jobs {args.jobs} (no cache): "
                  f"{'yes' if ic['jobs_1_vs_jobs_n'] else 'no'}")
            print(f"  cached (cold write, warm read, warm --jobs 1) vs --no-cache: "
                  f"{'yes' if ic['cached_vs_no_cache'] else 'no'}")
            for name, e in ic["runs"].items():
                print(f"    {name:24s} {e['wall_s']:7.2f} s  rc {e['rc']}  "
                      f"diags {e['diagnostics']}  bytes-identical {'yes' if e['byte_identical'] else 'no'}"
                      f"  same-set {'yes' if e['identical_ignoring_order'] else 'no'}")

    if args.flake8_latency or args.flake8_latency_only:
        fl8 = run_flake8_latency(args, tf_venv)
        report["flake8_latency"] = fl8
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

    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"\nwrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
