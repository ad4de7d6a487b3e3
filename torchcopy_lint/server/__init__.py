"""``torchcopy-lint server``: a language server (LSP over stdio) with diagnostics, quick fixes and fix-all.

Needs the ``server`` extra (pygls, lsprotocol); nothing on the linting path imports it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="torchcopy-lint server",
                                     description="Run the language server on stdin/stdout (for editors).")
    parser.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="what to log (default: WARNING; INFO adds each lint's time)")
    parser.add_argument("--log-file", default=None, help="log to this file instead of stderr")
    args = parser.parse_args(list(argv or ()))
    try:
        from .app import create_server
    except ImportError as error:
        print(f"torchcopy-lint: error: the server needs pygls: pip install 'torchcopy-lint[server]' ({error})",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level, format="torchcopy-lint %(levelname)s %(message)s",
                        **({"filename": args.log_file} if args.log_file else {"stream": sys.stderr}))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the LSP stream
    create_server().start_io(stdin, stdout)
    return 0
