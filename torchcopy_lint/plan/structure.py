"""The structural prefilter: from CPython's ``ast`` of a file, which rules can fire, and where.

The text prefilter (codes.py) passes a file when a rule's trigger words occur anywhere in it,
comments, strings and docstrings included. CPython's tree, which precheck.py builds anyway (at C
speed, ~10x faster than LibCST's parse), tells more: whether the call shapes, attribute names and
statement forms a rule needs occur in the code. ``plan`` reads each top-level statement once and
answers

- ``Plan.codes``: the rules that can possibly report in the file; a file none can report in never
  reaches LibCST (nor imports it);
- ``Plan.dropped``: the top-level statements that never reach LibCST (prune.py cuts their lines
  out; positions are mapped back): big *inert* statements (an assignment or expression with no
  call, no scope and no walrus: a data table, a vocabulary, a docstring) that no active rule can
  fire in and whose names occur nowhere else in the file's text, so that no other statement can
  read what they bind or see them read what it binds.

What a rule needs is declared here, importable without LibCST (as its text triggers in codes.py):
``NEEDS[code]`` is a tuple of groups of *shape tokens* (shapes.py says what each token is); a file can
hold a report of the rule only if it holds a token of every group (its top-level statements
together: the store and the write of TCL114 may lie in two of them; for the aliasing rules, whose
hazards lie on one flow scope's graph, in one scope: ``SCOPE_JOINED``). A rule with no entry is treated
conservatively: it is active wherever its text triggers pass, and with it active no statement is dropped.
tests/test_structure.py compares linting with and without this on real files.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, Union

from .scope_groups import SCOPE_JOINED, scope_groups
from .arguments import UNLESS, followed
from .unless_conditions import Bindings, breaks, conditions_held
from .training import PLACED_CALLS
from ..codes import (CONVERSION_METHODS, CREATION_FUNCTIONS, GRAPH_EVIDENCE, KIND_EVIDENCE, KIND_EVIDENCE_NOT_RETURNS,
                     LEGACY_CONSTRUCTORS, compile_trigger)
from .shapes import ALIAS_JOINS, Shape, shape_of

Needs = Tuple[FrozenSet[str], ...]


def _needs(*groups: Iterable[str]) -> Needs:
    return tuple(frozenset(group) for group in groups)


#: Per rule: the groups of shape tokens a statement must hold (one of each group) to hold a report.
NEEDS: Dict[str, Needs] = {
    "TCL101": _needs({"data:tensor"}),  # torch.tensor(x), x not a literal
    "TCL102": _needs({"method:new_tensor"}),  # x.new_tensor(t)
    "TCL103": _needs({"detach_of:clone"}),  # x.clone().detach(), torch.clone(x).detach()
    "TCL104": _needs({"data_write"}),  # p.data.add_(1), p.data = v, p.data[i] = v, f_(p.data)
    "TCL105": _needs({"training_call:deepcopy"}),  # copy.deepcopy(model) in a loop of code that trains
    "TCL106": _needs({"method:copy_"}, {"call:empty_like", "call:zeros_like", "call:ones_like"}),
    "TCL107": _needs({"tensors:tensor", "tensors:as_tensor"}),  # torch.tensor([a, b]), torch.as_tensor(xs)
    "TCL108": _needs({"one_arg:copy"}),  # copy.copy(t)
    "TCL109": _needs({"method:state_dict"}),  # best = model.state_dict()
    # `total += loss` / `total = total + loss` / `losses.append(loss)` in the loop that calls `loss.backward()`
    "TCL110": _needs({"method:backward"}, {"method:append", "form:augadd", "form:add"}),
    "TCL111": _needs({"stmt_conversion"}),  # a conversion method's call as a statement: `x.to(device)`
    # the aliasing rules: an alias made, and the storage of one of its sides written in place (by name)
    "TCL112": _needs({"listmul_written"}),  # xs = [t] * n, then xs[i].add_(1)
    "TCL113": _needs({"method:numpy", "call:from_numpy", "call:as_tensor", "call:asarray",
                      *("call:" + name for name in LEGACY_CONSTRUCTORS)}, {"bridge_written"}),
    "TCL114": _needs({"kept_written"}),  # best = w / hist.append(x), then w.add_(1) or opt.step()
    "TCL115": _needs({"detach_written"}),  # y = x.detach(), then y.zero_()
    "TCL116": _needs({"conv_of:" + c for c in CREATION_FUNCTIONS}),  # torch.zeros(n).to(d)
    "TCL117": _needs({"detach_of:" + m for m in CONVERSION_METHODS}),  # x.cpu().detach()
    "TCL118": _needs({"conv_of:clone"}),  # x.clone().to(d)
    "TCL119": _needs({"data_write"}),  # TCL104's writes, where no graph can be live
    "TCL120": _needs({"stmt_index_write"}),  # an in-place call on a subscript as a statement: `h[idx].zero_()`
}

#: Rules whose pruning (prune.py) the shapes refine: a top-level def or class (a method of a big class,
#: an element of a big literal) in which the rule's segment text occurs is kept for it only if the rule
#: can fire in it, or if this text, which marks what the semantic model reads elsewhere for the rule
#: (codes.KIND_EVIDENCE), occurs in it (None: nothing). Rules not listed are pruned by text alone.
SEGMENT_EVIDENCE: Dict[str, Optional[str]] = {
    "TCL101": KIND_EVIDENCE, "TCL102": KIND_EVIDENCE, "TCL103": None, "TCL104": GRAPH_EVIDENCE, "TCL105": None,
    "TCL106": None, "TCL107": KIND_EVIDENCE, "TCL108": KIND_EVIDENCE, "TCL109": None,
    # a hazard's alias, write and read lie in one scope (semantic/storage.py): one segment holds all of them
    "TCL119": GRAPH_EVIDENCE,
    **{code: KIND_EVIDENCE for code in ("TCL111", "TCL112", "TCL113", "TCL114", "TCL115", "TCL116", "TCL117",
                                        "TCL118", "TCL120")},
}

#: Rules whose ``unprunable`` text is a function imported under another name (calls text cannot find), which
#: the shapes resolve (``resolved``): with a plan, their segments are kept by shape alone (parsing.py).
ALIAS_SHAPED = frozenset({"TCL101", "TCL107", "TCL108", "TCL116"})

DROP_MIN = 2_000  # bytes: smaller statements cost LibCST little, and are kept (fewer line maps)
_MANY_NAMES = 32  # above this many distinct names, one scan of the file's words instead of one per name

def resolved(tokens: Set[str], aliases: Dict[str, str], bindings: Optional[Bindings] = None) -> Set[str]:
    """``tokens`` with calls of import aliases counted as calls of what they import, and the aliasing
    rules' joins: a name kept, repeated, detached or bridged (shapes.py) whose storage is written in place
    (``written:KEY``) in the same tokens gives ``kept_written``/``listmul_written``/``detach_written``/
    ``bridge_written``; a kept name and an optimizer's ``step()`` give ``kept_written`` too. A token held
    under arguments.UNLESS counts where the file (``bindings``: the names it binds and those it imports, None:
    not known) binds or imports one of the names it lists."""
    extra = set()
    plain = _PLAIN_TOKENS
    for token in tokens:
        if token in plain:
            continue
        if token.startswith(UNLESS):
            names, _, token = token[len(UNLESS):].partition("|")
            if bindings is not None and not any(breaks(name, bindings) for name in names.split(",")):
                continue
            extra.add(token)
        if token.startswith("name_"):
            kind, _, local = token[5:].partition(":")
            if local in aliases:
                extra.add(f"{kind}:{aliases[local]}")
            continue
        kind, colon, key = token.partition(":")
        joined = ALIAS_JOINS.get(kind) if colon else None
        if joined is None:
            if len(plain) < _PLAIN_MAX:
                plain.add(token)  # neither held, nor an alias's call, nor a join's: skipped at once next time
            continue
        if joined in extra:
            continue
        if "written:" + key in tokens or kind == "kept" and "method:step" in tokens:
            extra.add(joined)
    return tokens | extra if extra else tokens


#: Tokens ``resolved`` has seen that it passes on as they are (``attr:x``, ``call:f``, ``write``, ...): most of every
#: statement's tokens, met again and again.
_PLAIN_TOKENS: Set[str] = set()
_PLAIN_MAX = 200_000



def can_fire(code: str, tokens: Set[str]) -> bool:
    """Whether rule ``code`` can report in code holding ``tokens`` (True for a rule with no NEEDS)."""
    needs = NEEDS.get(code)
    return needs is None or all(not group.isdisjoint(tokens) for group in needs)


@dataclass
class Plan:
    """The structural prefilter's answer for one file (see the module docstring)."""

    codes: FrozenSet[str]
    dropped: FrozenSet[int] = frozenset()  # indices into the tree's top-level statements
    tree: Optional[ast.Module] = field(default=None, repr=False)  # handed on to the engine, then let go
    aliases: Dict[str, str] = field(default_factory=dict, repr=False)
    # the shape (unresolved tokens, names) of each top-level statement, by id with the statement (valid while
    # the tree lives)
    shapes: Dict[int, Tuple[ast.stmt, Shape]] = field(default_factory=dict, repr=False)
    scoped: bool = True  # TCL101/TCL107/TCL108's tokens refined by scope (arguments.followed)
    bindings: Optional[Bindings] = field(default=None, repr=False)  # the file's (None: not needed, or not known)
    source: Optional[bytes] = field(default=None, repr=False)
    _words: Optional[Dict[bytes, int]] = field(default=None, repr=False)  # the file's words, counted
    _named: Optional[Dict[str, int]] = field(default=None, repr=False)  # how many statements hold each identifier
    # the resolved tokens ``keeps`` read of each node, by id with the node
    _resolved: Dict[int, Tuple[ast.AST, Set[str]]] = field(default_factory=dict, repr=False, compare=False)

    def take_tree(self) -> Optional[ast.Module]:
        tree, self.tree = self.tree, None
        return tree

    def release(self) -> None:
        """Let go of the statements (the tree, once pruning is done) and of the file's text."""
        self.shapes = {}
        self._resolved = {}
        self.source = self._words = self._named = None

    def keeps(self, code: str, segment: bytes, node: ast.AST) -> bool:
        """Whether rule ``code``, whose segment text occurs in ``segment`` (the text of ``node``), needs
        ``node`` kept whole for pruning (see ``SEGMENT_EVIDENCE``)."""
        if code not in SEGMENT_EVIDENCE:
            return True
        evidence = SEGMENT_EVIDENCE[code]
        if evidence is not None and compile_trigger(evidence, True).search(segment) and (
                evidence != KIND_EVIDENCE or compile_trigger(KIND_EVIDENCE_NOT_RETURNS, True).search(segment)
                or self._named_outside(node, segment)):
            return True
        return can_fire(code, self._resolved_tokens(node))

    def _resolved_tokens(self, node: ast.AST) -> Set[str]:
        """``resolved`` of the shape tokens of ``node``, once per node (pruning asks for each active rule)."""
        found = self._resolved.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        known = self.shapes.get(id(node))
        raw = known[1].tokens if known is not None and known[0] is node \
            else shape_of(node, {}, self.scoped, as_method=True).tokens  # type: ignore[arg-type]
        tokens = resolved(raw, self.aliases, self.bindings)
        self._resolved[id(node)] = (node, tokens)
        return tokens

    def _named_outside(self, node: ast.AST, segment: bytes) -> bool:
        """Whether the function ``node`` (text ``segment``), annotated ``-> Tensor`` (or holding one that is), may
        be called from the rest of the file: another top-level statement holds its name as a name or an attribute
        (for a def in a class or a guard block: its name occurs elsewhere as a word, comments and strings included),
        or it is called without being named (``forward``, ``__call__``, any dunder), or it is no function. A
        function named nowhere else is no call's callee (the model follows names, not strings): its returns cannot
        contradict anything."""
        if node.__class__ not in (ast.FunctionDef, ast.AsyncFunctionDef) or self.source is None:
            return True
        name = node.name  # type: ignore[attr-defined]
        if name == "forward" or name.startswith("__") or not name.isascii():
            return True
        known = self.shapes.get(id(node))
        if known is not None and known[0] is node:  # a top-level def: the other statements' names and attributes
            if self._named is None:
                self._named = {}
                for _, each in self.shapes.values():
                    for identifier in _identifiers(each):
                        self._named[identifier] = self._named.get(identifier, 0) + 1
            return self._named.get(name, 0) > (name in _identifiers(known[1]))
        if self._words is None:  # a method or a def in a guard block: the words of the whole text
            self._words = {}
            for word in _WORD.findall(self.source):
                self._words[word] = self._words.get(word, 0) + 1
        encoded = name.encode()
        return self._words.get(encoded, 0) > sum(1 for word in _WORD.findall(segment) if word == encoded)

    @staticmethod
    def is_evidence(code: str, segment: bytes) -> bool:
        """Whether ``segment`` defines a Dataset's ``__getitem__``, from which the semantic model reads what a
        DataLoader yields, and rule ``code`` reads kinds: pruning keeps it whether or not the rule's own text
        occurs in it. (The rest of KIND_EVIDENCE, `-> Tensor` everywhere in torch, only where the rule's segment
        text has it.)"""
        return SEGMENT_EVIDENCE.get(code) == KIND_EVIDENCE and b"__getitem__" in segment


def _identifiers(shape: Shape) -> Set[str]:
    """The names and attribute names a statement holds (not its strings)."""
    return shape.names | {token[5:] for token in shape.tokens if token.startswith("attr:")}


def plan(tree: ast.Module, source: Union[str, bytes], codes: Iterable[str], remember: bool = False) -> Plan:
    """Which of ``codes`` (the rules the text prefilter passed) can fire in the file of ``tree``,
    and which top-level statements need not reach LibCST. ``remember``: re-use the shapes of statements
    whose text was planned before (an editor's buffer, planned again after each edit)."""
    codes = frozenset(codes)
    aliases: Dict[str, str] = {}
    shapes = _shapes(tree, source, aliases) if remember and isinstance(source, bytes) \
        else [shape_of(statement, aliases) for statement in tree.body]
    scoped = followed(aliases, source) and PLACED_CALLS.isdisjoint(aliases.values())
    if not scoped:  # rare: a guard or an annotation's name under another name
        shapes = [shape_of(statement, {}, scoped=False) for statement in tree.body]
    every: Set[str] = set()
    for shape in shapes:
        every |= shape.tokens
    bindings: Optional[Bindings] = None
    if any(token.startswith(UNLESS) for token in every):
        bindings = (frozenset().union(*(shape.bound for shape in shapes)),
                    frozenset().union(*(shape.imported for shape in shapes)),
                    conditions_held(tree, source, shapes, every, aliases))
    active = frozenset(code for code in codes if can_fire(code, resolved(every, aliases, bindings)))
    if not active.isdisjoint(SCOPE_JOINED):
        groups = scope_groups(tree, shapes, scoped)
        active = frozenset(code for code in active if code not in SCOPE_JOINED
                           or any(can_fire(code, resolved(group, aliases, bindings)) for group in groups))
    dropped: FrozenSet[int] = frozenset()
    if active and all(code in NEEDS for code in active) and isinstance(source, bytes):
        dropped = frozenset(_droppable(tree, source, shapes, active, aliases, bindings))
    return Plan(active, dropped, tree, aliases, {id(s): (s, shape) for s, shape in zip(tree.body, shapes)}, scoped,
                bindings, source if isinstance(source, bytes) else None)


_REMEMBERED: Dict[Tuple[bytes, int, int], Tuple[Shape, Dict[str, str]]] = {}
_REMEMBER = 4096  # statements


def _shapes(tree: ast.Module, source: bytes, aliases: Dict[str, str]) -> List[Shape]:
    """``shape_of`` of each top-level statement, from ``_REMEMBERED`` when its text was seen."""
    starts = line_starts(source)
    out = []
    for statement in tree.body:
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        last = statement.end_lineno or statement.lineno
        text = source[starts[first - 1]:starts[last] if last < len(starts) else len(source)]
        key = (text, statement.col_offset, statement.end_col_offset or 0)  # whole lines: `a; b` share them
        found = _REMEMBERED.get(key)
        if found is None:
            local: Dict[str, str] = {}
            found = _REMEMBERED[key] = (shape_of(statement, local), local)  # shared: never changed
            while len(_REMEMBERED) > _REMEMBER:
                del _REMEMBERED[next(iter(_REMEMBERED))]
        out.append(found[0])
        aliases.update(found[1])
    return out


def _droppable(tree: ast.Module, source: bytes, shapes: List[Shape], active: FrozenSet[str],
               aliases: Dict[str, str], bindings: Optional[Bindings]) -> List[int]:
    body = tree.body
    candidates = []
    starts: Optional[List[int]] = None
    for index, (statement, shape) in enumerate(zip(body, shapes)):
        if not shape.inert:
            continue
        tokens = resolved(shape.tokens, aliases, bindings)
        if any(can_fire(code, tokens) for code in active):
            continue
        if index > 0 and (body[index - 1].end_lineno or 0) >= statement.lineno:
            continue  # shares its first line with the statement before (`a = 1; T = [...]`)
        if index + 1 < len(body) and body[index + 1].lineno <= (statement.end_lineno or 0):
            continue  # ... or its last line with the next one
        if starts is None:
            starts = line_starts(source)
        start = starts[statement.lineno - 1]
        end = starts[statement.end_lineno] if statement.end_lineno < len(starts) else len(source)  # type: ignore[operator]
        if end - start < DROP_MIN or statement.col_offset != 0:
            continue
        candidates.append((index, start, end, shape.names))
    return [index for index, start, end, names in candidates if not _named_elsewhere(source, start, end, names)]


def line_starts(source: bytes) -> List[int]:
    """The offset of every line's first byte."""
    starts = [0]
    find = source.find
    at = find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = find(b"\n", at + 1)
    return starts


_WORD = re.compile(rb"[^\W\d]\w*")


def _named_elsewhere(source: bytes, start: int, end: int, names: Set[str]) -> bool:
    """Whether one of ``names`` occurs as a word in ``source`` outside ``[start, end)`` (comments and
    strings included: a superset of where the semantic model could see it)."""
    if not names:
        return False
    encoded = [name.encode("utf-8") for name in names]
    if any(not name.isascii() for name in encoded):
        return True  # identifiers are NFKC-normalised: a text search could miss one
    outside = (source[:start], source[end:])
    if len(encoded) > _MANY_NAMES:
        words = {w for part in outside for w in _WORD.findall(part)}
        return any(name in words for name in encoded)
    for name in encoded:
        pattern = re.compile(rb"(?<!\w)" + re.escape(name) + rb"(?!\w)")
        if any(pattern.search(part) for part in outside):
            return True
    return False


def plan_source(source: bytes, codes: Iterable[str]) -> Optional[Plan]:
    """``plan`` of ``source``, made on a deep stack without garbage collection (as the engine parses),
    before anything imports LibCST (the runner's worker: a file no rule can fire in never needs it).
    None when CPython's parser rejects the file (the engine then reports it, or leaves it to LibCST)."""
    from ..source.precheck import call_with_deep_stack, cpython_tree, gc_paused

    def make() -> Optional[Plan]:
        with gc_paused():
            try:
                tree = cpython_tree(source)
            except SyntaxError:  # nested too deeply: the engine reports it
                return None
            return plan(tree, source, codes) if tree is not None else None

    return call_with_deep_stack(make)
