"""SARIF 2.1.0 output (GitHub code scanning and other viewers).

Valid against the OASIS schema with its format checks (tests/test_output.py): every
rule is described in ``tool.driver.rules`` (derived from the code table, so the meta
codes such as TCL001 are there too) with its docs page embedded as ``help`` (no
relative links); each result names its rule by ``ruleId`` and ``ruleIndex``; file
locations are URI references (relative ones resolved against ``%SRCROOT%``, the
working directory). Columns are counted in Unicode code points, as the CLI's are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Sequence
from urllib.parse import quote

from .. import __version__
from ..codes import ALL_CODES, META_CODES, severity
from ..diagnostics import Diagnostic
from .ruledocs import code_name, doc_page

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _description(code: str) -> str:
    if code in META_CODES:
        return META_CODES[code][:1].upper() + META_CODES[code][1:] + "."
    from ..rules import RULES_BY_CODE

    rule = RULES_BY_CODE.get(code)
    return rule.message if rule is not None else code


def rule_descriptor(code: str) -> Dict[str, Any]:
    text = _description(code)
    page = doc_page(code) or f"# {code_name(code)} ({code})\n\n{text}\n"
    return {
        "id": code,
        "name": code_name(code),
        "shortDescription": {"text": text},
        "help": {"text": page, "markdown": page},
        "defaultConfiguration": {"level": severity(code)},
    }


def artifact_location(path: str) -> Dict[str, str]:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    rel = os.path.normpath(path).replace(os.sep, "/")
    return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}


def _result(d: Diagnostic, rule_index: int) -> Dict[str, Any]:
    """One result. A notebook cell's lines are not lines of the .ipynb file: such a result has no
    region; its message and ``properties`` name the cell, line and column instead."""
    location: Dict[str, Any] = {"artifactLocation": artifact_location(d.path)}
    message = d.message
    extra: Dict[str, Any] = {}
    if d.cell is None:
        location["region"] = {"startLine": d.line, "startColumn": d.column,
                              "endLine": max(d.end_line, d.line), "endColumn": max(d.end_column, 1)}
    else:
        message = f"cell {d.cell}:{d.line}:{d.column}: {message}"
        extra["properties"] = {"cell": d.cell, "line": d.line, "column": d.column,
                               "endLine": d.end_line, "endColumn": d.end_column}
    return {"ruleId": d.code, "ruleIndex": rule_index, "level": severity(d.code), "message": {"text": message},
            "locations": [{"physicalLocation": location}], **extra}


def sarif_log(diagnostics: Sequence[Diagnostic]) -> Dict[str, Any]:
    codes: List[str] = list(ALL_CODES)
    codes += sorted({d.code for d in diagnostics} - set(codes))  # never a result without its rule
    index = {code: i for i, code in enumerate(codes)}
    results = [_result(d, index[d.code]) for d in diagnostics]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "torchcopy-lint", "version": __version__,
                                "rules": [rule_descriptor(code) for code in codes]}},
            "originalUriBaseIds": {SRCROOT: {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
