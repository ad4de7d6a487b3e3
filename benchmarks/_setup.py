"""What every benchmark script sets up: its arguments, the corpus, the tools, the report's metadata.

The corpus is the Python sources of the installed torch (located with ``importlib.util.find_spec``,
never imported): ``subset`` is torch/nn, torch/optim and torch/utils, ``full`` all of torch/.
Tools compared against (TorchFix, ruff) live in their own virtualenvs under
``~/.cache/torchcopy-lint-bench/``, created with ``pip`` on first use and reused after. Results go
to ``benchmarks/results/<name>.json`` (gitignored) unless ``--json-out`` says otherwise.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Iterator

from _common import BENCH_ENV, IDLE, REPO, MiB, cores, dist_version, git_commit, log, machine_info

SUBSET_DIRS = ("nn", "optim", "utils")
BENCH_CACHE = Path.home() / ".cache" / "torchcopy-lint-bench"
DEFAULT_TORCHFIX_VENV = BENCH_CACHE / "torchfix-venv"
DEFAULT_RUFF_VENV = BENCH_CACHE / "ruff-venv"
RUFF_VERSION = "0.17.6"  # issue 19's reference point: ruff 0.17 with every rule (--select ALL)
LINTER_DIST = "torchcopy-lint"


# --------------------------------------------------------------------------- arguments


def add_args(ap: argparse.ArgumentParser, *groups: str) -> argparse.ArgumentParser:
    """The shared options; ``groups`` picks which: corpus, linter, torchfix, ruff, flake8."""
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None,
                    help="--jobs given to torchcopy-lint and TorchFix (default: each tool's own default, "
                         "the CPU count; TorchFix gets the cores available)")
    ap.add_argument("--rss-interval", type=float, default=0.02)
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--keep-env", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE for the measured processes")
    ap.add_argument("--idle-wait", type=float, default=60,
                    help="before each timed run, wait up to this many seconds for other "
                         "processes to use < --idle-threshold cores (0: don't wait)")
    ap.add_argument("--idle-threshold", type=float, default=0.3)
    if "corpus" in groups:
        ap.add_argument("--corpus", choices=("subset", "full"), default="subset")
        ap.add_argument("--corpus-root", type=Path, help="torch package dir (default: find_spec)")
    if "linter" in groups:
        ap.add_argument("--linter", help="torchcopy-lint executable (default: next to python)")
        ap.add_argument("--linter-timeout", type=float, default=1800)
    if "torchfix" in groups:
        ap.add_argument("--torchfix-timeout", type=float, default=600)
        ap.add_argument("--torchfix-venv", type=Path, default=DEFAULT_TORCHFIX_VENV)
    if "ruff" in groups:
        ap.add_argument("--ruff-venv", type=Path, default=DEFAULT_RUFF_VENV)
        ap.add_argument("--ruff-version", default=RUFF_VERSION,
                        help="ruff version installed into --ruff-venv (pinned; an existing venv "
                             "with another version is reinstalled)")
        ap.add_argument("--ruff-timeout", type=float, default=600)
    if "flake8" in groups:
        ap.add_argument("--flake8-runs", type=int, default=15)
    return ap


def configure(args: argparse.Namespace, name: str) -> None:
    """Apply the shared options (idle wait, environment) and default ``--json-out`` to ``name``."""
    IDLE["max_wait"], IDLE["threshold"] = args.idle_wait, args.idle_threshold
    if not args.keep_env:
        BENCH_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.json_out is None:
        args.json_out = REPO / "benchmarks" / "results" / f"{name}.json"


def jobs_flag(args: argparse.Namespace) -> list[str]:
    """``--jobs N`` for torchcopy-lint when one was given, else nothing (its default)."""
    return ["--jobs", str(args.jobs)] if args.jobs else []


def jobs_label(args: argparse.Namespace) -> str:
    return f"--jobs {args.jobs}" if args.jobs else "default jobs"


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


@contextlib.contextmanager
def corpus_of(args: argparse.Namespace) -> Iterator[tuple[dict, str]]:
    """(corpus description, path of a file listing its files), printed; the list is removed after."""
    corpus = gather_corpus(args.corpus_root or torch_root(), args.corpus)
    files = corpus.pop("file_list")
    print(f"corpus '{corpus['name']}': {', '.join(corpus['paths'])}")
    print(f"  {corpus['files']:,} .py files, {corpus['lines']:,} lines, {corpus['bytes'] / MiB:,.1f} MiB")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fl:
        fl.write("\n".join(files))
    try:
        yield corpus, fl.name
    finally:
        os.unlink(fl.name)


# --------------------------------------------------------------------------- tools


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


def require_linter(args: argparse.Namespace, report: dict) -> str | None:
    """The usable torchcopy-lint executable, or None (the reason goes into the report)."""
    linter = find_linter(args.linter)
    usable, why = linter_usable(linter)
    if not usable:
        log(f"torchcopy-lint not usable ({why})")
        report["meta"]["linter_skipped_reason"] = why
        return None
    return linter


def _requires_torch(venv_pip: str, requirement: str) -> bool:
    """pip download REQUIREMENT --no-deps, and look at its Requires-Dist for plain torch."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([venv_pip, "download", "--no-deps", "-q", "-d", d, requirement],
                       check=True, capture_output=True)
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


def ensure_venv_tool(venv: Path, dist: str, exe_name: str, version: str | None = None) -> str:
    """``venv/bin/<exe_name>``, creating the venv and ``pip install dist[==version]`` when missing
    (or, with ``version``, when another version is installed). A package that needs torch gets ours
    first, so that no CUDA build is pulled."""
    exe = venv / "bin" / exe_name
    if exe.exists() and (version is None or tool_versions(venv, (dist,)).get(dist) == version):
        return str(exe)
    requirement = f"{dist}=={version}" if version else dist
    log(f"installing {requirement} into the virtualenv {venv}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    if not (venv / "bin" / "pip").exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    pip = str(venv / "bin" / "pip")
    if _requires_torch(pip, requirement):
        tv = dist_version("torch")
        log(f"{requirement} requires torch: pre-installing torch=={tv} into its venv")
        subprocess.run([pip, "install", "-q", f"torch=={tv}"], check=True)
    subprocess.run([pip, "install", "-q", requirement], check=True)
    return str(exe)


def tool_versions(venv: Path, names: tuple[str, ...]) -> dict:
    """Installed versions of ``names`` in ``venv`` (None for a missing one)."""
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(n):\n    try:\n        return m.version(n)\n    except m.PackageNotFoundError:\n"
            "        return None\n"
            "print(json.dumps({n: v(n) for n in sys.argv[1:]}))")
    p = subprocess.run([str(venv / "bin" / "python"), "-c", code, *names],
                       capture_output=True, text=True, check=False)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stderr[-500:]}


# --------------------------------------------------------------------------- report


def new_report(args: argparse.Namespace) -> dict:
    """The report with its metadata (machine, versions, commit), summarised on stdout."""
    m = {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": sys.argv,
        "machine": machine_info(),
        "load_average": os.getloadavg(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "python_impl": platform.python_implementation(),
        "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "libcst": dist_version("libcst"),
        "torch": dist_version("torch"),
        "flake8": dist_version("flake8"),
        "torchcopy_lint": dist_version(LINTER_DIST),
        "git": git_commit(),
        "jobs": args.jobs,
        "cores_available": cores(),
        "repeats": args.repeats,
        "PYTHONDONTWRITEBYTECODE_in_measured_env": BENCH_ENV.get("PYTHONDONTWRITEBYTECODE"),
    }
    print(f"machine: {m['machine']['cores_available']} cores ({m['machine'].get('cpu_model', '?')}),"
          f" load average {' '.join(f'{x:.2f}' for x in m['load_average'])}, python {m['python']},"
          f" libcst {m['libcst']}, torch {m['torch']}, torchcopy-lint {m['torchcopy_lint']},"
          f" commit {(m['git']['commit'] or '?')[:10]}{' (dirty)' if m['git']['dirty'] else ''}")
    return {"meta": m}


def write_report(args: argparse.Namespace, report: dict) -> None:
    report["meta"]["load_average_after"] = os.getloadavg()
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"\nwrote {args.json_out}")
