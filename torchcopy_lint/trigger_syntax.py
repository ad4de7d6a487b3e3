"""The regex vocabulary the prefilter's triggers (codes.py) are written in, and how a trigger is searched.

Triggers run on every file linted, so each is written to fail fast: literal-first (``word``), its top-level
alternatives searched one by one (``alternatives``), every gap matched one way only (``GAP``: no runaway
backtracking on hostile text). Importable without LibCST, as codes.py.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, List, Optional, Union

try:
    from re import _constants as _sre_constants, _parser as _sre_parser  # Python >= 3.11
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parser  # type: ignore[no-redef]

#: What may sit between two tokens of one expression: whitespace and newlines, comments and line
#: continuations (`f(  # note` + newline + `x)`). A comment runs to the end of its line, so every
#: character is matched one way only and a failing search cannot backtrack exponentially. Whitespace is ASCII, as
#: Python's is (not `\s`, which in a str trigger also takes U+00A0 and the like: IDENTIFIER_CHAR's, so a name next
#: to a gap could split many ways).
GAP = r"(?:[ \t\n\r\f\v]|\\(?=[\r\n])|#[^\r\n]*(?![^\r\n]))*"

#: An attribute's dot, with spaces or continuations after it (not GAP: a sentence's `.` in a comment or
#: docstring followed by a word on the next line is common, an attribute split that way is not).
DOT = r"\.[ \t\f]*(?:\\\r?\n[ \t\f]*)*"


def call_of(names: str) -> str:
    """The regex of ``names`` followed by ``(``, with any GAP between."""
    return names + GAP + r"\("


def word(name: str) -> str:
    r"""``\bname`` (``name`` starts a word), written literal-first as ``name(?<!\wname)``.

    Speed: a regex that starts with a literal is scanned for at C speed; one that starts with ``\b``,
    a lookbehind or a character class is tried at every position of the file (~10x slower), and every
    rule's triggers run on every file. For the same reason a trigger's top-level alternatives are
    searched one by one (``alternatives``): each starts with its own literal."""
    return name + r"(?<!\w" + name + ")"


#: One character of an identifier (an ASCII letter, digit or `_`, or any non-ASCII character or byte), one that may
#: start it (not a digit), one that is not `_`, and an ASCII character that is none of them: the same classes for
#: str and bytes triggers (bytes have no Unicode `\w`). Non-ASCII whitespace is no Python whitespace (GAP has
#: none); a class that left out `\s` would be ~1.6x slower.
IDENTIFIER_CHAR = r"[^\x00-/:-@\[-^`{-\x7f]"
IDENTIFIER_START = r"[^\x00-@\[-^`{-\x7f]"
NOT_UNDERSCORE = r"[^\x00-/:-@\[-`{-\x7f]"
NOT_IDENTIFIER = r"[\x00-/:-@\[-^`{-\x7f]"
#: A whole name: its characters up to the next that is none (a failing search does not retry its shorter prefixes).
NAME = IDENTIFIER_START + IDENTIFIER_CHAR + "*(?!" + IDENTIFIER_CHAR + ")"

_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def alternatives(pattern: str) -> List[str]:
    """``pattern`` split at its top-level ``|`` (not inside a group or a character class).

    The regex matches somewhere in a text if and only if one of its alternatives does; each is
    searched on its own, from its own literal (see ``word``). Leading global flags go with each."""
    flags = _FLAGS.match(pattern)
    prefix = flags.group() if flags else ""
    body = pattern[len(prefix):]
    parts: List[str] = []
    depth, start, i, in_class = 0, 0, 0, False
    while i < len(body):
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if body.startswith("^]", i + 1) else 1 if body.startswith("]", i + 1) else 0  # a leading ] is literal
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(prefix + body[start:i])
            start = i + 1
        i += 1
    parts.append(prefix + body[start:])
    return parts


#: Zero-width items of a parsed regex: the characters on either side of one are contiguous in every match.
_ZERO_WIDTH = (_sre_constants.AT, _sre_constants.ASSERT, _sre_constants.ASSERT_NOT)
#: A literal shorter than this is no gate: `)` or `=` occur in every file, and `in` costs a scan.
MIN_GATE = 3


def required_literal(pattern: Union[str, bytes]) -> Optional[Union[str, bytes]]:
    """The longest run of characters every match of ``pattern`` holds, contiguous (its top-level sequence's
    literals, zero-width assertions between them skipped); None when it has none of MIN_GATE characters,
    or ignores case. A text without it cannot match: ``literal in text`` (a scan at memchr speed) answers
    first, so a regex that starts with a frequent character (`)`, `=`) runs only where its rarer word occurs."""
    parsed = _sre_parser.parse(pattern)
    state = getattr(parsed, "state", None) or parsed.pattern  # type: ignore[attr-defined]  # `pattern` before 3.11
    if state.flags & re.IGNORECASE:
        return None
    runs: List[List[int]] = [[]]
    for op, argument in parsed:
        if op is _sre_constants.LITERAL:
            runs[-1].append(argument)
        elif op not in _ZERO_WIDTH:
            runs.append([])
    best = max(runs, key=len)
    if len(best) < MIN_GATE:
        return None
    return bytes(best) if isinstance(pattern, bytes) else "".join(map(chr, best))


class _Alternative:
    """One top-level alternative of a trigger: its regex, behind its required literal when it has one."""

    __slots__ = ("regex", "gate")

    def __init__(self, pattern: Union[str, bytes]) -> None:
        self.regex = re.compile(pattern)
        self.gate = required_literal(pattern)

    def search(self, text: Union[str, bytes]) -> bool:
        gate = self.gate
        return (gate is None or gate in text) and self.regex.search(text) is not None  # type: ignore[operator]


class Trigger:
    """A compiled trigger: ``search`` tells whether it occurs in a text (str or bytes, as compiled)."""

    def __init__(self, pattern: str, as_bytes: bool) -> None:
        self.pattern = pattern
        self.alternatives = tuple(_Alternative(p.encode() if as_bytes else p) for p in alternatives(pattern))

    def search(self, text: Union[str, bytes], memo: Optional[Dict["Trigger", bool]] = None) -> bool:
        """Whether the trigger occurs in ``text``; ``memo``: answers already found in this text (several rules
        share a trigger, `IN_PLACE_WRITE`: it is searched once per file)."""
        if memo is not None:
            found = memo.get(self)
            if found is None:
                found = memo[self] = any(a.search(text) for a in self.alternatives)
            return found
        return any(a.search(text) for a in self.alternatives)


@lru_cache(maxsize=None)
def compile_trigger(pattern: str, as_bytes: bool) -> Trigger:
    return Trigger(pattern, as_bytes)
