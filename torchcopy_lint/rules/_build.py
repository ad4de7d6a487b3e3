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
