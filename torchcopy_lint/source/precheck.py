"""What is checked before LibCST sees a file, so that no input can crash the process.

- ``decode_problem``: a file Python cannot decode (UTF-16/32, bad bytes, an unknown
  or wrong coding cookie, null bytes) is reported, even if no rule's trigger occurs
  in it. Cheap: a pure-ASCII file with no cookie costs one ``isascii`` scan.
- ``cpython_tree``: CPython's own parser (C speed, ~10x faster than LibCST's) runs
  first. It rejects nesting it cannot handle (more than 200 brackets, thousands of
  chained operators) with a SyntaxError, RecursionError or MemoryError; LibCST's
  native parser would overflow its stack (a segmentation fault) or take minutes on
  the same input. The tree it returns is reused for pruning (prune.py).
- ``call_with_deep_stack``: LibCST's parser and the rules recurse on the machine
  stack; a thread with a large stack keeps legal but deep code (10,000 chained
  ``and``) from overflowing it. The stack is virtual memory, touched only as used.

Other SyntaxErrors are left to LibCST: it accepts syntax newer than the running
interpreter (``match`` on 3.9), which must stay lintable.
"""

from __future__ import annotations

import ast
import codecs
import gc
import re
import sys
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Tuple, TypeVar, Union

from ..diagnostics import SYNTAX_ERROR_CODE, Diagnostic, file_diagnostic

T = TypeVar("T")

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
# PEP 263: a coding declaration in a comment on one of the first two lines.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")

Problem = Tuple[int, int, str]  # line, column (1-based), reason


def _declared_encoding(source: bytes) -> Optional[bytes]:
    if source.startswith(codecs.BOM_UTF8):
        source = source[len(codecs.BOM_UTF8):]
    lines = source.split(b"\n", 2)[:2]
    for index, line in enumerate(lines):
        found = _COOKIE.match(line)
        if found:
            return found.group(1)
        if index == 0 and not _BLANK_OR_COMMENT.match(line):
            break  # the cookie may only be on line 2 if line 1 is blank or a comment
    return None


def _position(source: bytes, offset: int) -> Tuple[int, int]:
    line = source.count(b"\n", 0, offset) + 1
    return line, offset - (source.rfind(b"\n", 0, offset) + 1) + 1


def decode_problem(source: bytes) -> Optional[Problem]:
    """Why Python could not decode ``source`` (line, column, reason), or None if it can."""
    for bom, name in _BOMS:
        if source.startswith(bom):
            return 1, 1, (f"file is {name}-encoded (it starts with a {name} byte-order mark); "
                          "Python source must use an ASCII-compatible encoding such as UTF-8")
    null = source.find(b"\0")
    if null >= 0:
        return (*_position(source, null), "source contains a null byte")
    cookie = _declared_encoding(source)
    if cookie is None and source.isascii():
        return None
    encoding = "utf-8"
    if cookie is not None:
        name = cookie.decode("ascii", "replace")
        try:
            encoding = codecs.lookup(name).name
        except LookupError:
            return 1, 1, f"unknown encoding in the coding declaration: {name!r}"
        if "#\n".encode(encoding, "replace") != b"#\n":
            return 1, 1, f"the coding declaration names {name!r}, which is not ASCII-compatible as Python requires"
        if source.startswith(codecs.BOM_UTF8) and encoding != "utf-8":
            return 1, 1, f"the file starts with a UTF-8 byte-order mark but declares the encoding {name!r}"
    try:
        source.decode(encoding)
    except UnicodeDecodeError as error:
        line, column = _position(source, error.start)
        return line, column, f"cannot be decoded as {encoding}: {error.reason} (byte 0x{source[error.start]:02x})"
    except LookupError as error:  # a codec that cannot decode bytes (e.g. 'rot13')
        return 1, 1, f"unusable encoding in the coding declaration: {error}"
    return None


def decode_diagnostic(path: str, source: bytes) -> Optional[Diagnostic]:
    """TCL001 for a file Python cannot decode, or None."""
    problem = decode_problem(source)
    if problem is None:
        return None
    line, column, reason = problem
    return file_diagnostic(path, SYNTAX_ERROR_CODE, f"cannot decode file: {reason}", line, column)


# CPython's messages for nesting it cannot handle (the tokenizer's and the PEG parser's).
_TOO_DEEP = ("too many nested parentheses", "too complex", "too many nested", "stack overflow")
_CPYTHON_LIMIT = 1000  # the default recursion limit: CPython's verdict must not depend on the caller's


class TooDeeplyNested(SyntaxError):
    """CPython's parser gives up on the nesting: LibCST's must never see the file."""


@contextmanager
def compiler_warnings_ignored() -> Iterator[None]:
    """CPython's warnings about the code it compiles (an invalid escape ``"\\d"``: a SyntaxWarning from 3.12), which
    it prints as ``<unknown>:2: SyntaxWarning: ...``: about the linted file, and not this tool's to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def parsed_or_none(source: Union[str, bytes]) -> Optional[ast.Module]:
    """``ast.parse(source)`` without the compiler's warnings, None when it cannot be parsed: how the project index
    reads a module (its summary, a definition) that it only needs when it parses."""
    try:
        with compiler_warnings_ignored():
            return ast.parse(source)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError, OverflowError):
        return None


def cpython_tree(source: Union[str, bytes], path: str = "<unknown>") -> Optional[ast.Module]:
    """CPython's AST of ``source``, or None for a syntax error LibCST is left to judge.

    Raises TooDeeplyNested (a SyntaxError) for nesting beyond CPython's limits."""
    limit = sys.getrecursionlimit()
    if limit > _CPYTHON_LIMIT:  # up to 3.11 the AST depth limit scales with it
        sys.setrecursionlimit(_CPYTHON_LIMIT)
    try:
        with compiler_warnings_ignored():
            tree = compile(source, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                           dont_inherit=True)
    except SyntaxError as error:
        if any(text in (error.msg or "") for text in _TOO_DEEP):
            raise _too_deep(error.msg, error.lineno or 1, error.offset or 1) from None
        return None
    except (RecursionError, MemoryError) as error:
        raise _too_deep(str(error) or type(error).__name__, 1, 1) from None
    except (ValueError, UnicodeError):
        return None
    finally:
        if limit > _CPYTHON_LIMIT:
            sys.setrecursionlimit(limit)
    return tree  # type: ignore[return-value]


def _too_deep(detail: str, line: int, column: int) -> TooDeeplyNested:
    error = TooDeeplyNested(f"nested too deeply for Python's parser ({detail})")
    error.lineno, error.offset = line, column
    return error


def syntax_error_diagnostic(path: str, error: Exception, source: Optional[Union[str, bytes]] = None) -> Diagnostic:
    """TCL001, located and worded by CPython's own parser when it agrees the file is invalid."""
    if isinstance(error, TooDeeplyNested):  # CPython's verdict already, and compiling again would recurse
        return file_diagnostic(path, SYNTAX_ERROR_CODE, f"syntax error: {error.msg}", error.lineno or 1,
                               error.offset or 1)
    line = getattr(error, "raw_line", 1) or 1
    column = (getattr(error, "raw_column", 0) or 0) + 1
    message = getattr(error, "message", None) or str(error).splitlines()[0]
    if source is not None:
        try:
            with compiler_warnings_ignored():
                compile(source, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        except SyntaxError as cpython:
            line, column = cpython.lineno or line, cpython.offset or column
            message = cpython.msg
        except (ValueError, UnicodeDecodeError) as other:  # null bytes, bad encodings
            message = str(other)
        except (RecursionError, MemoryError):
            pass  # keep LibCST's words
    return file_diagnostic(path, SYNTAX_ERROR_CODE, f"syntax error: {message}", max(1, line), max(1, column))


DEEP_STACK = 512 * 1024 * 1024  # bytes of address space; only the pages used are committed
DEEP_RECURSION = 60_000  # Python frames on it: ~9 KiB of stack each at most, far above CPython's use
_stack_lock = threading.Lock()


def call_with_deep_stack(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` on a thread with a large machine stack; its exception is re-raised here."""
    outcome: List[Any] = []

    def target() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # handed to the caller
            outcome.append((False, error))

    limit = sys.getrecursionlimit()
    raised = limit < DEEP_RECURSION
    if raised:  # process-wide too: raised while the deep thread runs, then put back
        sys.setrecursionlimit(DEEP_RECURSION)
    try:
        with _stack_lock:  # threading.stack_size is process-wide: set it only around the start
            previous = threading.stack_size(DEEP_STACK)
            try:
                thread = threading.Thread(target=target, name="torchcopy-lint-deep-stack", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
    except (RuntimeError, ValueError, MemoryError):  # no thread (or no such stack) to be had
        if raised:
            sys.setrecursionlimit(limit)
        return function(*args)
    try:
        thread.join()
    finally:
        if raised and sys.getrecursionlimit() == DEEP_RECURSION:
            sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if ok:
        return value
    raise value


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is linted.

    A file's tree and model are all alive until its diagnostics are made, so collections during
    the lint find nothing to free, and each full one walks the whole tree again: for big files
    that made the time grow faster than the file (benchmarks/scaling.py). The file's cyclic
    garbage is collected after it, as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
