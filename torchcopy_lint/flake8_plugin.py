"""flake8 plugin (entry point ``flake8.extension``, prefix ``TCL``), for editors.

It reuses the lines flake8 already read and reports exactly what the CLI reports
(flake8 applies ``# noqa`` and ``--select`` itself). Columns are 0-based here,
as flake8 expects; flake8 prints them 1-based, like the CLI. The source goes to
the engine as UTF-8 bytes, as the CLI's does, so that both take the same
(pruned) path; a file that declares another encoding goes as text. The engine
(and LibCST) is imported only for a file that passes the rules' prefilter. It never
raises into flake8: an internal error is reported as TCL003 (guard.py), and input
that would crash LibCST's parser never reaches it (precheck.py).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple, Type

from . import __version__
from .codes import may_match_any
from .prune import declares_utf8


class TorchCopyLintPlugin:
    name = "torchcopy-lint"
    version = __version__

    def __init__(self, tree: object, lines: Optional[List[str]] = None, filename: str = "stdin") -> None:
        self.lines = lines or []
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchCopyLintPlugin"]]]:
        text = "".join(self.lines)
        if not may_match_any(text):
            return  # no rule can match: LibCST is not even imported
        from .guard import lint_in_host

        head = "".join(self.lines[:2]).encode("utf-8", "replace")
        source = text.encode("utf-8", "surrogateescape") if declares_utf8(head) else text
        for d in lint_in_host(source, self.filename):
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)
