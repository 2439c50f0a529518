"""Which names statements read and write, and whether a scalar is live after a point.

Pure helpers over the IR used by the planner (what may run on the host, what a kernel
must copy in and out)."""
from __future__ import annotations

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


def scalars_written(stmts: Iterable[ir.Stmt], out_args: Optional[dict] = None) -> set[str]:
    """Scalars assigned (targets that are plain names), DO variables, and actual arguments
    passed to dummies that may be modified (``out_args``: callee name -> set of positions)."""
    out: set[str] = set()
    for s in ir.walk(list(stmts)):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt) and out_args is not None:
            for pos in out_args.get(s.name, ()):
                if pos < len(s.args) and isinstance(s.args[pos], ir.Name):
                    out.add(s.args[pos].name)
    return out


def arrays_written(stmts: Iterable[ir.Stmt]) -> set[str]:
    return {s.target.name for s in ir.walk(list(stmts))
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.ArrayRef)}


def scan(name: str, stmts: list[ir.Stmt]) -> Optional[str]:
    """'read' if ``name`` may be read in ``stmts`` before it is certainly assigned,
    'killed' if it is certainly assigned first, None if not touched."""
    for s in stmts:
        if name in reads_own(s):
            return "read"
        if isinstance(s, ir.Assign):
            if isinstance(s.target, ir.Name) and s.target.name == name:
                return "killed"
            continue
        if isinstance(s, ir.Do) and s.var == name:
            return "killed"
        if isinstance(s, (ir.Do, ir.DoWhile)):
            if scan(name, s.body) == "read":
                return "read"
            continue  # the body may run zero times: no certain assignment
        if isinstance(s, ir.If):
            if any(scan(name, b) == "read" for _, b in s.branches) or scan(name, s.else_body) == "read":
                return "read"
            continue
        if name in reads_deep(ir.children(s)):
            return "read"
        if isinstance(s, ir.CallStmt) and any(isinstance(a, ir.Name) and a.name == name for a in s.args):
            return "read"
    return None


class Continuation:
    """What runs after a point: frames of (following statements, enclosing loop body or
    None), innermost first, and the names live at the routine's end."""

    def __init__(self, frames: list, live_at_end: set[str]):
        self.frames = frames
        self.live_at_end = live_at_end

    def push(self, following: list[ir.Stmt], loop_body: Optional[list[ir.Stmt]] = None) -> "Continuation":
        return Continuation([(following, loop_body)] + self.frames, self.live_at_end)

    def live(self, name: str) -> bool:
        for following, loop_body in self.frames:
            r = scan(name, following)
            if r == "read":
                return True
            if r == "killed":
                return False
            if loop_body is not None and scan(name, loop_body) == "read":
                return True  # read by the next iteration before being assigned
        return name in self.live_at_end
