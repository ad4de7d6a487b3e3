"""Advertised vs applied: every fix the output shows, ``--fix --unsafe-fixes`` applies (issue 30).

    python benchmarks/fix_advertised.py fixtures                  # any files or folders
    python benchmarks/fix_advertised.py --select ALL "$(python -c 'import torch,os;print(os.path.dirname(torch.__file__))')"

The ``.py`` / ``.ipynb`` files under each PATH are copied to a temporary directory (the originals are
only read). On the copy: a lint (JSON): *advertised*, the diagnostics that show a fix; ``--fix
--unsafe-fixes --show-fixes``: its summary's ``fixed N`` and *fixed* per file; a second lint: *left*,
the diagnostics that still show a fix (and the findings that a fix made appear, for the rules to look
at). A file whose fixed count is not its advertised count, that still shows a fix, that no longer
parses, or that changed though it showed no fix is listed, and the exit status is 1. fix_check.py prints the same counts over the corpus.
Only the standard library is used; torch is never imported.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import precision  # noqa: E402

SUFFIXES = (".py", ".ipynb")


@dataclass
class Counts:
    """Advertised vs applied over a set of files (paths relative to the linted root)."""

    advertised: Counter = field(default_factory=Counter)  # path -> diagnostics showing a fix, before
    fixed: Counter = field(default_factory=Counter)  # path -> diagnostics gone after the fix
    left: Counter = field(default_factory=Counter)  # path -> diagnostics still showing a fix, after
    by_code: Counter = field(default_factory=Counter)  # code -> advertised
    new: Counter = field(default_factory=Counter)  # path -> findings that appeared once the fixes were applied

    def mismatched(self) -> List[str]:
        paths = sorted(set(self.advertised) | set(self.fixed) | set(self.left))
        return [f"{p}: advertised {self.advertised[p]}, fixed {self.fixed[p]}, still shown {self.left[p]}"
                for p in paths if self.advertised[p] != self.fixed[p] or self.left[p]]


def compare(before: Sequence[dict], after: Sequence[dict], root: Path, fixed: Optional[Counter] = None) -> Counts:
    """The counts from the JSON diagnostics of a lint before and after ``--fix --unsafe-fixes``; ``fixed``:
    what the fix run reported fixed per file (default: the diagnostics it removed, before minus after)."""
    counts = Counts()
    totals: Counter = Counter()
    for d in before:
        path = Path(d["path"]).resolve().relative_to(root).as_posix()
        totals[path] += 1
        if d.get("fix"):
            counts.advertised[path] += 1
            counts.by_code[d["code"]] += 1
    for d in after:
        path = Path(d["path"]).resolve().relative_to(root).as_posix()
        totals[path] -= 1
        if d.get("fix"):
            counts.left[path] += 1
    removed = Counter({path: n for path, n in totals.items() if n})
    counts.fixed = fixed if fixed is not None else removed
    counts.new = Counter({path: counts.fixed[path] - n for path, n in removed.items() if counts.fixed[path] > n})
    return counts


def _copy(paths: Sequence[Path], work: Path) -> int:
    """Copy the linted files of ``paths`` under ``work`` (one folder per path); how many."""
    copied = 0
    for index, path in enumerate(paths):
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        for source in files:
            relative = source.name if path.is_file() else source.relative_to(path).as_posix()
            target = work / f"{index}-{path.name}" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied += 1
    return copied


def _fix(work: Path, extra: List[str], jobs: Optional[int]) -> Tuple[Optional[int], Counter]:
    """Run ``--fix --unsafe-fixes --show-fixes`` over ``work``: the ``fixed N`` of its summary, and what it
    lists fixed per file (path relative to ``work``)."""
    cmd = [sys.executable, "-m", "torchcopy_lint", "--isolated", "--no-cache", "--exit-zero", "--fix",
           "--unsafe-fixes", "--show-fixes", *extra] + (["--jobs", str(jobs)] if jobs else []) + [str(work)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"torchcopy-lint --fix failed ({proc.returncode}): {proc.stderr[-2000:]}")
    per_file: Counter = Counter()
    path = None
    for line in proc.stderr.splitlines():
        if line.startswith("- ") and line.endswith(":"):
            path = Path(line[2:-1]).resolve().relative_to(work).as_posix()
        elif path is not None and re.match(r"\s+\d+ \u00d7 ", line):
            per_file[path] += int(line.split()[0])
    found = re.search(r"fixed (\d+)\.", proc.stderr)
    return (int(found.group(1)) if found else 0), per_file


def _digests(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--select", default=None, help="the linter's --select (ALL: the opt-in rules' fixes too)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--file-timeout", default="0", help="the linter's --file-timeout (default 0: none, so that a "
                    "file over the budget on a loaded machine in one pass only does not count as a mismatch)")
    args = ap.parse_args(argv)
    extra = (["--select", args.select] if args.select else []) + ["--file-timeout", args.file_timeout]
    work = Path(tempfile.mkdtemp(prefix="tcl-fix-advertised-")).resolve()
    try:
        files = _copy(args.paths, work)
        original = _digests(work)
        before = precision.run_linter([work], args.jobs, extra=extra)
        summary, reported = _fix(work, extra, args.jobs)
        after = precision.run_linter([work], args.jobs, extra=extra)
        changed = {p: text for p, text in _digests(work).items() if text != original.get(p)}
        counts = compare(before, after, work, reported)
        broken = []
        for path, text in changed.items():
            if path.endswith(".py"):
                try:
                    ast.parse(text)
                except (SyntaxError, ValueError) as error:
                    broken.append(f"{path}: does not parse after the fix: {error}")
        unasked = [f"{p}: changed, no fix was shown" for p in changed if not counts.advertised[p]]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    advertised, fixed = sum(counts.advertised.values()), sum(counts.fixed.values())
    print(f"paths: {', '.join(map(str, args.paths))} ({files} files)")
    print(f"diagnostics before: {len(before)}; showing a fix (advertised): {advertised} "
          f"in {len(counts.advertised)} files {dict(sorted(counts.by_code.items()))}")
    print(f"--fix --unsafe-fixes: files changed {len(changed)}, summary 'fixed {summary}', "
          f"listed fixed (--show-fixes, per file) {fixed}")
    print(f"diagnostics after: {len(after)}; still showing a fix: {sum(counts.left.values())}; findings a fix "
          f"made appear (no fix shown, for the rules to look at): {sum(counts.new.values())} in {sorted(counts.new)}")
    problems = counts.mismatched() + broken + unasked
    print(f"files where advertised != applied: {len(counts.mismatched())}; not parsing: {len(broken)}; "
          f"changed without a fix shown: {len(unasked)}")
    for line in problems:
        print(f"MISMATCH {line}")
    return 1 if problems or summary != advertised else 0


if __name__ == "__main__":
    sys.exit(main())
