"""``--add-noqa``: suppress each remaining finding with a ``# noqa: CODE`` on its line.

A finding is suppressed by a noqa on the line where it starts (noqa.py), so that is
where the directive goes; an existing ``# noqa: X`` there is extended, not doubled.
The file keeps its encoding, BOM and line endings; a line that ends inside a string
or a backslash continuation cannot take a comment and is left alone (reported).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ..rulepass.noqa import NOQA_RE, noqa_codes

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


@dataclass
class NoqaResult:
    source: bytes
    added: int = 0
    skipped: List[int] = field(default_factory=list)  # lines that cannot take a comment


def _split_lines(text: str) -> List[Tuple[str, str]]:
    """(content, line ending) pairs; the ending is '' for a last line without one."""
    pairs = [(m.group(1), m.group(2)) for m in _LINE.finditer(text)]
    if pairs and pairs[-1] == ("", ""):
        pairs.pop()
    return pairs


def _commentable_lines(text: str) -> Tuple[Set[int], Dict[int, Tuple[int, str]]]:
    """Rows whose end is the end of a logical or physical line (not inside a string or after a
    backslash), and each row's comment as (column, text)."""
    rows: Set[int] = set()
    comments: Dict[int, Tuple[int, str]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if tok.type in (tokenize.NEWLINE, tokenize.NL):
            rows.add(tok.start[0])
        elif tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = (tok.start[1], tok.string)
    return rows, comments


def _directive(codes: Iterable[str]) -> str:
    return "# noqa: " + ", ".join(codes)


def _suppressed(content: str, codes: Iterable[str]) -> bool:
    existing = noqa_codes(content)
    return existing is not None and (not existing or all(any(c.startswith(e) for e in existing) for c in codes))


def _with_directive(content: str, codes: Iterable[str], comment: Optional[Tuple[int, str]]) -> str:
    """``content`` with ``codes`` merged into its noqa comment, or a new ``# noqa: ...`` at its end."""
    match = NOQA_RE.search(comment[1]) if comment else None
    if comment is not None and match is not None:
        kept = [c for c in re.split(r"[,\s]+", match.group("codes") or "") if c]
        merged = kept + sorted(c for c in codes if c not in kept)
        column, old = comment
        new_comment = old[:match.start()] + _directive(merged) + old[match.end():]
        return content[:column] + new_comment + content[column + len(old):]
    return content.rstrip(" \t") + "  " + _directive(sorted(codes))


def noqa_line(text: str, number: int, codes: Iterable[str]) -> Optional[str]:
    """Line ``number`` (1-based, without its ending) with ``codes`` added to its noqa directive, as
    ``--add-noqa`` writes it (the editor's "disable for this line"); None when the line is already
    suppressed for them, cannot take a comment (inside a string, after a backslash) or the text does
    not tokenize."""
    lines = _split_lines(text)
    if not 0 < number <= len(lines):
        return None
    try:
        rows, comments = _commentable_lines(text)
    except (tokenize.TokenError, SyntaxError):
        return None
    content = lines[number - 1][0]
    if _suppressed(content, codes) or number not in rows:
        return None
    return _with_directive(content, codes, comments.get(number))


def add_noqa_to_source(source: bytes, codes_by_line: Dict[int, Set[str]]) -> NoqaResult:
    """``source`` with a noqa directive for ``codes_by_line`` (1-based lines). Raises SyntaxError or
    UnicodeDecodeError for a file that does not tokenize."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    text = source.decode(encoding)
    lines = _split_lines(text)
    rows, comments = _commentable_lines(text)
    result = NoqaResult(source)
    for number, codes in sorted(codes_by_line.items()):
        if not 0 < number <= len(lines):
            continue
        content, ending = lines[number - 1]
        if _suppressed(content, codes):
            continue
        if number not in rows:
            result.skipped.append(number)
            continue
        lines[number - 1] = (_with_directive(content, codes, comments.get(number)), ending)
        result.added += 1
    if result.added:
        new_text = "".join(content + ending for content, ending in lines)
        _commentable_lines(new_text)  # still tokenizes (raises otherwise; nothing is written)
        result.source = new_text.encode(encoding)
    return result
