"""torchcopy-lint: find, explain and fix PyTorch tensor/model copy hazards.

Linting is static and never imports torch; only ``torchcopy-lint verify`` and the
runtime test-suite do.
"""

__version__ = "0.1.0"
