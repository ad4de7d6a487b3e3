"""Where a file's absolute imports are looked for, besides the project root and ``src/``.

- A file in a package nested below the project root (``repo/.git``, ``repo/research/trainer/*.py``
  with ``__init__.py``) imports as Python run from the package's parent folder would:
  ``import trainer.models`` finds ``repo/research/trainer/models.py``. The folder is the parent of the
  outermost ``__init__.py`` chain around the file (pyright resolves such imports from the importing
  file's local folders; this is the folder ``python -m trainer.train`` is run from).
- A script outside any package imports from its own folder (as ``python script.py`` does).
- The ``src`` setting (ruff's name) lists more roots, relative to the configuration's folder.

The project root and its ``src/`` come first, then these, in this order.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

from ..settings import environment


def package_parent(directory: str) -> str:
    """The folder above the outermost package (``__init__.py`` chain) that holds ``directory``."""
    top = directory
    while os.path.isfile(os.path.join(top, "__init__.py")):
        parent = os.path.dirname(top)
        if parent == top:
            break
        top = parent
    return top


def library_folder(folder: str) -> bool:
    """Whether ``folder`` is an installation's library folder (site-packages, the stdlib): never a
    root of the project's own modules, even for a file linted there (torch's installed sources)."""
    return os.path.basename(folder).endswith("-packages") or os.path.isfile(os.path.join(folder, "os.py"))


def local_root(path: str, root: str) -> Optional[str]:
    """The folder a file's own absolute imports start from when it is not the project root (or its
    ``src/``): a script's folder, or the parent of the package the file is in; None otherwise."""
    directory = os.path.dirname(os.path.abspath(path))
    local = package_parent(directory)
    return None if local in (root, os.path.join(root, "src")) or library_folder(local) else local


def configured_roots(path: str) -> Tuple[str, ...]:
    """The ``src`` setting for ``path`` (absolute folders that exist), in the order given."""
    return tuple(folder for folder in environment.run_setting(path, "src") or () if os.path.isdir(folder))
