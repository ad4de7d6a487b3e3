"""What every benchmark script shares: running a tool as a measured subprocess, and the table.

``run_measured`` runs a command in its own session / process group and returns its wall time, the
CPU time of its process tree (from ``wait4``, or sampled per pid when workers were killed), the peak
RSS *summed over the whole process tree* (sampled from ``/proc`` every ``rss_interval`` seconds, so
parallel workers count) and how many cores other processes used meanwhile ("other load"). Before
each timed run it waits (``IDLE``) until the machine is idle enough. ``summarize`` turns repeats into
medians; ``row``/``print_table`` print them. Standard library only; never imports torch.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = os.sysconf("SC_PAGE_SIZE")
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


# --------------------------------------------------------------------------- process runner

HZ = os.sysconf("SC_CLK_TCK")
IDLE = {"max_wait": 0.0, "threshold": 0.3}  # set from --idle-wait / --idle-threshold


def busy_seconds() -> float:
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
        b0 = busy_seconds()
        time.sleep(0.5)
        load = (busy_seconds() - b0) / 0.5
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
        busy0 = busy_seconds()
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
        busy = busy_seconds() - busy0
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


# --------------------------------------------------------------------------- table


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
