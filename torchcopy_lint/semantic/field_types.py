"""``<anything>.name`` where every store to an attribute called ``name`` in the file makes one class's instance.

Code that hangs a record on objects it does not own (``module.eigens = Eigens(U=.., V=..)`` in one function,
``module.eigens.U.clone().to(device)`` in another) gives the reader no type for ``module``, but the file says what
``.eigens`` holds: if every store to an attribute of that name, on whatever object, is an instance of the same class
of this file, a read of it is that class's instance, and its fields are what the class declares (a dataclass's
``U: torch.Tensor``). Any other store makes the name unknown: another class, a value of another kind, a store the
file does not spell out (``setattr(obj, "eigens", ..)``, a tuple target, ``del obj.eigens``, an augmented
assignment), or the name bound in a class body. Stores in other files are not seen: evidence from this file only.

Read from CPython's tree of the whole file's text, not from the LibCST tree the rules walk: that one may hold only the
statements a rule needs (pruned, or parsed in segments), and the stores are elsewhere. Parsed only for a name some
text of the file stores (``.eigens =``), once per file.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from ..codes import attribute_makers
from .kinds import UNKNOWN, Kind, Value

#: A store of the name the file does not spell out as ``obj.name = value``: the name is unknown.
_UNSPELLED = None


class FieldTypes:
    """Per file, what every store to an attribute of a given name makes (computed on first use)."""

    def __init__(self, model) -> None:
        self.model = model
        self._text: Optional[str] = None
        self._stores: Optional[Dict[str, List[Optional[ast.expr]]]] = None
        self._top: Dict[str, Optional[ast.stmt]] = {}  # the file's top-level classes and functions, by name
        self._answers: Dict[str, Value] = {}

    def of(self, e, base: Optional[Value], depth: int) -> Value:
        """The value of ``e`` (``<base>.name``) where its base says nothing of it (unknown, or a module of unknown
        class, which may carry any attribute): the one class every store makes."""
        if base is not None and base.kind is not Kind.UNKNOWN and not (base.kind is Kind.MODULE and base.cls is None):
            return UNKNOWN
        name = e.attr.value
        if name not in self._answers:
            self._answers[name] = self._stored_class(name)
        return self._answers[name]

    def _stored_class(self, name: str) -> Value:
        text = self._source()
        if text is None or not attribute_makers(text, name):
            return UNKNOWN  # no store of a call of a top-level class or function of the file: not parsed
        stores = self._all_stores(text).get(name)
        if not stores:
            return UNKNOWN
        made = {self._instance_of(value) for value in stores}
        cls = made.pop() if len(made) == 1 else None
        if cls is None:
            return UNKNOWN
        node = self.model.module_classes.get(cls)
        if node is not None:
            return self.model.classes.instance(node)
        own = getattr(self.model.project, "module_name", None)  # the class statement was cut out: the index's
        return Value(Kind.RECORD, f"{own}.{cls}") if own else UNKNOWN

    def _source(self) -> Optional[str]:
        if self._text is None:
            source = self.model.whole_source
            self._text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        return self._text

    def _instance_of(self, value: Optional[ast.expr]) -> Optional[str]:
        """The class of this file whose instance ``value`` makes: ``C(..)``, or ``f(..)`` of a function of this
        file annotated ``-> C``; None for anything else."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        top = self._top
        made = top.get(value.func.id)
        if isinstance(made, ast.FunctionDef) and made.returns is not None:
            returns = made.returns
            name = returns.id if isinstance(returns, ast.Name) else returns.value \
                if isinstance(returns, ast.Constant) and isinstance(returns.value, str) else None
            made = top.get(name) if name is not None else None
        return made.name if isinstance(made, ast.ClassDef) else None

    def _all_stores(self, text: str) -> Dict[str, List[Optional[ast.expr]]]:
        """Attribute name -> the value of each ``obj.name = value`` in the file (``_UNSPELLED`` for other stores)."""
        if self._stores is None:
            self._stores = {}
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return self._stores
            for stmt in tree.body:  # the file's own classes and functions, each bound once at the top level
                if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)):
                    self._top[stmt.name] = stmt if stmt.name not in self._top else None
            for node in ast.walk(tree):
                self._note(node)
        return self._stores

    def _note(self, node: ast.AST) -> None:
        add = self._add
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            add(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            add(node.target, _UNSPELLED)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                add(target, _UNSPELLED)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            self._stores.setdefault(node.args[1].value, []).append(_UNSPELLED)  # type: ignore[union-attr]
        elif isinstance(node, ast.ClassDef):  # a name bound in a class body: its instances' default too
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
                    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
                for target in targets:
                    if isinstance(target, ast.Name):
                        self._stores.setdefault(target.id, []).append(_UNSPELLED)  # type: ignore[union-attr]

    def _add(self, target: ast.expr, value: Optional[ast.expr]) -> None:
        if isinstance(target, ast.Attribute):
            self._stores.setdefault(target.attr, []).append(value)  # type: ignore[union-attr]
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for element in target.elts if not isinstance(target, ast.Starred) else [target.value]:
                self._add(element, _UNSPELLED)
