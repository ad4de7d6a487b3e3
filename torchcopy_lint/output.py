"""Output formats: text (flake8/ruff style), json, github annotations, sarif."""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Sequence

from . import __version__
from .diagnostics import Applicability, Diagnostic


def _fixable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and (unsafe or d.fix.applicability is Applicability.SAFE)


def format_text(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    lines = []
    for d in diagnostics:
        marker = " [*]" if _fixable(d, unsafe) else ""
        lines.append(f"{d.location}:{d.line}:{d.column}: {d.code}{marker} {d.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_json(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"


def format_github(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    """GitHub Actions workflow commands: inline annotations on pull requests."""
    def esc(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def where(d: Diagnostic) -> str:
        if d.cell is not None:  # lines of a notebook cell are not lines of the .ipynb file
            return ""
        return f",line={d.line},col={d.column},endLine={d.end_line},endColumn={d.end_column}"

    def text(d: Diagnostic) -> str:
        prefix = f"cell {d.cell}:{d.line}:{d.column}: " if d.cell is not None else ""
        return esc(prefix + d.code + " " + d.message)

    return "".join(
        f"::error title=torchcopy-lint ({d.code}),file={d.path}{where(d)}::{text(d)}\n" for d in diagnostics
    )


def format_sarif(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    from .rules import ALL_RULES

    rules = [
        {"id": r.code, "name": r.name, "shortDescription": {"text": r.message},
         "helpUri": f"docs/rules/{r.code}.md"}
        for r in ALL_RULES
    ]
    results: List[Dict] = []
    for d in diagnostics:
        results.append({
            "ruleId": d.code,
            "level": "error" if d.code.startswith("TCL00") else "warning",
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": d.path},
                "region": {"startLine": d.line, "startColumn": d.column,
                           "endLine": d.end_line, "endColumn": d.end_column},
            }}],
            **({"properties": {"cell": d.cell}} if d.cell is not None else {}),
        })
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "torchcopy-lint", "version": __version__, "rules": rules}},
                  "results": results}],
    }
    return json.dumps(sarif, indent=2) + "\n"


FORMATTERS: Dict[str, Callable[..., str]] = {
    "text": format_text,
    "json": format_json,
    "github": format_github,
    "sarif": format_sarif,
}
