"""The data a lint run produces: diagnostics and the fixes attached to them.

These are plain, serialisable values (no CST nodes), so they can cross process
boundaries (parallel workers) and be stored in the result cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Dict, Optional


class Applicability(str, Enum):
    """How much a fix can be trusted, in ruff's vocabulary."""

    SAFE = "safe"  # keeps behaviour; applied by --fix
    UNSAFE = "unsafe"  # may change behaviour; needs --unsafe-fixes


@dataclass(frozen=True)
class Fix:
    """A replacement of the source between two (1-based line, 1-based column) points."""

    applicability: Applicability
    content: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int

    def to_json(self) -> Dict[str, Any]:
        data = asdict(self)
        data["applicability"] = self.applicability.value
        return data

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Fix":
        return cls(**{**data, "applicability": Applicability(data["applicability"])})


@dataclass(frozen=True)
class Diagnostic:
    """One finding. Lines and columns are 1-based; the end is exclusive.

    In a notebook, ``cell`` is the 1-based cell number (counting every cell, as ruff
    does) and the lines and columns, the fix's too, are inside that cell.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    message: str
    fix: Optional[Fix] = None
    cell: Optional[int] = None

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    @property
    def location(self) -> str:
        """``path`` or ``path:cell N``: what precedes ``:line:column`` in text output."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"

    def to_json(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
            "cell": self.cell,
        }

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Diagnostic":
        fix = data.get("fix")
        return cls(
            path=data["path"],
            line=data["line"],
            column=data["column"],
            end_line=data["end_line"],
            end_column=data["end_column"],
            code=data["code"],
            message=data["message"],
            fix=Fix.from_json(fix) if fix else None,
            cell=data.get("cell"),
        )


SYNTAX_ERROR_CODE = "TCL001"
"""Reported for a file that cannot be parsed (or read); never silenced by --select."""
