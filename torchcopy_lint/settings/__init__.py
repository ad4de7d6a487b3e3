"""Settings: what applies to a file before it is read.

In: a file's path, and the command line's or the editor's overrides. Out: its ``Settings`` (the
selected codes, exclusions, per-file ignores; ``config.py``, read from ``[tool.torchcopy-lint]`` in
pyproject.toml and checked against ``config_schema.py``) and the project's Python ``Environment``
(``environment.py``: its site-packages, found from the settings or the shell; ``python_env.py``
reads a prefix without running it), which the project index (semantic/) reads installed packages
from. Imports only ``codes`` below it.
"""
