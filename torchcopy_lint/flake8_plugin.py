"""flake8 plugin (entry point ``flake8.extension``, prefix ``TCL``), for editors.

It reuses the lines flake8 already read and reports exactly what the CLI reports:
the file's ``[tool.torchcopy-lint]`` settings (the nearest pyproject.toml above it,
cached per directory) decide which rules run and whether the file is excluded;
flake8's own ``--select``/``--ignore`` and ``# noqa`` then apply on top. Columns are
0-based here, as flake8 expects; flake8 prints them 1-based, like the CLI. The source
goes to the engine as UTF-8 bytes, as the CLI's does, so that both take the same
(pruned) path; a file that declares another encoding goes as text. The engine (and
LibCST) is imported only for a file that passes the rules' prefilter. It never raises
into flake8 while linting: an internal error is reported as TCL003 (guard.py), and
input that would crash LibCST's parser never reaches it (precheck.py).

A broken configuration raises ConfigError, which flake8 reports as the plugin's
failure with the file, key and problem (one message, not a wrong result). flake8's
``--isolated`` concerns flake8's own configuration; ``[tool.torchcopy-lint]`` is read.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, List, Optional, Tuple, Type

from . import __version__
from .codes import RULE_CODES, may_match
from .settings.config import Settings, settings_for
from .parse.prune import declares_utf8


class TorchCopyLintPlugin:
    name = "torchcopy-lint"
    version = __version__

    def __init__(self, tree: object, lines: Optional[List[str]] = None, filename: str = "stdin") -> None:
        self.lines = lines or []
        self.filename = filename
        # Read here, not in run(): flake8 reports an exception raised here as the plugin's failure
        # with its message (a ConfigError names the file and the key), without a traceback.
        self.settings = settings_for(filename if filename not in ("stdin", "-") else ".")

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchCopyLintPlugin"]]]:
        settings = self.settings
        if self.filename not in ("stdin", "-") and _excluded(settings, self.filename):
            return
        codes = settings.codes_for(self.filename, RULE_CODES)
        text = "".join(self.lines)
        if not any(may_match(code, text) for code in codes):
            return  # no enabled rule can match: LibCST is not even imported
        from .run.guard import lint_in_host
        from .rules import RULES_BY_CODE

        head = "".join(self.lines[:2]).encode("utf-8", "replace")
        source = text.encode("utf-8", "surrogateescape") if declares_utf8(head) else text
        rules = [RULES_BY_CODE[code] for code in RULE_CODES if code in codes]
        for d in lint_in_host(source, self.filename, rules):
            yield d.line, d.column - 1, f"{d.code} {d.message}", type(self)


def _excluded(settings: Settings, filename: str) -> bool:
    """flake8 walks directories itself, so the file and the directories above it (up to the
    project root) are checked against the exclusions, as the CLI's walk would."""
    return dataclasses.replace(settings, force_exclude=True).is_force_excluded(filename)
