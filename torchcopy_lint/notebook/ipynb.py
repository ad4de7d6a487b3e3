"""``.ipynb`` files: read the code cells, write fixed cell sources back, diff them.

Read with the ``json`` module (nbformat is not needed at run time). Writing back
changes nothing but the fixed cells' ``source``: outputs, execution counts, ids and
metadata are the parsed objects themselves, and the file's JSON layout (indent, key
order, separators, ASCII escaping, line endings, final newline) is detected and
*checked*: the unchanged notebook must serialize back to exactly its own bytes
before a fixed one is written, otherwise the fix is refused and the file left as is.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..diagnostics import SYNTAX_ERROR_CODE, Diagnostic
from ..source.files import is_notebook  # noqa: F401  (re-exported: the notebook package's API)
from .magics import split_lines

BOM = b"\xef\xbb\xbf"


class NotebookError(ValueError):
    """The file is not a notebook this tool can read, or cannot be written back faithfully."""


@dataclass
class NotebookFile:
    data: Dict[str, Any]
    text: str  # the JSON text, decoded
    bom: bool = False

    @property
    def is_python(self) -> bool:
        """False for notebooks of another kernel language (R, Julia...): those are not linted."""
        metadata = _table(self.data, "metadata")
        language = _table(metadata, "kernelspec").get("language") or _table(metadata, "language_info").get("name")
        return not isinstance(language, str) or language.lower() in ("python", "python3", "ipython")

    def code_cells(self) -> List[Tuple[int, str]]:
        """(1-based cell number among all cells, source text) of the Python code cells, in order."""
        out = []
        for index, cell in enumerate(self.data["cells"]):
            if cell.get("cell_type") != "code":
                continue
            language = _table(_table(cell, "metadata"), "vscode").get("languageId")
            if isinstance(language, str) and language != "python":
                continue  # VS Code polyglot notebooks tag each cell
            out.append((index + 1, source_text(cell["source"])))
        return out

    def with_sources(self, sources: Dict[int, str]) -> bytes:
        """The file with the sources of some cells (by number) replaced, in the file's own layout."""
        if not sources:
            return self.encoded(self.text)
        dump = _layout(self.data, self.text)
        cells = self.data["cells"]
        patched = list(cells)
        for number, text in sources.items():
            cell = dict(cells[number - 1])
            cell["source"] = text if isinstance(cell["source"], str) else _as_lines(text)
            patched[number - 1] = cell
        return self.encoded(dump({**self.data, "cells": patched}))

    def encoded(self, text: str) -> bytes:
        return (BOM if self.bom else b"") + text.encode("utf-8")


def _table(data: Dict[str, Any], key: str) -> Dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def source_text(source: Any) -> str:
    return source if isinstance(source, str) else "".join(source)


def _as_lines(text: str) -> List[str]:
    """A cell source in nbformat's list form: lines keeping their ``\\n``."""
    return text.splitlines(keepends=True)


def read_notebook(content: bytes) -> NotebookFile:
    """Parse an ``.ipynb`` file; NotebookError if it is not a v4 notebook."""
    bom = content.startswith(BOM)
    try:
        text = content[len(BOM) if bom else 0:].decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8 ({error.reason} at byte {error.start})") from error
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise NotebookError(f"not valid JSON ({error})") from error
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        if isinstance(data, dict) and "worksheets" in data:
            raise NotebookError("nbformat 3 notebooks are not supported "
                                "(upgrade with `jupyter nbconvert --to notebook`)")
        raise NotebookError("no `cells` list: not a Jupyter notebook")
    for index, cell in enumerate(data["cells"]):
        source = cell.get("source") if isinstance(cell, dict) else None
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise NotebookError(f"cell {index + 1} has no valid `source`")
    return NotebookFile(data, text, bom)


def _layout(data: Dict[str, Any], text: str):
    """A function that writes a notebook exactly as ``text`` was written (checked on ``data``)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.rstrip("\r\n")
    end = text[len(body):]
    indent: Optional[str] = None
    lines = body.split(newline)
    if len(lines) > 1:
        second = lines[1]
        indent = second[:len(second) - len(second.lstrip(" \t"))]
    separators = [(",", ": "), (", ", ": ")] if indent is not None else [(", ", ": "), (",", ":")]
    for item, key in separators:
        def dump(value: Dict[str, Any], item: str = item, key: str = key) -> str:
            out = json.dumps(value, indent=indent, separators=(item, key), ensure_ascii=text.isascii())
            return (out.replace("\n", newline) if newline != "\n" else out) + end
        if dump(data) == text:
            return dump
    raise NotebookError("its JSON layout could not be reproduced exactly, so it is not rewritten")


def changed_cells(before: bytes, after: bytes) -> Dict[int, Tuple[str, str]]:
    """Cell number -> (old source, new source) for the code cells whose source differs."""
    old, new = read_notebook(before).data["cells"], read_notebook(after).data["cells"]
    return {index + 1: (source_text(a["source"]), source_text(b["source"]))
            for index, (a, b) in enumerate(zip(old, new)) if source_text(a["source"]) != source_text(b["source"])}


def notebook_diff(path: str, before: bytes, after: bytes) -> str:
    """A unified diff of each changed cell's source, headed ``path:cell N`` (as ruff does)."""
    out: List[str] = []
    for number, (old, new) in sorted(changed_cells(before, after).items()):
        name = f"{path}:cell {number}"
        out.extend(difflib.unified_diff(_diff_lines(old), _diff_lines(new), name, name))
    return "".join(out)


def _diff_lines(text: str) -> List[str]:
    lines = split_lines(text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of cell\n"
    return lines


def invalid_notebook(path: str, error: NotebookError) -> Diagnostic:
    return Diagnostic(path, 1, 1, 1, 1, SYNTAX_ERROR_CODE, f"cannot read notebook: {error}")
