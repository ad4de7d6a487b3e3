"""``python -m torchcopy_lint`` is the ``torchcopy-lint`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
