"""A fixed-seed sample of the held-out split's findings for independent labelling, and its precision.

    python benchmarks/heldout_sample.py draw                 # lint the held-out split, write findings + samples
    python benchmarks/heldout_sample.py draw --per-rule 30   # 30 findings per rule (default 20)
    python benchmarks/heldout_sample.py score                # per-rule precision from heldout_labels.tsv

``draw`` lints every member of the split (``--split``, default held-out; see corpus.py) twice, with the default
selection and with ``--select ALL``, with no per-file time limit (a file dropped for time would change the
sample). It writes every finding to ``<out>/findings.json`` (member, path inside the member, line, col, code,
message, the selections that report it) and, per rule, ``<out>/<CODE>.json``: all of the rule's findings when it
has at most ``--per-rule``, else that many drawn with ``random.Random(f"{seed}:{code}")`` from its findings in
position order (one rule's sample does not move when another rule's findings change). Each sampled item carries the
source lines around it (``--before``/``--after``) and the def/class lines that enclose it, so that a reviewer can
judge it without the repository. ``<out>`` defaults to benchmarks/results/heldout/ (gitignored: it quotes
third-party source).

``score`` reads heldout_labels.tsv (member, path, line, code, label TP or FP, note; ``member`` is the corpus
directory name, e.g. ``pyro-ppl+pyro-ff6ae1c95725``, or the repository's owner/name) and the findings.json of the
last ``draw``, matches labels to findings by (member, path, line, code), and prints per rule and selection the
findings, the sample's seed and size, the matched labels, TP, FP and precision with its 95% Wilson interval.
Labels that match no finding (the rule changed since they were made) are listed. Only the standard library is
used; torch is never imported.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import math
import random
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import precision  # noqa: E402

SEED = 20260601
PER_RULE = 20
SELECTIONS = {"default": (), "ALL": ("--select", "ALL")}
LABELS = HERE / "heldout_labels.tsv"
OUT = HERE / "results" / "heldout"
LABEL_FIELDS = ("member", "path", "line", "code", "label", "note")

Key = Tuple[str, str, int, str]  # (member, path, line, code): what a label names
Linter = Callable[..., List[dict]]


def lint_split(dest: Path, members: Dict[str, Path], jobs: Optional[int] = None,
               lint: Linter = precision.run_linter) -> List[dict]:
    """Every finding on ``members`` under each of ``SELECTIONS``, one record per site, in position order."""
    seen: Dict[Tuple, dict] = {}
    for name, select in SELECTIONS.items():
        for d in lint([members[m] for m in sorted(members)], jobs, extra=select + ("--file-timeout", "0")):
            where = precision.split_path(d["path"], dest)
            if where is None:
                continue
            site = (where[0], where[1], int(d["line"]), int(d.get("column") or 0), d["code"], d["message"])
            record = seen.setdefault(site, dict(zip(("member", "path", "line", "col", "code", "message"), site),
                                                selections=[]))
            record["selections"].append(name)
    return [seen[s] for s in sorted(seen)]


def position(f: dict) -> Tuple:
    return (f["member"], f["path"], f["line"], f["col"], f["code"], f["message"])


def draw(findings: Sequence[dict], per_rule: int = PER_RULE, seed: int = SEED) -> Dict[str, List[dict]]:
    """Per rule: all its findings if it has at most ``per_rule``, else a fixed-seed sample of ``per_rule``.

    Only rule codes: a file the linter could not read or parse (TCL001-TCL004) is counted, not labelled."""
    by_rule: Dict[str, List[dict]] = defaultdict(list)
    for f in sorted(findings, key=position):
        if f["code"] in precision.CODES:
            by_rule[f["code"]].append(f)
    out = {}
    for code in sorted(by_rule):
        rows = by_rule[code]
        chosen = rows if len(rows) <= per_rule else random.Random(f"{seed}:{code}").sample(rows, per_rule)
        out[code] = sorted(chosen, key=position)
    return out


def enclosing(tree: Optional[ast.AST], line: int) -> List[int]:
    """The lines of the def/class statements around ``line``, outermost first."""
    if tree is None:
        return []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return sorted(n.lineno for n in ast.walk(tree)
                  if isinstance(n, kinds) and n.lineno <= line <= (n.end_lineno or n.lineno))


class Sources:
    """The lines and parse tree of each file, read once."""

    def __init__(self, dest: Path):
        self.dest = dest
        self._files: Dict[Tuple[str, str], Tuple[List[str], Optional[ast.AST]]] = {}

    def get(self, member: str, path: str) -> Tuple[List[str], Optional[ast.AST]]:
        if (member, path) not in self._files:
            text = (self.dest / member / path).read_text(errors="replace")
            try:
                tree: Optional[ast.AST] = ast.parse(text)
            except (SyntaxError, ValueError):
                tree = None  # Python 2, or syntax newer than this interpreter: no enclosing lines
            self._files[(member, path)] = (text.splitlines(), tree)
        return self._files[(member, path)]

    def item(self, finding: dict, before: int, after: int) -> dict:
        """``finding`` with its context: ``lines`` [[number, text]...] and ``enclosing`` def/class lines."""
        lines, tree = self.get(finding["member"], finding["path"])
        line = finding["line"]
        first, last = max(1, line - before), min(len(lines), line + after)
        return dict(finding, enclosing=[[n, lines[n - 1]] for n in enclosing(tree, line)],
                    lines=[[n, lines[n - 1]] for n in range(first, last + 1)])


def linter_revision() -> str:
    proc = subprocess.run(["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def write_draw(out: Path, dest: Path, members: Sequence[str], findings: List[dict],
               samples: Dict[str, List[dict]], args: argparse.Namespace) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("TCL*.json"):
        stale.unlink()  # a rule with no findings now keeps no sample from an earlier draw
    meta = {"split": args.split, "seed": args.seed, "per_rule": args.per_rule, "linter": linter_revision(),
            "members": sorted(members)}
    (out / "findings.json").write_text(json.dumps(dict(meta, findings=findings), indent=1))
    sources = Sources(dest)
    total = Counter(f["code"] for f in findings)
    for code, chosen in samples.items():
        items = [sources.item(f, args.before, args.after) for f in chosen]
        (out / f"{code}.json").write_text(json.dumps(dict(meta, code=code, findings=total[code],
                                                          sample_size=len(items), items=items), indent=1))


def count_table(findings: Sequence[dict], samples: Dict[str, List[dict]]) -> str:
    counts = {name: Counter(f["code"] for f in findings if name in f["selections"]) for name in SELECTIONS}
    lines = ["| rule | findings (default) | findings (ALL) | sampled |", "|---|---|---|---|"]
    for code in sorted(set(counts["ALL"]) | set(counts["default"])):
        lines.append(f"| {code} | {counts['default'][code]} | {counts['ALL'][code]} | {len(samples.get(code, []))} |")
    lines.append(f"| all | {sum(counts['default'].values())} | {sum(counts['ALL'].values())} "
                 f"| {sum(len(v) for v in samples.values())} |")
    return "\n".join(lines)


def read_labels(path: Path, split: str = "held-out") -> List[dict]:
    """heldout_labels.tsv rows; ``member`` may be the directory name or the repository's owner/name."""
    by_name = {name: corpus.entry_name(name, version) for name, version in corpus.corpus_entries(split)}
    out = []
    with open(path, newline="") as f:
        for row in csv.reader((ln for ln in f if ln.strip() and not ln.startswith("#")), delimiter="\t"):
            if row[0] == "member":
                continue
            row = row + [""] * (len(LABEL_FIELDS) - len(row))
            label = dict(zip(LABEL_FIELDS, (c.strip() for c in row)))
            label["member"] = by_name.get(label["member"], label["member"])
            label["line"] = int(label["line"])
            if label["label"] not in ("TP", "FP"):
                raise ValueError(f"{path}: label must be TP or FP: {row}")
            out.append(label)
    return out


def label_key(row: dict) -> Key:
    return (row["member"], row["path"], int(row["line"]), row["code"])


def wilson(tp: int, n: int, z: float = 1.96) -> Tuple[float, float]:
    """The 95% Wilson score interval of a proportion tp/n (n > 0)."""
    p = tp / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def score(labels: Sequence[dict], findings: Sequence[dict], samples: Dict[str, List[dict]]) -> Dict[str, dict]:
    """Per selection and rule: findings, sample size, labels matched (in the sample or not), TP, FP, precision."""
    sampled = {label_key(f) for rows in samples.values() for f in rows}
    table: Dict[str, dict] = {}
    for name in SELECTIONS:
        reported = {label_key(f) for f in findings if name in f["selections"]}
        counts = Counter(f["code"] for f in findings if name in f["selections"])
        rows = {}
        for code in sorted(set(counts) | {lab["code"] for lab in labels}):
            matched = [lab for lab in labels if lab["code"] == code and label_key(lab) in reported]
            tp = sum(lab["label"] == "TP" for lab in matched)
            rows[code] = {"findings": counts[code], "sample_size": len(samples.get(code, [])),
                          "labelled": len(matched), "outside_sample": sum(label_key(lab) not in sampled
                                                                          for lab in matched),
                          "tp": tp, "fp": len(matched) - tp,
                          "precision": tp / len(matched) if matched else None,
                          "interval": wilson(tp, len(matched)) if matched else None}
        table[name] = rows
    return table


def format_score(table: Dict[str, dict]) -> str:
    out = []
    for name, rows in table.items():
        out += [f"selection {name}:", "| rule | findings | sampled | labelled (outside sample) | TP | FP "
                "| precision | 95% interval |", "|---|---|---|---|---|---|---|---|"]
        for code, r in rows.items():
            ci = "n/a" if r["interval"] is None else f"{r['interval'][0]:.2f}-{r['interval'][1]:.2f}"
            prec = "n/a" if r["precision"] is None else f"{r['precision']:.3f}"
            out.append(f"| {code} | {r['findings']} | {r['sample_size']} | {r['labelled']} ({r['outside_sample']}) "
                       f"| {r['tp']} | {r['fp']} | {prec} | {ci} |")
        tp, n = sum(r["tp"] for r in rows.values()), sum(r["labelled"] for r in rows.values())
        overall = f"{tp / n:.3f} | {wilson(tp, n)[0]:.2f}-{wilson(tp, n)[1]:.2f}" if n else "n/a | n/a"
        out += [f"| all | {sum(r['findings'] for r in rows.values())} | {sum(r['sample_size'] for r in rows.values())}"
                f" | {n} ({sum(r['outside_sample'] for r in rows.values())}) | {tp} | {n - tp} | {overall} |", ""]
    return "\n".join(out)


def cmd_draw(args: argparse.Namespace, dest: Path, lint: Linter) -> int:
    members = corpus.present(dest, args.split)
    if not members:
        print(f"no {args.split} corpus under {dest}: run benchmarks/corpus.py --split {args.split}", file=sys.stderr)
        return 2
    findings = lint_split(dest, members, args.jobs, lint)
    samples = draw(findings, args.per_rule, args.seed)
    write_draw(args.out, dest, list(members), findings, samples, args)
    print(f"split {args.split}: {len(members)} members under {dest}; seed {args.seed}, per rule {args.per_rule}")
    print(count_table(findings, samples))
    print(f"written: {args.out}/findings.json and {len(samples)} rule samples")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    path = args.out / "findings.json"
    if not path.exists():
        print(f"no {path}: run `heldout_sample.py draw` first", file=sys.stderr)
        return 2
    drawn = json.loads(path.read_text())
    findings = drawn["findings"]
    samples = draw(findings, drawn["per_rule"], drawn["seed"])
    labels = read_labels(args.labels, drawn["split"])
    keys = {label_key(f) for f in findings}
    unmatched = [lab for lab in labels if label_key(lab) not in keys]
    print(f"split {drawn['split']}: {len(drawn['members'])} members, linter {drawn['linter']}; sample seed "
          f"{drawn['seed']}, per rule {drawn['per_rule']} ({sum(map(len, samples.values()))} sampled findings); "
          f"labels: {len(labels)} rows in {args.labels}")
    print(format_score(score(labels, findings, samples)))
    print(f"labels matching no finding: {len(unmatched)}")
    for lab in unmatched:
        print(f"  {lab['member']}/{lab['path']}:{lab['line']} {lab['code']} {lab['label']} {lab['note']}")
    return 0


def main(argv: Optional[List[str]] = None, lint: Linter = precision.run_linter) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("draw", "score"))
    ap.add_argument("--dest", type=Path, default=None, help="corpus directory (see corpus.py)")
    ap.add_argument("--split", choices=corpus.SPLITS, default="held-out", help="corpus split (%(default)s)")
    ap.add_argument("--out", type=Path, default=OUT, help="where findings.json and <CODE>.json go (%(default)s)")
    ap.add_argument("--per-rule", type=int, default=PER_RULE, help="sample size per rule (%(default)s)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--before", type=int, default=40, help="source lines before each sampled finding")
    ap.add_argument("--after", type=int, default=15, help="source lines after each sampled finding")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--labels", type=Path, default=LABELS, help="labels to score (%(default)s)")
    args = ap.parse_args(argv)
    if args.command == "score":
        return cmd_score(args)
    return cmd_draw(args, (args.dest or corpus.default_dest()).expanduser(), lint)


if __name__ == "__main__":
    sys.exit(main())
