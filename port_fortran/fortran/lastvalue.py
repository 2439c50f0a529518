"""Scalars a parallel loop hands on: the value after the loop is the last iteration's.

A temporary assigned in every iteration and read after the loop (a COMMON scratch scalar
of a line solve, NPB's ``tmp1`` in ``/work_lhs/``, whose value the routine leaves in the
block; a dummy the caller reads; a local read later) keeps a loop serial as long as only
one copy of it exists. Each iteration can have its own copy when the iteration's work does
not depend on the others' values of it: every read in the iteration follows an assignment
in the same iteration, or no iteration assigns it at all. The copy starts with the value
from before the loop (what a read sees when the loops around the assignments run zero
times, in every iteration alike) and the sequentially last iteration hands its copy's final
value back (``translate/emit.py``), which is the value Fortran leaves.

The analysis is structural and conservative: it refuses a loop with a statement that cuts
an iteration short, an assignment under a condition or in a loop whose trip count can
differ between iterations (the last iteration might then not assign it while an earlier
one did), and a call that is passed the scalar."""
from __future__ import annotations

from typing import Iterable, Optional

from . import ir

_CUT = (ir.Cycle, ir.Exit, ir.Goto, ir.Return, ir.Stop, ir.Unsupported, ir.DoWhile)


def names_in(exprs: Iterable[Optional[ir.Expr]]) -> set[str]:
    return {x.name for e in exprs if e is not None for x in ir.walk_expr(e)
            if isinstance(x, (ir.Name, ir.ArrayRef))}


def _own_reads(s: ir.Stmt) -> set[str]:
    """Names the statement itself reads (not the statements it holds; not an assignment's
    target, whose subscripts it does read)."""
    if isinstance(s, ir.Assign):
        subs = s.target.subscripts if isinstance(s.target, ir.ArrayRef) else []
        return names_in([s.value, *subs])
    if isinstance(s, ir.Do):
        return names_in([s.start, s.end, s.step])
    return names_in(ir.stmt_exprs(s))


def _changed(body: list[ir.Stmt], sites=None) -> set[str]:
    """Names an iteration may change: assignment targets, DO variables, actual arguments of
    calls (those the callee may write, when ``sites`` -- accesses.CallSites -- knows it)."""
    out: set[str] = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt):
            written = sites.written(s.name, len(s.args)) if sites is not None else None
            out |= {a.name for q, a in enumerate(s.args) if isinstance(a, (ir.Name, ir.ArrayRef))
                    and (written is None or q in written)}
    return out


def _user_call(exprs: Iterable[Optional[ir.Expr]]) -> bool:
    return any(isinstance(x, ir.FuncCall) and not x.intrinsic for e in exprs if e is not None
               for x in ir.walk_expr(e))


def last_private_scalar(name: str, loop: ir.Do, sites=None) -> bool:
    """Can every iteration of ``loop`` work on its own copy of the scalar ``name``, started
    from the value before the loop, with the last iteration's final value being the one
    Fortran leaves? (see the module docstring)."""
    walked = list(ir.walk(loop.body))
    if any(isinstance(s, _CUT) for s in walked):
        return False
    if any(isinstance(s, ir.CallStmt) and name in names_in(s.args) for s in walked):
        return False
    changed = _changed(loop.body, sites) | {loop.var}

    def invariant(do: ir.Do) -> bool:
        exprs = [do.start, do.end, do.step]
        return not (names_in(exprs) & changed) and not _user_call(exprs)

    assigned = False
    found = False

    def block(stmts: list[ir.Stmt]) -> bool:
        nonlocal assigned, found
        for s in stmts:
            if name in _own_reads(s) and not assigned:
                return False  # a read that may see another iteration's value
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
                assigned = found = True
            elif isinstance(s, ir.Do):
                if not invariant(s):
                    if any(isinstance(t, ir.Assign) and t.target.name == name for t in ir.walk(s.body)):
                        return False  # iterations may run it different numbers of times
                    if not assigned and name in names_in(e for t in ir.walk(s.body) for e in ir.stmt_exprs(t)):
                        return False
                    continue
                if not block(s.body):
                    return False
            else:
                inner = list(ir.walk([s]))[1:]
                if any(isinstance(t, ir.Assign) and t.target.name == name for t in inner):
                    return False  # assigned only on some paths
                if not assigned and any(name in _own_reads(t) for t in inner):
                    return False
        return True

    return block(loop.body) and found
