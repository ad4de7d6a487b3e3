"""The data a lint run produces: diagnostics and the fixes attached to them.

These are plain, serialisable values (no CST nodes), so they can cross process
boundaries (parallel workers) and be stored in the result cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Dict, Optional

from .codes import INTERNAL_ERROR_CODE, SYNTAX_ERROR_CODE, TIMEOUT_CODE

__all__ = ["Applicability", "Fix", "Diagnostic", "SYNTAX_ERROR_CODE", "file_diagnostic", "failed_to_lint",
           "internal_error", "over_budget"]


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


REPORT_TO = "the torchcopy-lint issue tracker"


def file_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A diagnostic about a whole file (meta codes), at ``line``:``column``."""
    return Diagnostic(path, line, column, line, column, code, message)


def failed_to_lint(path: str, reason: str) -> Diagnostic:
    """TCL003: linting ``path`` failed for a reason of ours, not the user's (ruff's "Failed to lint")."""
    return file_diagnostic(path, INTERNAL_ERROR_CODE,
                           f"failed to lint {path}: {reason}; please report this to {REPORT_TO}")


def internal_error(path: str, error: BaseException) -> Diagnostic:
    """TCL003 for an exception raised while linting ``path``."""
    detail = (str(error).splitlines() or [""])[0][:300]
    return failed_to_lint(path, f"{type(error).__name__}: {detail}" if detail else type(error).__name__)


def over_budget(path: str, seconds: float) -> Diagnostic:
    """TCL004: the file took longer than the per-file time budget."""
    return file_diagnostic(path, TIMEOUT_CODE, f"not linted: took longer than the per-file time budget of "
                                               f"{seconds:g} s (--file-timeout / file-timeout)")
