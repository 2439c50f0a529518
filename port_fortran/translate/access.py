"""Which names statements read and write.

Pure helpers over the IR used by the planner and the emitter (what may run on the host,
which names a kernel touches). Whether a value is live at a point is the dataflow
module's question (``fortran/dataflow.py``)."""
from __future__ import annotations

import re
from typing import Iterable, Optional

from ..fortran import ir


def own_exprs(s: ir.Stmt) -> list[ir.Expr]:
    """The expressions of ``s`` itself (not of nested statements)."""
    if isinstance(s, ir.Assign):
        out = [s.value]
        if isinstance(s.target, ir.ArrayRef):
            out += list(s.target.subscripts)
        return out
    if isinstance(s, ir.If):
        return [c for c, _ in s.branches]
    if isinstance(s, ir.Do):
        return [x for x in (s.start, s.end, s.step) if x is not None]
    if isinstance(s, ir.DoWhile):
        return [s.cond]
    if isinstance(s, ir.CallStmt):
        return list(s.args)
    if isinstance(s, ir.SelectCase):
        return [s.expr]
    if isinstance(s, ir.Where):
        return [s.mask]
    if isinstance(s, ir.ArithmeticIf):
        return [s.expr]
    if isinstance(s, ir.ComputedGoto):
        return [s.expr]
    return []


def names_in(e: ir.Expr) -> set[str]:
    out = set()
    for x in ir.walk_expr(e):
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            out.add(x.name)
    return out


def reads_own(s: ir.Stmt) -> set[str]:
    out: set[str] = set()
    for e in own_exprs(s):
        out |= names_in(e)
    return out


def reads_deep(stmts: Iterable[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in ir.walk(list(stmts)):
        out |= reads_own(s)
    return out


def names_changed(stmts: Iterable[ir.Stmt]) -> set[str]:
    """Names the statements (and those they hold) may change: assigned (whole or an element),
    DO variables, passed to a CALL or a user function, or named by a statement the IR does
    not model."""
    out: set[str] = set()
    for s in ir.walk(list(stmts)):
        if isinstance(s, ir.Assign):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt):
            for a in s.args:
                out |= names_in(a)
        elif isinstance(s, ir.Unsupported):
            out |= set(s.writes) if s.writes is not None else set(re.findall(r"[a-z_]\w*", s.text.lower()))
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    for a in x.args:
                        out |= names_in(a)
    return out


def scalars_written(stmts: Iterable[ir.Stmt], out_args: Optional[dict] = None) -> set[str]:
    """Scalars assigned (targets that are plain names), DO variables, and actual arguments
    passed to dummies that may be modified (``out_args``: callee name -> set of positions),
    by a CALL or by a user function referenced in an expression (Nekbone's PNLEG(Z, N)
    resets a tiny Z to 0)."""
    out: set[str] = set()

    def passed(name: str, args: list) -> None:
        for pos in out_args.get(name, ()):
            if pos < len(args) and isinstance(args[pos], ir.Name):
                out.add(args[pos].name)

    for s in ir.walk(list(stmts)):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt) and out_args is not None:
            passed(s.name, s.args)
        if out_args:
            for e in ir.stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.FuncCall) and not x.intrinsic:
                        passed(x.name, x.args)
    return out


def arrays_written(stmts: Iterable[ir.Stmt]) -> set[str]:
    return {s.target.name for s in ir.walk(list(stmts))
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.ArrayRef)}
