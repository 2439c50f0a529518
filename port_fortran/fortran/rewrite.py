"""Rewriting IR expressions (pure): names replaced by expressions. Interproc maps a
caller's names to the callee's; the access bounds spell atoms; dataflow spells a temporary
as the value it holds."""
from __future__ import annotations

import copy

from . import ir


def transform(e: ir.Expr, fn) -> ir.Expr:
    """``e`` rebuilt with every node ``fn`` maps to an expression replaced by it (``fn``
    returns None to keep a node, whose children are then rewritten in turn)."""
    got = fn(e)
    if got is not None:
        return got
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, transform(e.left, fn), transform(e.right, fn), ftype=e.ftype)
    if isinstance(e, ir.UnaryOp):
        return ir.UnaryOp(e.op, transform(e.operand, fn), ftype=e.ftype)
    if isinstance(e, ir.FuncCall):
        return ir.FuncCall(e.name, [transform(a, fn) for a in e.args], e.intrinsic, dict(e.keywords), ftype=e.ftype)
    if isinstance(e, ir.ArrayRef):
        return ir.ArrayRef(e.name, [transform(a, fn) for a in e.subscripts], ftype=e.ftype)
    if isinstance(e, ir.Slice):
        return ir.Slice(*(None if x is None else transform(x, fn) for x in (e.lower, e.upper, e.step)),
                        ftype=e.ftype)
    return e


def replace_names(e: ir.Expr, table: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with names replaced by copies of expressions. Subscripts of array references
    are replaced too, the arrays' own names are not."""
    return transform(e, lambda x: copy.deepcopy(table[x.name]) if isinstance(x, ir.Name) and x.name in table
                     else None)


def replace_refs(e: ir.Expr, fn) -> ir.Expr:
    """``e`` with every array reference ``fn`` maps to an expression replaced by it (``fn``
    returns None to keep a reference, whose subscripts are then rewritten in turn)."""
    return transform(e, lambda x: fn(x) if isinstance(x, ir.ArrayRef) else None)
