"""Fix-equivalence oracle: run a fixture and its fixed variants on real torch and compare what they leave.

A fixture whose first line is ``# oracle: runnable`` is executed at module level with a global
``DEVICE`` (a ``torch.device``); every module-level tensor it leaves behind is a result. A fix is
equivalent when each variant leaves tensors of the same names that match the original in every
observable property and in which of them share storage with which.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set

from .support import copy_construct_warnings, recorded_warnings, shares_storage, tensor_differences

ORACLE_MARKER = "# oracle: runnable"
#: First line of a fixture whose (unsafe) fix deliberately changes behaviour: the variant must differ from the
#: original in exactly the ways its ``# changes: <prefix>`` lines declare (see :func:`undeclared_changes`).
BUG_FIX_MARKER = "# oracle: bug-fix"
_CHANGES_PREFIX = "# changes: "
#: Suffixes of the files that hold a fixture's rewritten forms, by fix mode.
VARIANT_SUFFIXES = {"fixed": ".fixed.py", "unsafe": ".unsafe.py"}
#: Rules whose diagnostics correspond one-to-one to torch's copy-construct warning.
WARNING_RULES = frozenset({"TCL101", "TCL102"})

_EXPECTED_LINE = re.compile(r"^(\d+):(\d+): (TCL\d{3})$")


@dataclass(frozen=True)
class FixtureCase:
    """A runnable fixture and the variants its fixes must keep equivalent to it."""

    original: Path
    variants: Dict[str, Path]

    @property
    def name(self) -> str:
        return f"{self.original.parent.name}/{self.original.stem}"

    @property
    def expected(self) -> Path:
        return self.original.with_suffix(".expected")


@dataclass
class FixtureRun:
    """What one execution of a fixture left behind."""

    tensors: Dict[str, object]
    warning_lines: List[int] = field(default_factory=list)  # lines of this file that emitted copy-construct warnings


def is_variant(path: Path) -> bool:
    return any(path.name.endswith(suffix) for suffix in VARIANT_SUFFIXES.values())


def is_runnable(path: Path, marker: str = ORACLE_MARKER) -> bool:
    with path.open(encoding="utf-8") as handle:
        return handle.readline().strip() == marker


def discover(fixtures_root: Path, marker: str = ORACLE_MARKER) -> List[FixtureCase]:
    """Every ``fixtures/TCL*/<case>.py`` whose first line is ``marker``, with the variants next to it."""
    cases = []
    for original in sorted(fixtures_root.glob("TCL*/*.py")):
        if is_variant(original) or not is_runnable(original, marker):
            continue
        stem = original.name[: -len(".py")]
        variants = {
            mode: original.with_name(stem + suffix)
            for mode, suffix in VARIANT_SUFFIXES.items()
            if original.with_name(stem + suffix).exists()
        }
        cases.append(FixtureCase(original, variants))
    return cases


def expected_warning_lines(case: FixtureCase) -> Set[int]:
    """Lines the ``.expected`` file flags with a rule that torch itself warns about."""
    lines = set()
    if case.expected.exists():
        for raw in case.expected.read_text(encoding="utf-8").splitlines():
            match = _EXPECTED_LINE.match(raw.strip())
            if match and match.group(3) in WARNING_RULES:
                lines.add(int(match.group(1)))
    return lines


def run_fixture(path: Path, device: str) -> FixtureRun:
    """Execute ``path`` in a fresh namespace with ``DEVICE`` injected and a fixed random seed."""
    import torch

    torch.manual_seed(0)  # the original and its variants must draw the same random numbers
    namespace = {"__name__": "__oracle__", "__file__": str(path), "DEVICE": torch.device(device)}
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    with recorded_warnings() as records:
        exec(code, namespace)  # noqa: S102 - running the fixture is the point of the oracle
    tensors = {
        name: value
        for name, value in namespace.items()
        if isinstance(value, torch.Tensor) and not name.startswith("__")
    }
    warning_lines = sorted(r.lineno for r in copy_construct_warnings(records) if r.filename == str(path))
    return FixtureRun(tensors, warning_lines)


def aliasing(tensors: Dict[str, object]) -> Dict[frozenset, bool]:
    """For every pair of names, whether the two tensors share storage."""
    return {
        frozenset((a, b)): shares_storage(tensors[a], tensors[b]) for a, b in itertools.combinations(sorted(tensors), 2)
    }


def run_differences(original: FixtureRun, variant: FixtureRun) -> List[str]:
    """Everything observable in which ``variant`` differs from ``original`` (empty: equivalent)."""
    problems = []
    missing, extra = original.tensors.keys() - variant.tensors.keys(), variant.tensors.keys() - original.tensors.keys()
    if missing or extra:
        problems.append(f"tensor names differ: missing {sorted(missing)}, extra {sorted(extra)}")
    for name in sorted(original.tensors.keys() & variant.tensors.keys()):
        problems += [f"{name}: {d}" for d in tensor_differences(original.tensors[name], variant.tensors[name])]
    common = {name: original.tensors[name] for name in original.tensors.keys() & variant.tensors.keys()}
    variant_aliasing = aliasing({name: variant.tensors[name] for name in common})
    for pair, shared in aliasing(common).items():
        if variant_aliasing[pair] != shared:
            a, b = sorted(pair)
            original_state, variant_state = ("shared", "separate") if shared else ("separate", "shared")
            problems.append(f"{a} and {b}: {original_state} storage in the original, {variant_state} in the variant")
    return problems


def check_case(case: FixtureCase, device: str, mode: Optional[str] = None) -> List[str]:
    """Run ``case`` and the variant for ``mode`` (all variants when None); return every problem found."""
    original = run_fixture(case.original, device)
    problems = []
    if not original.tensors:
        problems.append(f"{case.name}: the original leaves no module-level tensor, so nothing would be compared")
    expected_lines = expected_warning_lines(case)
    if set(original.warning_lines) != expected_lines:
        problems.append(
            f"{case.name}: copy-construct warnings on lines {sorted(set(original.warning_lines))}, "
            f"but .expected flags TCL101/TCL102 on lines {sorted(expected_lines)}"
        )
    for variant_mode, path in case.variants.items():
        if mode is not None and variant_mode != mode:
            continue
        variant = run_fixture(path, device)
        if variant.warning_lines:
            problems.append(f"{path.name}: still emits the copy-construct warning on lines {variant.warning_lines}")
        problems += [f"{path.name}: {p}" for p in run_differences(original, variant)]
    return problems


def declared_changes(case: FixtureCase) -> List[str]:
    """The ``# changes: <prefix>`` lines of a bug-fix fixture: how its fix is meant to change the results."""
    lines = case.original.read_text(encoding="utf-8").splitlines()
    return [line[len(_CHANGES_PREFIX):].strip() for line in lines if line.startswith(_CHANGES_PREFIX)]


def undeclared_changes(case: FixtureCase, device: str, mode: str) -> List[str]:
    """Run a bug-fix fixture and its ``mode`` variant; every difference must start with a declared prefix
    and every declared prefix must be observed. Returns what does not match (empty: the fix does exactly
    what it says)."""
    declared = declared_changes(case)
    if not declared:
        return [f"{case.name}: a bug-fix fixture declares no '# changes:' line"]
    original = run_fixture(case.original, device)
    differences = run_differences(original, run_fixture(case.variants[mode], device))
    problems = [f"undeclared: {d}" for d in differences if not any(d.startswith(p) for p in declared)]
    problems += [f"declared but not observed: {p}" for p in declared if not any(d.startswith(p) for d in differences)]
    return problems
