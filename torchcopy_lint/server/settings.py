"""The configuration a document is linted with: the CLI's, plus what the editor sets.

Like the CLI and the flake8 plugin, each document takes the nearest ``pyproject.toml``
with a ``[tool.torchcopy-lint]`` table (``config.settings_for``). The client's settings
(``initializationOptions``, ``workspace/didChangeConfiguration`` or
``workspace/configuration``, flat or under ``"torchcopy-lint"``) are one more layer on
top, as the command line's is: ``select`` starts afresh, ``extend-select`` adds,
``ignore`` removes.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, FrozenSet, List, Optional, Sequence, Tuple

from ..codes import RULE_CODES
from ..settings.config import ConfigError, Overrides, Selection, Settings, forget_config_locations, settings_for, split_selectors

log = logging.getLogger(__name__)

SECTION = "torchcopy-lint"


@dataclasses.dataclass(frozen=True)
class ClientSettings:
    overrides: Overrides = Overrides()
    delay_ms: Optional[int] = None  # debounce after a change

    @classmethod
    def from_client(cls, raw: Any) -> Tuple["ClientSettings", List[str]]:
        """Settings from what the client sent, and the problems found in it (bad selectors are dropped)."""
        if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
            raw = raw[SECTION]
        if not isinstance(raw, dict):
            return cls(), []
        problems: List[str] = []

        def selectors(key: str) -> Optional[Tuple[str, ...]]:
            value = raw.get(key)
            if value is None:
                return None
            kept: List[str] = []
            for item in [value] if isinstance(value, str) else value:
                try:
                    kept.extend(split_selectors([str(item)], key))
                except ConfigError as error:
                    problems.append(str(error))
            return tuple(kept)

        selection = Selection(selectors("select"), selectors("extend-select") or (), selectors("ignore") or ())
        delay = raw.get("lintDelay")
        delay_ms = int(delay) if isinstance(delay, (int, float)) and not isinstance(delay, bool) else None
        return cls(Overrides(selection=selection), delay_ms), problems


class SettingsResolver:
    """Enabled codes per document path; a broken configuration is reported through ``warn``."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.client = ClientSettings()
        self._warn = warn

    def settings_for(self, path: str) -> Settings:
        try:
            settings = settings_for(path)
        except ConfigError as error:
            self._warn(f"{error}; linting with the default settings")
            settings = Settings()
        return self.client.overrides.apply(settings)

    def codes_for(self, path: str) -> FrozenSet[str]:
        return self.settings_for(path).codes_for(path, RULE_CODES)

    def timeout_for(self, path: str) -> float:
        """The per-file time budget (``file-timeout``; 0: none), as the CLI's."""
        return self.settings_for(path).file_timeout

    def files_changed(self, paths: Sequence[str]) -> None:
        """A ``pyproject.toml`` created, deleted or edited may move which one a directory uses."""
        if any(p.endswith("pyproject.toml") for p in paths):
            forget_config_locations()
