"""Rewriting IR expressions (pure): names replaced by expressions. Interproc maps a
caller's names to the callee's; the access bounds spell atoms; dataflow spells a temporary
as the value it holds."""
from __future__ import annotations

import copy

from . import ir


def replace_names(e: ir.Expr, table: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with names replaced by copies of expressions. Subscripts of array references
    are replaced too, the arrays' own names are not."""
    if isinstance(e, ir.Name) and e.name in table:
        return copy.deepcopy(table[e.name])
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, replace_names(e.left, table), replace_names(e.right, table), ftype=e.ftype)
    if isinstance(e, ir.UnaryOp):
        return ir.UnaryOp(e.op, replace_names(e.operand, table), ftype=e.ftype)
    if isinstance(e, ir.FuncCall):
        return ir.FuncCall(e.name, [replace_names(a, table) for a in e.args], e.intrinsic, dict(e.keywords),
                           ftype=e.ftype)
    if isinstance(e, ir.ArrayRef):
        return ir.ArrayRef(e.name, [replace_names(a, table) for a in e.subscripts], ftype=e.ftype)
    if isinstance(e, ir.Slice):
        return ir.Slice(*(None if x is None else replace_names(x, table) for x in (e.lower, e.upper, e.step)),
                        ftype=e.ftype)
    return e


def replace_refs(e: ir.Expr, fn) -> ir.Expr:
    """``e`` with every array reference ``fn`` maps to an expression replaced by it (``fn``
    returns None to keep a reference, whose subscripts are then rewritten in turn)."""
    if isinstance(e, ir.ArrayRef):
        got = fn(e)
        if got is not None:
            return got
        return ir.ArrayRef(e.name, [replace_refs(a, fn) for a in e.subscripts], ftype=e.ftype)
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, replace_refs(e.left, fn), replace_refs(e.right, fn), ftype=e.ftype)
    if isinstance(e, ir.UnaryOp):
        return ir.UnaryOp(e.op, replace_refs(e.operand, fn), ftype=e.ftype)
    if isinstance(e, ir.FuncCall):
        return ir.FuncCall(e.name, [replace_refs(a, fn) for a in e.args], e.intrinsic, dict(e.keywords),
                           ftype=e.ftype)
    if isinstance(e, ir.Slice):
        return ir.Slice(*(None if x is None else replace_refs(x, fn) for x in (e.lower, e.upper, e.step)),
                        ftype=e.ftype)
    return e
