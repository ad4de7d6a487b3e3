"""Precision/recall of torchcopy-lint on the real-world corpus (see corpus.py) against labels.tsv.

    python benchmarks/precision.py                    # lint the whole corpus, report, score the labels
    python benchmarks/precision.py --labelled-only    # lint only the files that labels.tsv names (fast)
    python benchmarks/precision.py --report           # also print the per-project table (markdown)
    python benchmarks/precision.py --checkout DIR     # lint with the torchcopy_lint of another checkout
    python benchmarks/precision.py --sample 40        # sample size per rule in the report (default 25)
    python benchmarks/precision.py --candidates       # also list candidate sites (candidates.py) not reported
    python benchmarks/precision.py --template         # print TSV rows for diagnostics not yet labelled
    python benchmarks/precision.py --split held-out   # lint another split (labels.tsv scores only the dev one)

The report (per rule: diagnostics, a fixed-seed sample of sites with their source line, and
the score against labels.tsv, then the same score per project) is written to
``<cache>/precision/report.md`` and ``report.json`` (outside the repository: it quotes third-party
source); the score table is also printed.

labels.tsv columns: package, version, path (inside the package directory), line, code, label,
reason. Labels: TP (a real hazard: must be reported), FP (was reported, is not a hazard: must
be silent), TN (a known trap or near-miss: must be silent). A row matches a diagnostic with the
same file, line and code. Precision = reported TP / (reported TP + reported FP + reported TN) over
labelled rows; recall = reported TP / TP rows; "traps flagged" = reported TN rows. Only the
standard library is used; torch is never imported.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import candidates as candidate_sites  # noqa: E402
import corpus  # noqa: E402

LABELS = HERE / "labels.tsv"
sys.path.insert(0, str(HERE.parent))
from torchcopy_lint.codes import RULE_CODES as CODES  # noqa: E402  (codes.py needs no LibCST)
SEED = 20260522
FIELDS = ("package", "version", "path", "line", "code", "label", "reason")

Key = Tuple[str, str, int, str]  # (package-version, path, line, code)


@dataclass(frozen=True)
class Label:
    package: str
    version: str
    path: str
    line: int
    code: str
    label: str
    reason: str

    @property
    def entry(self) -> str:
        return corpus.entry_name(self.package, self.version)

    @property
    def key(self) -> Key:
        return (self.entry, self.path, self.line, self.code)


def read_labels(path: Path = LABELS) -> List[Label]:
    out = []
    with open(path, newline="") as f:
        rows = csv.reader((line for line in f if line.strip() and not line.startswith("#")), delimiter="\t")
        for row in rows:
            if row[0] == "package":
                continue
            row = row + [""] * (len(FIELDS) - len(row))
            label = Label(row[0], row[1], row[2], int(row[3]), row[4], row[5].strip(), row[6].strip())
            if label.label not in ("TP", "FP", "TN") or label.code not in CODES:
                raise ValueError(f"bad label row: {row}")
            out.append(label)
    return out


def split_path(path: str, dest: Path) -> Optional[Tuple[str, str]]:
    """(entry, relative path) of a file under the corpus directory."""
    try:
        rel = Path(path).resolve().relative_to(dest.resolve())
    except ValueError:
        return None
    parts = rel.parts
    return parts[0], "/".join(parts[1:])


def run_linter(paths: Sequence[Path], jobs: Optional[int] = None, checkout: Optional[Path] = None,
               python: Optional[str] = None, extra: Sequence[str] = ()) -> List[dict]:
    """Diagnostics (JSON dicts) of ``torchcopy-lint --isolated --no-cache`` on ``paths``.

    ``checkout``: lint with the ``torchcopy_lint`` package of that source tree (put first on
    ``PYTHONPATH``), e.g. an old commit checked out with ``git worktree add``, to compare figures.
    ``extra``: more options (fix_check.py passes ``--fix --unsafe-fixes``).
    """
    if not paths:
        return []
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout.resolve())] + [p for p in [env.get("PYTHONPATH")] if p])
    cmd = [python or sys.executable, "-m", "torchcopy_lint", "--isolated", "--no-cache", "--quiet", "--exit-zero",
           "--output-format", "json"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    cmd += list(extra)
    # ``-m`` puts the working directory first on sys.path: run from the checkout so that its package is the one
    # imported (from this repository's root the working tree's own torchcopy_lint would shadow PYTHONPATH).
    cwd = str(checkout.resolve()) if checkout is not None else None
    proc = subprocess.run(cmd + [str(p.resolve()) for p in paths], capture_output=True, text=True, env=env, cwd=cwd)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"torchcopy-lint failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def diagnostic_keys(diags: Iterable[dict], dest: Path) -> Dict[Key, dict]:
    out = {}
    for d in diags:
        where = split_path(d["path"], dest)
        if where is not None:
            out[(where[0], where[1], int(d["line"]), d["code"])] = d
    return out


def score(labels: Sequence[Label], reported: Set[Key], diagnostics: Dict[str, int]) -> Dict[str, dict]:
    """Per rule: diagnostics, TP rows, reported TP, reported FP and TN rows, precision, recall, misses."""
    table = {}
    for code in CODES:
        rows = [lab for lab in labels if lab.code == code]
        tp_rows = [lab for lab in rows if lab.label == "TP"]
        tp_hit = [lab for lab in tp_rows if lab.key in reported]
        fp_hit = [lab for lab in rows if lab.label == "FP" and lab.key in reported]
        tn_hit = [lab for lab in rows if lab.label == "TN" and lab.key in reported]
        flagged = len(tp_hit) + len(fp_hit) + len(tn_hit)
        table[code] = {
            "diagnostics": diagnostics.get(code, 0),
            "labelled_rows": len(rows),
            "tp_rows": len(tp_rows),
            "fp_rows": sum(lab.label == "FP" for lab in rows),
            "tn_rows": sum(lab.label == "TN" for lab in rows),
            "tp_reported": len(tp_hit),
            "fp_reported": len(fp_hit) + len(tn_hit),
            "fp_rows_reported": len(fp_hit),
            "traps_reported": len(tn_hit),
            "precision": (len(tp_hit) / flagged) if flagged else None,
            "recall": (len(tp_hit) / len(tp_rows)) if tp_rows else None,
            "missed_tp": [lab.key for lab in tp_rows if lab.key not in reported],
            "false_alarms": [lab.key for lab in rows if lab.label in ("FP", "TN") and lab.key in reported],
        }
    return table


def score_by_project(labels: Sequence[Label], reported: Set[Key], keys: Iterable[Key]) -> Dict[str, Dict[str, dict]]:
    """``{entry: score(...)}`` over the labels and diagnostics of each corpus entry."""
    diags: Dict[str, Counter] = defaultdict(Counter)
    for k in keys:
        diags[k[0]][k[3]] += 1
    by_entry: Dict[str, List[Label]] = defaultdict(list)
    for lab in labels:
        by_entry[lab.entry].append(lab)
    return {e: score(by_entry.get(e, []), reported, diags.get(e, Counter()))
            for e in sorted(set(by_entry) | set(diags))}


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_table(table: Dict[str, dict]) -> str:
    lines = ["| rule | diagnostics on corpus | labelled rows (TP/FP/TN) | TP found / TP labelled | FP rows flagged "
             "| traps (TN) flagged | precision | recall |", "|---|---|---|---|---|---|---|---|"]
    total = Counter()
    for code, r in table.items():
        lines.append(f"| {code} | {r['diagnostics']} | {r['labelled_rows']} ({r['tp_rows']}/{r['fp_rows']}/"
                     f"{r['tn_rows']}) | {r['tp_reported']}/{r['tp_rows']} | {r['fp_rows_reported']} "
                     f"| {r['traps_reported']} | {_pct(r['precision'])} | {_pct(r['recall'])} |")
        total.update({k: r[k] for k in ("diagnostics", "labelled_rows", "tp_rows", "fp_rows", "tn_rows",
                                        "tp_reported", "fp_rows_reported", "traps_reported")})
    flagged = total["tp_reported"] + total["fp_rows_reported"] + total["traps_reported"]
    lines.append(f"| all | {total['diagnostics']} | {total['labelled_rows']} ({total['tp_rows']}/{total['fp_rows']}/"
                 f"{total['tn_rows']}) | {total['tp_reported']}/{total['tp_rows']} | {total['fp_rows_reported']} "
                 f"| {total['traps_reported']} | {_pct(total['tp_reported'] / flagged if flagged else None)} "
                 f"| {_pct(total['tp_reported'] / total['tp_rows'] if total['tp_rows'] else None)} |")
    return "\n".join(lines)


def format_projects(by_project: Dict[str, Dict[str, dict]]) -> str:
    """One row per project: labelled rows, then per rule ``diagnostics d, TP found/labelled, false alarms``."""
    lines = ["| project | labelled rows | per rule: diagnostics, TP found/TP labelled, false alarms (FP+TN flagged) |",
             "|---|---|---|"]
    for entry, table in by_project.items():
        cells = []
        for code, r in table.items():
            if r["diagnostics"] or r["labelled_rows"]:
                cell = f"{code} d={r['diagnostics']}"
                if r["tp_rows"]:
                    cell += f" tp={r['tp_reported']}/{r['tp_rows']}"
                if r["labelled_rows"]:
                    cell += f" fa={r['fp_reported']}"
                cells.append(cell)
        labelled = sum(r["labelled_rows"] for r in table.values())
        lines.append(f"| {entry} | {labelled} | {'; '.join(cells) or '-'} |")
    return "\n".join(lines)


def source_line(dest: Path, entry: str, path: str, line: int) -> str:
    try:
        lines = (dest / entry / path).read_text(errors="replace").splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""
    except OSError:
        return ""


def candidates(dest: Path, entries: Iterable[str]) -> List[Key]:
    """Candidate sites found without the linter (benchmarks/candidates.py), one per (file, line, code)."""
    out = []
    for entry in entries:
        for file in sorted((dest / entry).rglob("*.py")):
            rel = file.relative_to(dest / entry).as_posix()
            out.extend((entry, rel, line, code) for line, code in candidate_sites.sites(file.read_text(errors="replace")))
    return out


def sample_keys(keys: Sequence[Key], n: int, seed: int = SEED) -> List[Key]:
    keys = sorted(keys)
    return keys if len(keys) <= n else sorted(random.Random(seed).sample(keys, n))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None, help="corpus directory (see corpus.py)")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--labelled-only", action="store_true", help="lint only the files named in labels.tsv")
    ap.add_argument("--sample", type=int, default=25, help="sites per rule shown in the report")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--candidates", action="store_true", help="list candidate sites (candidates.py) not reported")
    ap.add_argument("--report", action="store_true", help="also print the per-project table (markdown)")
    ap.add_argument("--checkout", type=Path, default=None,
                    help="lint with the torchcopy_lint package of this source tree (another commit)")
    ap.add_argument("--python", default=None, help="interpreter that runs the linter (default: this one)")
    ap.add_argument("--template", action="store_true", help="print TSV rows for unlabelled diagnostics")
    ap.add_argument("--out", type=Path, default=None, help="report directory (default: <cache>/precision)")
    ap.add_argument("--select", default="ALL",
                    help="the linter's --select (default: ALL, the opt-in TCL119 too: labels.tsv labels its sites; "
                         "under the default selection its recall would read 0)")
    ap.add_argument("--file-timeout", default=None, help="the linter's --file-timeout (0: none, for a loaded machine)")
    corpus.add_split_argument(ap)
    args = ap.parse_args(argv)

    dest = (args.dest or corpus.default_dest()).expanduser()
    present = corpus.present(dest, args.split)
    if not present:
        print(f"no {args.split} corpus under {dest}: run benchmarks/corpus.py --split {args.split} first",
              file=sys.stderr)
        return 2
    labels = read_labels(args.labels) if args.labels.exists() else []
    if args.labelled_only:
        files = sorted({dest / lab.entry / lab.path for lab in labels if lab.entry in present})
    else:
        files = [present[k] for k in sorted(present)]
    extra = (("--select", args.select) if args.select else ()) + \
        (("--file-timeout", args.file_timeout) if args.file_timeout is not None else ())
    diags = run_linter(files, args.jobs, args.checkout, args.python, extra)
    keys = diagnostic_keys(diags, dest)
    counts = Counter(k[3] for k in keys)
    usable = [lab for lab in labels if lab.entry in present]
    table = score(usable, set(keys), counts)
    by_project = score_by_project(usable, set(keys), keys)
    absent = sorted({lab.entry for lab in labels} - set(present))

    labelled = {lab.key for lab in labels}
    out_dir = (args.out or dest.parent / "precision").expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    linter = f"checkout {args.checkout}" if args.checkout else "this environment's torchcopy_lint"
    head = [f"corpus: {dest}, split {args.split} ({len(present)} projects; "
            f"{'labelled files only' if args.labelled_only else 'all files'})",
            f"linter: {linter}", f"labels: {len(usable)} rows in {len({lab.entry for lab in usable})} projects"
            + (f"; projects absent, their labels skipped: {', '.join(absent)}" if absent else "")]
    report = ["# torchcopy-lint precision report", ""] + head + ["", format_table(table), "",
              "## per project", "", format_projects(by_project), ""]
    per_rule = defaultdict(list)
    for k in keys:
        per_rule[k[3]].append(k)
    for code in CODES:
        chosen = sample_keys(per_rule[code], args.sample, args.seed)
        report += [f"## {code}: {counts.get(code, 0)} diagnostics, {len(chosen)} shown", ""]
        for k in chosen:
            mark = "labelled" if k in labelled else "UNLABELLED"
            report.append(f"- `{k[0]}/{k[1]}:{k[2]}` [{mark}] `{source_line(dest, k[0], k[1], k[2])}`")
        for k in table[code]["false_alarms"]:
            report.append(f"- FALSE ALARM `{k[0]}/{k[1]}:{k[2]}` `{source_line(dest, k[0], k[1], k[2])}`")
        for k in table[code]["missed_tp"]:
            report.append(f"- MISSED TP `{k[0]}/{k[1]}:{k[2]}` `{source_line(dest, k[0], k[1], k[2])}`")
        report.append("")
    missed: List[Key] = []
    if args.candidates:
        cand = candidates(dest, sorted(present))
        flagged_lines = {(k[0], k[1], k[2], k[3]) for k in keys}
        missed = [c for c in cand if c not in flagged_lines and c not in labelled]
        report += [f"## textual candidates not reported and not labelled: {len(missed)}", ""]
        report += [f"- {c[3]} `{c[0]}/{c[1]}:{c[2]}` `{source_line(dest, c[0], c[1], c[2])}`" for c in missed]
    (out_dir / "report.md").write_text("\n".join(report) + "\n")
    (out_dir / "report.json").write_text(json.dumps({
        "table": {c: {k: v for k, v in r.items() if k not in ("missed_tp", "false_alarms")} for c, r in table.items()},
        "projects": {e: {c: {k: v for k, v in r.items() if k not in ("missed_tp", "false_alarms")}
                         for c, r in t.items() if r["diagnostics"] or r["labelled_rows"]}
                     for e, t in by_project.items()},
        "false_alarms": {c: r["false_alarms"] for c, r in table.items()},
        "missed_tp": {c: r["missed_tp"] for c, r in table.items()},
        "diagnostics": sorted(keys),
        "unreported_candidates": missed,
    }, indent=1))
    if args.template:
        for k in sorted(keys):
            if k not in labelled:
                name, version = corpus.split_entry(k[0])
                print("\t".join([name, version, k[1], str(k[2]), k[3], "?", source_line(dest, *k[:3])[:100]]))
    print("\n".join(head))
    print(format_table(table))
    if args.report:
        print()
        print(format_projects(by_project))
    print(f"report: {out_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
