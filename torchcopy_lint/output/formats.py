"""Output formats: text (flake8/ruff style), json, github annotations, sarif; statistics.

Severity is the same in every format (``codes.severity``): a file that could not be
linted (TCL001, TCL002, ...) is an error, a rule's finding is a warning.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Sequence

from ..codes import severity
from ..diagnostics import Applicability, Diagnostic


def fixable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and (unsafe or d.fix.applicability is Applicability.SAFE)


def format_text(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    lines = []
    for d in diagnostics:
        marker = " [*]" if fixable(d, unsafe) else ""
        lines.append(f"{d.location}:{d.line}:{d.column}: {d.code}{marker} {d.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_json(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    return json.dumps([{**d.to_json(), "severity": severity(d.code)} for d in diagnostics], indent=2) + "\n"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``escapeProperty``): also ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    """GitHub Actions workflow commands: inline annotations on pull requests."""
    out = []
    for d in diagnostics:
        props = {"title": f"torchcopy-lint ({d.code})", "file": d.path}
        if d.cell is None:  # the lines of a notebook cell are not lines of the .ipynb file: the message names them
            props.update({"line": d.line, "col": d.column, "endLine": d.end_line, "endColumn": d.end_column})
        prefix = "" if d.cell is None else f"cell {d.cell}:{d.line}:{d.column}: "
        prop_text = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
        out.append(f"::{severity(d.code)} {prop_text}::{escape_data(prefix + d.code + ' ' + d.message)}\n")
    return "".join(out)


def format_sarif(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    from .sarif import sarif_log

    return json.dumps(sarif_log(diagnostics), indent=2) + "\n"


FORMATTERS: Dict[str, Callable[..., str]] = {
    "text": format_text,
    "json": format_json,
    "github": format_github,
    "sarif": format_sarif,
}


def statistics(diagnostics: Sequence[Diagnostic], unsafe: bool, output_format: str) -> str:
    """``--statistics``: one row per code, most frequent first (ruff's layout; JSON for json)."""
    from .ruledocs import code_name

    rows: Dict[str, List[Diagnostic]] = {}
    for d in diagnostics:
        rows.setdefault(d.code, []).append(d)
    ordered = sorted(rows.items(), key=lambda item: (-len(item[1]), item[0]))
    if output_format == "json":
        return json.dumps([{"code": code, "name": code_name(code), "count": len(items),
                            "fixable": any(fixable(d, unsafe) for d in items)}
                           for code, items in ordered], indent=2) + "\n"
    width = max((len(str(len(items))) for _, items in ordered), default=1)
    lines = []
    for code, items in ordered:
        marker = "[*] " if any(fixable(d, unsafe) for d in items) else "    "
        lines.append(f"{len(items):>{width}}\t{code}\t{marker}{code_name(code)}")
    return "".join(line + "\n" for line in lines)
