"""Precision/recall of torchcopy-lint on the real-world corpus (see corpus.py) against labels.tsv.

    python benchmarks/precision.py                    # lint the whole corpus, report, score the labels
    python benchmarks/precision.py --labelled-only    # lint only the files that labels.tsv names (fast)
    python benchmarks/precision.py --sample 40        # sample size per rule in the report (default 25)
    python benchmarks/precision.py --candidates       # also list textual candidate sites the linter missed
    python benchmarks/precision.py --template         # print TSV rows for diagnostics not yet labelled

The report (per rule: diagnostics, a fixed-seed sample of sites with their source line, and
the score against labels.tsv) is written to ``<cache>/precision/report.md`` and ``report.json``
(outside the repository: it quotes third-party source); the score table is also printed.

labels.tsv columns: package, version, path (inside the package directory), line, code, label,
reason. Labels: TP (a real hazard: must be reported), FP (was reported, is not a hazard: must
be silent), TN (a known trap: must be silent). A row matches a diagnostic with the same file,
line and code. Precision = reported TP / (reported TP + reported FP/TN) over labelled rows;
recall = reported TP / TP rows. Only the standard library is used; torch is never imported.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402

LABELS = HERE / "labels.tsv"
CODES = ("TCL101", "TCL102", "TCL103", "TCL104", "TCL105")
SEED = 20260522
FIELDS = ("package", "version", "path", "line", "code", "label", "reason")

# Textual candidates for recall hunting: sites a person should look at if the linter is silent.
CANDIDATE_PATTERNS: Dict[str, re.Pattern] = {
    "TCL101": re.compile(r"\btorch\.tensor\(\s*[A-Za-z_][\w.]*(\[[^\]]*\])?\s*[,)]"),
    "TCL102": re.compile(r"\.new_tensor\(\s*[A-Za-z_][\w.]*(\[[^\]]*\])?\s*[,)]"),
    "TCL103": re.compile(r"\.clone\(\)\s*\.detach\(\)|torch\.clone\([^()]*\)\.detach\(\)"),
    "TCL104": re.compile(r"\.data\s*(\.[a-z_]+[a-z]_\(|\[[^\]]*\]\s*[-+*/]?=(?!=)|[-+*/]?=(?!=))"),
    "TCL105": re.compile(r"\bdeepcopy\("),
}

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
        return f"{self.package}-{self.version}"

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


def run_linter(paths: Sequence[Path], jobs: Optional[int] = None) -> List[dict]:
    """Diagnostics (JSON dicts) of ``torchcopy-lint --isolated --no-cache`` on ``paths``."""
    if not paths:
        return []
    cmd = [sys.executable, "-m", "torchcopy_lint", "--isolated", "--no-cache", "--quiet", "--exit-zero",
           "--output-format", "json"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    proc = subprocess.run(cmd + [str(p) for p in paths], capture_output=True, text=True)
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
    """Per rule: diagnostics, TP rows, reported TP, reported FP/TN, precision, recall, silent traps."""
    table = {}
    for code in CODES:
        rows = [lab for lab in labels if lab.code == code]
        tp_rows = [lab for lab in rows if lab.label == "TP"]
        tp_hit = [lab for lab in tp_rows if lab.key in reported]
        fp_hit = [lab for lab in rows if lab.label in ("FP", "TN") and lab.key in reported]
        flagged = len(tp_hit) + len(fp_hit)
        table[code] = {
            "diagnostics": diagnostics.get(code, 0),
            "labelled_rows": len(rows),
            "tp_rows": len(tp_rows),
            "fp_rows": sum(lab.label == "FP" for lab in rows),
            "tn_rows": sum(lab.label == "TN" for lab in rows),
            "tp_reported": len(tp_hit),
            "fp_reported": len(fp_hit),
            "precision": (len(tp_hit) / flagged) if flagged else None,
            "recall": (len(tp_hit) / len(tp_rows)) if tp_rows else None,
            "missed_tp": [lab.key for lab in tp_rows if lab.key not in reported],
            "false_alarms": [lab.key for lab in rows if lab.label in ("FP", "TN") and lab.key in reported],
        }
    return table


def format_table(table: Dict[str, dict]) -> str:
    def pct(x: Optional[float]) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    lines = ["| rule | diagnostics on corpus | labelled TP (reported/rows) | labelled FP+TN reported (FP rows, TN rows) "
             "| precision | recall |", "|---|---|---|---|---|---|"]
    for code, r in table.items():
        lines.append(f"| {code} | {r['diagnostics']} | {r['tp_reported']}/{r['tp_rows']} | {r['fp_reported']} "
                     f"({r['fp_rows']}, {r['tn_rows']}) | {pct(r['precision'])} | {pct(r['recall'])} |")
    return "\n".join(lines)


def source_line(dest: Path, entry: str, path: str, line: int) -> str:
    try:
        lines = (dest / entry / path).read_text(errors="replace").splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""
    except OSError:
        return ""


def candidates(dest: Path, entries: Iterable[str]) -> List[Key]:
    """Textual candidate sites (see CANDIDATE_PATTERNS), one per (file, line, code)."""
    out = []
    for entry in entries:
        for file in sorted((dest / entry).rglob("*.py")):
            rel = file.relative_to(dest / entry).as_posix()
            for i, text in enumerate(file.read_text(errors="replace").splitlines(), 1):
                for code, pattern in CANDIDATE_PATTERNS.items():
                    if pattern.search(text):
                        out.append((entry, rel, i, code))
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
    ap.add_argument("--candidates", action="store_true", help="list textual candidates the linter did not report")
    ap.add_argument("--template", action="store_true", help="print TSV rows for unlabelled diagnostics")
    ap.add_argument("--out", type=Path, default=None, help="report directory (default: <cache>/precision)")
    args = ap.parse_args(argv)

    dest = (args.dest or corpus.default_dest()).expanduser()
    present = corpus.present(dest)
    if not present:
        print(f"no corpus under {dest}: run benchmarks/corpus.py first", file=sys.stderr)
        return 2
    labels = read_labels(args.labels) if args.labels.exists() else []
    if args.labelled_only:
        files = sorted({dest / lab.entry / lab.path for lab in labels if lab.entry in present})
    else:
        files = [present[k] for k in sorted(present)]
    diags = run_linter(files, args.jobs)
    keys = diagnostic_keys(diags, dest)
    counts = Counter(k[3] for k in keys)
    table = score([lab for lab in labels if lab.entry in present], set(keys), counts)

    labelled = {lab.key for lab in labels}
    out_dir = (args.out or dest.parent / "precision").expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    report = ["# torchcopy-lint precision report", "", f"corpus: {dest}", f"files linted: {len(files)}", "",
              format_table(table), ""]
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
        "false_alarms": {c: r["false_alarms"] for c, r in table.items()},
        "missed_tp": {c: r["missed_tp"] for c, r in table.items()},
        "diagnostics": sorted(keys),
        "unreported_candidates": missed,
    }, indent=1))
    if args.template:
        for k in sorted(keys):
            if k not in labelled:
                name, _, version = k[0].rpartition("-")
                print("\t".join([name, version, k[1], str(k[2]), k[3], "?", source_line(dest, *k[:3])[:100]]))
    print(format_table(table))
    print(f"report: {out_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
