"""The configuration a document is linted with: the CLI's, plus what the editor sets.

Like the CLI, the ``pyproject.toml`` found from the document's own path supplies
``[tool.torchcopy-lint]``; the client's settings (``initializationOptions`` or
``workspace/didChangeConfiguration``, either flat or under ``"torchcopy-lint"``)
may override ``select`` (replacing the file's select and extend-select, as
``--select`` does) and add to ``ignore`` (as ``--ignore`` does). Loaded files are
cached until the client reports a change to a ``pyproject.toml``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from ..codes import RULE_CODES
from ..config import ConfigError, Settings, _split_codes, find_pyproject, load_settings, validate_codes

log = logging.getLogger(__name__)

SECTION = "torchcopy-lint"


@dataclasses.dataclass(frozen=True)
class ClientSettings:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    delay_ms: Optional[int] = None  # debounce after a change

    @classmethod
    def from_client(cls, raw: Any) -> Tuple["ClientSettings", List[str]]:
        """Settings from what the client sent, and the problems found in it (unknown codes are dropped)."""
        if not isinstance(raw, dict):
            return cls(), []
        raw = raw.get(SECTION, raw)
        if not isinstance(raw, dict):
            return cls(), []
        problems: List[str] = []

        def codes(key: str) -> Tuple[str, ...]:
            value = raw.get(key) or ()
            if isinstance(value, str):
                value = [value]
            kept = []
            for code in _split_codes(str(v) for v in value):
                try:
                    validate_codes([code], RULE_CODES)
                    kept.append(code)
                except ConfigError as error:
                    problems.append(f"{key}: {error}")
            return tuple(kept)

        delay = raw.get("lintDelay")
        return cls(codes("select"), codes("ignore"), int(delay) if isinstance(delay, (int, float)) else None), problems


class SettingsResolver:
    """Enabled codes per document path; reports unreadable configuration once per file through ``warn``."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.client = ClientSettings()
        self._warn = warn
        self._pyproject_of: Dict[str, Optional[str]] = {}  # directory -> pyproject.toml (or None)
        self._loaded: Dict[Optional[str], Settings] = {}

    def _settings(self, path: str) -> Settings:
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in self._pyproject_of:
            self._pyproject_of[directory] = find_pyproject(directory)
        pyproject = self._pyproject_of[directory]
        if pyproject not in self._loaded:
            try:
                settings = load_settings(pyproject)
                validate_codes(settings.select + settings.ignore + settings.extend_select, RULE_CODES)
            except ConfigError as error:
                self._warn(f"{error}; linting with the default settings")
                settings = Settings()
            self._loaded[pyproject] = settings
        return self._loaded[pyproject]

    def codes_for(self, path: str) -> FrozenSet[str]:
        settings = self._settings(path)
        if self.client.select or self.client.ignore:
            settings = dataclasses.replace(settings)
            if self.client.select:
                settings.select, settings.extend_select = self.client.select, ()
            settings.ignore = tuple(settings.ignore) + self.client.ignore
        return settings.codes_for(path, RULE_CODES)

    def files_changed(self, paths: Sequence[str]) -> bool:
        """Forget what may have changed; True when configuration did (every document needs a re-lint)."""
        if any(os.path.basename(p) == "pyproject.toml" for p in paths):
            self._pyproject_of.clear()
            self._loaded.clear()
            return True
        return False
