"""Loop interchange: a loop that is not parallel around one that is, turned inside out.

``y = y + A x`` written a column at a time (BLAS dgemv 'N', and every "update a vector
from each column" loop)::

    do j = 1, n                     ! serial: every j updates all of y
       temp = alpha * x(j)
       do i = 1, m                  ! parallel
          y(i) = y(i) + temp * a(i, j)

launches one kernel per column. Interchanged, the parallel loop is outside and each of its
iterations runs the other loop itself, in the same order (``temp`` recomputed per (i, j))::

    do i = 1, m                     ! parallel: one kernel, adjacent threads adjacent rows
       do j = 1, n
          temp = alpha * x(j)
          y(i) = y(i) + temp * a(i, j)

When the inner loop heads a band of perfectly nested parallel loops, the outer loop goes
below the whole band (``do ll; do k; do i`` -> ``do k; do i; do ll``), so no parallelism
is lost. The same turns "one independent recurrence per column" loops (``do i; do j: a(i, j) =
a(i - 1, j) ...``) into one kernel over the columns.

This module only finds the candidates and builds the interchanged nest; whether it may
replace the original is the dependence analysis' verdict on it (``dependence.analyse_loops``):
the new outer loop must be parallel, which holds exactly when no iteration of it touches
what another writes, for any values of the loop moved inside -- so each iteration's
statements keep the order they had. The shape rules here make the rest true: the body of
the outer loop is assignments to scalars and then the inner loop, nothing leaves the nest
early, the inner loop's bounds do not depend on the outer loop, and the scalar assignments
read nothing the inner loop writes (recomputing them per (i, j) gives the same values)."""
from __future__ import annotations

import copy
from typing import Iterator, Optional

from . import ir

_LEAVE = (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf, ir.Cycle, ir.Exit, ir.Return, ir.Stop, ir.Unsupported)


def candidates(body: list[ir.Stmt], arrays: set[str]) -> Iterator[tuple[list[ir.Stmt], int, ir.Do]]:
    """(statement list, index, loop) of every loop that is not parallel and has the shape
    above around a parallel loop, outermost first; none inside a parallel loop (the nest is
    one kernel already, and its inner order is the one the original chose for the cache)."""
    for idx, s in enumerate(body):
        if isinstance(s, ir.Do):
            if s.info.parallel:
                continue
            if split(s, arrays) is not None:
                yield body, idx, s
            yield from candidates(s.body, arrays)
        else:
            for child in _lists(s):
                yield from candidates(child, arrays)


def _lists(s: ir.Stmt) -> list[list[ir.Stmt]]:
    if isinstance(s, ir.If):
        return [b for _, b in s.branches] + [s.else_body]
    if isinstance(s, ir.DoWhile):
        return [s.body]
    if isinstance(s, ir.SelectCase):
        return [c.body for c in s.cases]
    return []


def split(outer: ir.Do, arrays: set[str]) -> Optional[tuple[list[ir.Assign], list[ir.Do]]]:
    """The scalar assignments and the parallel band inside a candidate (the inner loop and
    the parallel loops perfectly nested in it, ``tightly_nested_parallel``), else None."""
    stmts = [s for s in outer.body if not isinstance(s, ir.Continue)]
    if not stmts or not isinstance(stmts[-1], ir.Do) or not stmts[-1].info.parallel:
        return None
    inner, pre = stmts[-1], stmts[:-1]
    band = [inner]
    while len(band) < max(1, inner.info.tightly_nested_parallel):
        body = [s for s in band[-1].body if not isinstance(s, ir.Continue)]
        if len(body) != 1 or not isinstance(body[0], ir.Do):
            break
        band.append(body[0])
    if outer.var in {d.var for d in band} or any(not (isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)
                                                      and s.target.name not in arrays) for s in pre):
        return None
    if any(isinstance(s, _LEAVE) for s in ir.walk(outer.body)):
        return None
    assigned = {s.target.name for s in pre}
    band_bounds = _names([x for d in band for x in (d.start, d.end, d.step) if x is not None])
    outer_bounds = _names([x for x in (outer.start, outer.end, outer.step) if x is not None])
    if band_bounds & (assigned | {outer.var}) or outer_bounds & {d.var for d in band}:
        return None
    written = _written(band[-1].body) | {d.var for d in band}
    if (_names([s.value for s in pre]) | assigned) & written:
        return None
    return pre, band


def build(outer: ir.Do, arrays: set[str]) -> ir.Do:
    """The interchanged nest (fresh statements: the original stays as it was): the band
    outside, in its order, the outer loop inside it. The new outermost loop spans the
    original's lines, so a hybrid port outlines the same text."""
    pre, band = split(outer, arrays)
    tails = [[s for s in d.body if isinstance(s, ir.Continue)] for d in [outer] + band]
    node = ir.Do(outer.var, outer.start, outer.end, outer.step, copy.deepcopy(pre + band[-1].body),
                 end_label=band[-1].end_label, line=outer.line, end_line=band[-1].end_line)
    node.moved_pre = len(pre)  # the scalar statements first in its body (the host form keeps them outside)
    for d, tail in zip(reversed(band[1:]), reversed(tails[1:-1])):
        node = ir.Do(d.var, d.start, d.end, d.step, [node] + copy.deepcopy(tail),
                     end_label=d.end_label, line=d.line, end_line=d.end_line)
    new = ir.Do(band[0].var, band[0].start, band[0].end, band[0].step, [node] + copy.deepcopy(tails[0]),
                construct_name=outer.construct_name, end_label=outer.end_label,
                line=outer.line, label=outer.label, end_line=outer.end_line)
    new.info.interchanged = band[0].line
    new.source_nest = outer  # as the source wrote it: where the nest runs in one thread (source_order)
    return new


def source_order(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """The statements (a copy) with every interchanged or sunk nest back in the order the
    source wrote it. A routine's loops that run one after another in one thread -- a device
    function's body, called inside a kernel iteration -- gain nothing from a turned nest
    (the turn is for launch shape) and lose the original's cache order: TeaLeaf's
    tea_block_init, turned to walk each column over all rows, ran 2.3x gfortran's time."""
    return _restored(copy.deepcopy(body))


def _restored(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """``body`` (a copy of its own) with each turned nest replaced, in place, by the nest it
    keeps of the source (copied with it)."""
    out = []
    for s in body:
        if isinstance(s, ir.Do):
            s = getattr(s, "source_nest", None) or getattr(s, "host_original", None) or s
        for child in _child_lists(s):
            child[:] = _restored(child)
        out.append(s)
    return out


def _child_lists(s: ir.Stmt) -> list[list[ir.Stmt]]:
    if isinstance(s, ir.Do):
        return [s.body]
    if isinstance(s, ir.Where):
        return [s.body, s.elsewhere]
    return _lists(s)


def enclosing(body: list[ir.Stmt], target: ir.Stmt, outer=None) -> Optional[list[ir.Do]]:
    """The DO loops around ``target`` in ``body``, outermost first (None: not in it)."""
    outer = outer or []
    for s in body:
        if s is target:
            return outer
        inside = ir.children(s)
        if inside:
            found = enclosing(inside, target, outer + [s] if isinstance(s, ir.Do) else outer)
            if found is not None:
                return found
    return None


def _names(exprs) -> set[str]:
    return {x.name for e in exprs for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef, ir.FuncCall))}


def _written(stmts: list[ir.Stmt]) -> set[str]:
    """Names the statements may change: assignment targets, DO variables, call arguments."""
    out: set[str] = set()
    for s in ir.walk(stmts):
        if isinstance(s, ir.Assign):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt):
            out |= {a.name for a in s.args if isinstance(a, (ir.Name, ir.ArrayRef))}
        elif not isinstance(s, (ir.If, ir.Continue, ir.SelectCase, ir.DoWhile, ir.Where)):
            out |= _names(ir.stmt_exprs(s))  # anything else: whatever it mentions
    return out
