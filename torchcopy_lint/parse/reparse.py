"""Re-parse only what changed: an editor's buffer, parsed top-level statement by statement.

LibCST's parse is the largest cost of linting a file in the editor (57 of 142 ms on the
1,000-line latency file), and between two versions of a buffer most top-level statements
have the same text. A :class:`Reparser` (one per open document) cuts the source into
*chunks* at top-level statement boundaries that LibCST cannot attach to either side
differently (the lines between the statements are empty or column-0 comments, which LibCST
always gives to the next statement's ``leading_lines``), parses each chunk as a module of
its own, re-using the chunks whose text it parsed for the previous version, and assembles
the module. The result is the module ``cst.parse_module`` gives (tests/test_reparse.py
compares the trees node for node on real files and on random edits); whenever that cannot
be vouched for (CPython rejects the file, odd newlines or form feeds, chunks that disagree
on the default indent or newline, a chunk LibCST rejects) the whole text is parsed as usual.

The language server keeps one Reparser per open document (server/worker.py); the CLI parses
each file once and does not use it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst
from libcst._parser.detect_config import convert_to_utf8  # private, as positions.py's import; pinned <2
from libcst._parser.types.config import PartialParserConfig

from .cst_parse import parse_module
from .incremental_ast import IncrementalTree
from ..walk import block_paths

Source = Union[str, bytes]
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_MIN_CHUNKS = 4  # below this, chunking does not pay
_CONFIG = PartialParserConfig()


@dataclass
class Chunk:
    """One parsed chunk: its statements (as they sit in the assembled module) and what the
    assembly checks."""

    statements: Tuple[cst.BaseStatement, ...]
    header: Tuple[cst.EmptyLine, ...]  # the module header, when the chunk starts the file
    footer: Tuple[cst.EmptyLine, ...]
    default_indent: str
    default_newline: str
    has_trailing_newline: bool
    indented: bool  # whether it holds an indented block (which then set its default_indent)


class Reparser:
    """Parses successive versions of one document, re-using the chunks whose text did not change."""

    def __init__(self) -> None:
        self._chunks: Dict[Tuple[str, bool], List[Chunk]] = {}
        self.reused = self.parsed = 0  # chunk counts of the last parse (for tests and benchmarks)
        self.trees = IncrementalTree()  # CPython's tree of the document's versions (incremental_ast.py)

    def cpython_tree(self, source: bytes) -> Optional[ast.Module]:
        """``precheck.cpython_tree(source)``, compiling only what changed since the last version."""
        return self.trees.tree(source)

    def parse(self, source: Source, tree: Optional[ast.Module]) -> cst.Module:
        """``cst.parse_module(source)`` (same tree, same exceptions); ``tree`` is CPython's AST of
        ``source``, or None when CPython rejects it (or it is not of this text)."""
        assembled = self._assemble(source, tree) if tree is not None else None
        if assembled is None:
            self._chunks = {}
            return parse_module(source)
        return assembled

    def _assemble(self, source: Source, tree: ast.Module) -> Optional[cst.Module]:
        if isinstance(source, bytes) and source.startswith(b"\xef\xbb\xbf"):
            return None
        try:
            encoding, text = convert_to_utf8(source, partial=_CONFIG)
        except (UnicodeDecodeError, LookupError, SyntaxError):
            return None
        if "\r" in text or "\x0c" in text:  # keep to what ast and LibCST surely count alike
            return None
        lines = _LINE.findall(text)
        starts = chunk_starts(tree, lines)
        if len(starts) < _MIN_CHUNKS:
            return None
        previous, current = self._chunks, {}  # text -> chunks: a node object sits in one place of a tree only
        chunks: List[Tuple[int, Chunk]] = []
        reused = 0
        for index, first in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            key = ("".join(lines[first:end]), index == 0)
            same = previous.get(key)
            if same:
                chunk = same.pop()
                reused += 1
            else:
                chunk = _parse_chunk(*key)
                if chunk is None:
                    return None
            current.setdefault(key, []).append(chunk)
            chunks.append((first, chunk))
        module = _module(chunks, encoding)
        if module is None:
            return None
        self._chunks = current
        self.reused, self.parsed = reused, len(chunks) - reused
        return module


def chunk_starts(tree: ast.Module, lines: Sequence[str]) -> List[int]:
    """0-based lines where a chunk starts: line 0, and after each top-level statement that is
    followed only by empty lines and column-0 comments before the next (which LibCST gives to the
    next statement's ``leading_lines``, never to the footer of the previous statement's block)."""
    starts = [0]
    body = tree.body
    for before, after in zip(body, body[1:]):
        end = before.end_lineno or 0  # 1-based last line of ``before``
        first = min([after.lineno] + [d.lineno for d in getattr(after, "decorator_list", ())])
        if end >= first or end < 1 or lines[end - 1].rstrip("\n").endswith("\\"):
            continue
        gap = lines[end:first - 1]
        if all(line == "\n" or line.startswith("#") for line in gap):
            starts.append(end)
    return starts


def _parse_chunk(text: str, starts_file: bool) -> Optional[Chunk]:
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError:
        return None
    statements = tuple(module.body)
    if not statements:
        return None
    header = tuple(module.header)
    if not starts_file and header:  # what the whole file's parse gives the statement
        first = statements[0]
        statements = (first.with_changes(leading_lines=(*header, *first.leading_lines)), *statements[1:])
        header = ()
    indented = any(isinstance(path[-1], cst.IndentedBlock) for s in statements for path in block_paths(s, []))
    return Chunk(statements, header, tuple(module.footer), module.default_indent, module.default_newline,
                 module.has_trailing_newline, indented)


def _module(chunks: List[Tuple[int, Chunk]], encoding: str) -> Optional[cst.Module]:
    """The assembled module, or None when the chunks disagree on what the whole parse would infer."""
    newlines = {chunk.default_newline for _, chunk in chunks}
    indents = {chunk.default_indent for _, chunk in chunks if chunk.indented}
    if len(newlines) > 1 or len(indents) > 1 or any(chunk.footer for _, chunk in chunks[:-1]):
        return None
    first, last = chunks[0][1], chunks[-1][1]
    indent = next(iter(indents)) if indents else first.default_indent
    return cst.Module(body=[s for _, chunk in chunks for s in chunk.statements], header=first.header,
                      footer=last.footer, encoding=encoding, default_indent=indent,
                      default_newline=first.default_newline, has_trailing_newline=last.has_trailing_newline)
