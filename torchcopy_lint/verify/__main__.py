"""``python -m torchcopy_lint.verify``: the same as ``torchcopy-lint verify``."""

import sys

from . import main

sys.exit(main())
