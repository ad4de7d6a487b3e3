"""``--fix --unsafe-fixes`` over a COPY of the whole corpus: every changed file re-parses, a second pass changes nothing.

    python benchmarks/fix_check.py                       # all corpus projects (see corpus.py)
    python benchmarks/fix_check.py --entries timm-1.0.31  # some projects only
    python benchmarks/fix_check.py --checkout DIR         # the torchcopy_lint of another checkout
    python benchmarks/fix_check.py --split held-out       # the held-out split (default: dev; see corpus.py)

The corpus is copied to a temporary directory (never fixed in place). The linter runs there twice with
``--isolated --no-cache --fix --unsafe-fixes``. Reported, and each a failure (exit 1):

- a changed file that no longer parses (``ast.parse``) or no longer decodes;
- a file that the second pass changes again (fixes must be idempotent);
- a changed line where the rule that reported it is labelled FP or TN in labels.tsv: a rewrite of a
  non-hazard, the way a program is made to crash (``bindings[name].data.resize_`` -> ``.detach()`` on a
  namedtuple).

Also printed: files and lines changed per project, the diagnostics that the first pass leaves (fixes
that were not offered), and advertised vs applied (fix_advertised.py's counts: the fixes the output showed,
the diagnostics the fixes removed, the fixes still shown afterwards, per file). Only the standard library is used; torch is never imported.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import fix_advertised  # noqa: E402
import precision  # noqa: E402


def _digests(root: Path) -> Dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.py")) if p.is_file()}


def _lint(root: Path, entries: List[str], args: argparse.Namespace, fix: bool) -> Tuple[Set[precision.Key], List[dict]]:
    """One pass over ``root/<entry>``, with ``--fix --unsafe-fixes`` when ``fix``: the diagnostics it reports
    (as keys, and as the JSON dicts)."""
    extra = (["--fix", "--unsafe-fixes"] if fix else []) + (["--select", args.select] if args.select else [])
    diags = precision.run_linter([root / e for e in entries], args.jobs, args.checkout, args.python, extra=extra)
    return set(precision.diagnostic_keys(diags, root)), diags


def _changed_lines(before: str, after: str) -> Set[int]:
    """1-based line numbers of ``before`` that the fix replaced or deleted."""
    out: Set[int] = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            out.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None, help="corpus directory (see corpus.py)")
    ap.add_argument("--entries", nargs="*", default=None, help="corpus directory names (default: all present)")
    ap.add_argument("--labels", type=Path, default=precision.LABELS)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--checkout", type=Path, default=None, help="lint with the torchcopy_lint of this source tree")
    ap.add_argument("--python", default=None, help="interpreter that runs the linter")
    ap.add_argument("--keep", action="store_true", help="keep the fixed copy and print its path")
    ap.add_argument("--select", default=None, help="the linter's --select (ALL: the opt-in rules' fixes too)")
    corpus.add_split_argument(ap)
    args = ap.parse_args(argv)

    dest = (args.dest or corpus.default_dest()).expanduser()
    present = corpus.present(dest, args.split)
    entries = sorted(args.entries or present)
    missing = [e for e in entries if e not in present]
    if not entries or missing:
        print(f"not in the corpus under {dest}: {missing or 'anything'} (run benchmarks/corpus.py)", file=sys.stderr)
        return 2
    non_hazards: Dict[Tuple[str, str], Dict[int, List[Tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for lab in precision.read_labels(args.labels):
        # a [live:]/[free:] TN is a true site of the twin rule (TCL104/TCL119, label_contexts.py), not a non-hazard
        if lab.label in ("FP", "TN") and not lab.reason.startswith(("[live:", "[free:")):
            non_hazards[(lab.entry, lab.path)][lab.line].append((lab.code, f"{lab.label}: {lab.reason}"))

    work = Path(tempfile.mkdtemp(prefix="tcl-fix-check-"))
    try:
        for e in entries:
            shutil.copytree(present[e], work / e, ignore=shutil.ignore_patterns(corpus.MARKER))
        original = _digests(work)
        reported, shown = _lint(work, entries, args, fix=False)
        _lint(work, entries, args, fix=True)
        first = _digests(work)
        changed = sorted(k for k in first if first[k] != original.get(k))
        left, remaining = _lint(work, entries, args, fix=True)
        second = _digests(work)
        counts = fix_advertised.compare(shown, remaining, work.resolve())
        unstable = sorted(k for k in second if second[k] != first.get(k))

        broken: List[str] = []
        risky: List[str] = []
        lines_per_entry: Counter = Counter()
        files_per_entry: Counter = Counter()
        for rel in changed:
            entry, _, path = rel.partition("/")
            before = (present[entry] / path).read_text(errors="replace")
            try:
                after = (work / rel).read_text()
                ast.parse(after, filename=rel)
            except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
                broken.append(f"{rel}: {type(exc).__name__}: {exc}")
                continue
            lines = _changed_lines(before, after)
            files_per_entry[entry] += 1
            lines_per_entry[entry] += len(lines)
            for line in sorted(lines):
                for code, note in non_hazards.get((entry, path), {}).get(line, []):
                    if (entry, path, line, code) in reported:
                        risky.append(f"{rel}:{line}: fixed a site labelled {code} {note}")
    finally:
        if args.keep:
            print(f"fixed copy kept at {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print(f"corpus: {dest} ({len(entries)} projects, {len(original)} files)")
    print(f"diagnostics before fixing: {dict(sorted(Counter(k[3] for k in reported).items()))}")
    print(f"files changed by pass 1: {len(changed)} ({sum(lines_per_entry.values())} lines)")
    for entry in sorted(files_per_entry):
        print(f"  {entry}: {files_per_entry[entry]} files, {lines_per_entry[entry]} lines")
    print(f"changed files that do not re-parse: {len(broken)}")
    print(f"files changed again by pass 2: {len(unstable)}")
    print(f"fixes on lines labelled FP/TN for the reporting rule: {len(risky)}")
    print(f"diagnostics left after the fixes (no fix offered): {dict(sorted(Counter(k[3] for k in left).items()))}")
    print(f"fixes advertised: {sum(counts.advertised.values())}, applied (diagnostics fixed): "
          f"{sum(counts.fixed.values())}, still shown after the fixes: {sum(counts.left.values())}; "
          f"files where advertised != applied: {len(counts.mismatched())}")
    for line in counts.mismatched():
        print(f"  {line}")
    for line in broken + [f"{u}: changed by the second pass" for u in unstable] + risky:
        print(f"FAIL {line}")
    return 1 if broken or unstable or risky else 0


if __name__ == "__main__":
    sys.exit(main())
