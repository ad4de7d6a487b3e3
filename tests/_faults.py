"""Run the CLI with faults injected into the engine, to test that the run survives them.

``python tests/_faults.py ARGS...`` runs ``torchcopy-lint ARGS...`` after replacing
``engine.lint_source`` with a wrapper that, for a file whose text holds a marker,
really crashes or hangs the process linting it (a forked worker inherits the wrapper):

    # inject: segfault   -> SIGSEGV       # inject: exit  -> os._exit(3)
    # inject: hang       -> sleeps        # inject: raise -> RuntimeError
    # inject: slow-write -> --fix hangs in write_atomically, its temporary file written
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torchcopy_lint import cli, engine  # noqa: E402
from torchcopy_lint.fixing import fixer  # noqa: E402

_real_lint_source = engine.lint_source


def _faulty_lint_source(source, path, rule_types, *args, **kwargs):
    text = source if isinstance(source, bytes) else source.encode()
    if b"# inject: segfault" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    if b"# inject: exit" in text:
        os._exit(3)
    if b"# inject: hang" in text:
        time.sleep(600)
    if b"# inject: raise" in text:
        raise RuntimeError("injected fault")
    return _real_lint_source(source, path, rule_types, *args, **kwargs)


_real_write_atomically = fixer.write_atomically


def _slow_write_atomically(path, data):
    if b"# inject: slow-write" not in data:
        return _real_write_atomically(path, data)
    real_fsync = os.fsync
    os.fsync = lambda fd: time.sleep(600)  # the temporary file exists and holds the data by now
    try:
        return _real_write_atomically(path, data)
    finally:
        os.fsync = real_fsync


if __name__ == "__main__":
    engine.lint_source = _faulty_lint_source
    fixer.write_atomically = _slow_write_atomically
    sys.exit(cli.main(sys.argv[1:]))
