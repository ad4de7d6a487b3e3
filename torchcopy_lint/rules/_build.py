"""Small builders for fix replacements, shared by the rules.

Replacements reuse the user's own sub-expressions (with their comments and
formatting) and only synthesise the method-call glue around them.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import libcst as cst

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict, cst.Set,
          cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.SimpleString,
          cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)


def as_receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` made safe to put before ``.method()``: parenthesised unless it is an atom."""
    if expr.lpar or isinstance(expr, _ATOMS) and not isinstance(expr, (cst.Integer, cst.Float)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method(receiver: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    """``receiver.name(args)``."""
    return cst.Call(func=cst.Attribute(value=as_receiver(receiver), attr=cst.Name(name)), args=list(args))


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def keyword_values(call: cst.Call, allowed: Sequence[str]) -> Optional[Dict[str, cst.BaseExpression]]:
    """The keyword arguments after the first positional one, or None if any is not in ``allowed``
    (or is positional, starred, or repeated): the caller then offers no fix."""
    values: Dict[str, cst.BaseExpression] = {}
    for arg in call.args[1:]:
        if arg.keyword is None or arg.star or arg.keyword.value not in allowed or arg.keyword.value in values:
            return None
        values[arg.keyword.value] = arg.value
    return values


def strip_trailing_comma(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)


def swapped(node: cst.Call, inner: cst.Call) -> cst.Call:
    """``x.a(A).b(B)`` -> ``x.b(B).a(A)`` (``inner`` is ``x.a(A)``, ``node`` the whole call), by swapping the
    method names and argument lists in place: every dot, parenthesis and comment of the chain stays where
    the user put it."""
    first, second = inner.func, node.func
    assert isinstance(first, cst.Attribute) and isinstance(second, cst.Attribute)
    moved = inner.with_changes(func=first.with_changes(attr=second.attr), args=node.args,
                               whitespace_before_args=node.whitespace_before_args)
    return node.with_changes(func=second.with_changes(value=moved, attr=first.attr), args=inner.args,
                             whitespace_before_args=inner.whitespace_before_args)


def with_keywords(call: cst.Call, values: Dict[str, cst.BaseExpression]) -> cst.Call:
    """``call`` with each keyword of ``values`` set: an existing one gets the new value in place, the others
    are appended (after a trailing comma the layout of the last argument is repeated)."""
    args = [arg.with_changes(value=values[arg.keyword.value]) if arg.keyword is not None
            and arg.keyword.value in values else arg for arg in call.args]
    present = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    missing = [keyword(name, value) for name, value in values.items() if name not in present]
    if not missing:
        return call.with_changes(args=args)
    if args and isinstance(args[-1].comma, cst.Comma):  # a trailing comma: it stays last, the new arguments
        trailing = args[-1].comma                         # are laid out like those before them
        between = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else trailing
        args[-1] = args[-1].with_changes(comma=between)
        missing = [arg.with_changes(comma=between) for arg in missing[:-1]] + [missing[-1].with_changes(comma=trailing)]
    elif args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        missing = [arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                   for arg in missing[:-1]] + missing[-1:]
    return call.with_changes(args=args + missing)


def call_before(node: cst.Call, name: str) -> Optional[cst.Call]:
    """``x.a(...)`` when ``node`` is ``x.a(...).name()`` (``name`` called without arguments)."""
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value != name or node.args \
            or not isinstance(func.value, cst.Call):
        return None
    return func.value


def short_code(context, expr: cst.BaseExpression, limit: int = 40) -> str:
    """```expr``` (quoted) for a message, on one line; "the tensor" when it is longer than ``limit``."""
    code = " ".join(context.module.code_for_node(expr).split())
    return f"`{code}`" if len(code) <= limit else "the tensor"
