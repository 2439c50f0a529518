"""Loop sinking: a parallel loop whose body updates a column through loops over its rows,
turned into one band over (column, row).

A matrix product written a column at a time (the axpy form: a column scaled, then a column
update per term)::

    do j = 1, n                          ! parallel
       if (beta .eq. 0) then
          do i = 1, m; c(i, j) = 0; end do
       end if
       do l = 1, k                       ! serial: every l updates the column
          temp = alpha * b(l, j)
          do i = 1, m; c(i, j) = c(i, j) + temp * a(i, l); end do
       end do

is parallel over the columns only: on a GPU every thread walks its own column, adjacent
threads ``ldc`` elements apart. Sunk, the loops over ``i`` become one loop around the whole
body, each of its iterations running the rest for its element, in the same order::

    do j = 1, n                          ! parallel
       do i = 1, m                       ! parallel: a band of two, adjacent threads adjacent rows
          if (beta .eq. 0) c(i, j) = 0
          do l = 1, k
             temp = alpha * b(l, j)
             c(i, j) = c(i, j) + temp * a(i, l)

which register blocking (``translate/regblock.py``) then takes like the dot form.

Legal when the new loop over ``i`` is parallel -- the dependence analysis' verdict on the
built nest (``dependence.analyse_loops``): its iterations then touch nothing another writes,
so running each element's statements together instead of loop by loop changes no value.
The shape rules here make the rest true: outside the loops over ``i`` the body only assigns
scalars, branches and loops (no array is written, nothing is called, nothing leaves the
nest), what it reads there is nothing the loops over ``i`` write (so recomputing it per
element gives the same values), and every loop over ``i`` has the same bounds, read nothing
the body assigns. Each element still sees its terms in the original order: bit-identical.

On the host backends the original order is the fast one (the column update is the
contiguous, vectorised loop), so the nest keeps the original loop beside it
(``host_original``) and the host form runs that (``translate/interchanged.py``)."""
from __future__ import annotations

import copy
from typing import Iterator, Optional

from . import ir
from .interchange import _LEAVE, _lists, _names, _written, enclosing

_OUTSIDE = (ir.Assign, ir.If, ir.Do, ir.Continue)


def apply(k: ir.Kernel, fresh_context, visit) -> None:
    """Sink every column loop of ``k`` with the shape above where the built nest is a band of
    two parallel loops with nothing to combine (the new inner loop being parallel is what
    makes the turn legal); ``visit(stmts, enclosing loops, k, context)`` is the dependence
    analysis' pass that fills the loops' ``info``, ``fresh_context()`` a context for it."""
    rejected: set = set()
    while True:
        cand = next(((body, idx, do) for body, idx, do in candidates(k.body)
                     if (do.line, do.var) not in rejected), None)
        if cand is None:
            return
        body, idx, outer = cand
        new = build(outer)
        body[idx] = new
        visit([new], enclosing(k.body, new), k, fresh_context())
        if _plain(new) and new.info.tightly_nested_parallel >= 2 and _plain(new.body[0]):
            visit(k.body, [], k, fresh_context())  # the loops around it see the new nest
        else:
            body[idx] = outer
            rejected.add((outer.line, outer.var))


def candidates(body: list[ir.Stmt]) -> Iterator[tuple[list[ir.Stmt], int, ir.Do]]:
    """(statement list, index, loop) of every outermost parallel loop with the shape above."""
    for idx, s in enumerate(body):
        if isinstance(s, ir.Do):
            if s.info.parallel:
                if split(s) is not None:
                    yield body, idx, s
                continue
            yield from candidates(s.body)
        else:
            for child in _lists(s):
                yield from candidates(child)


def _plain(d: ir.Do) -> bool:
    i = d.info
    return bool(i.parallel and not i.reductions and not i.scattered and not i.inductions and i.condition is None
                and not i.early_exit)


def expr_key(e: Optional[ir.Expr]):
    """A structural key of an expression (names, literals, operators; no types or lines)."""
    if e is None:
        return None
    return tuple((type(x).__name__, getattr(x, "name", None), getattr(x, "op", None),
                  str(getattr(x, "value", "")) if isinstance(x, ir.Literal) else None)
                 for x in ir.walk_expr(e))


def split(outer: ir.Do) -> Optional[tuple[str, list[ir.Do]]]:
    """(the row variable, its loops) when ``outer``'s body can be sunk, else None."""
    if not _plain(outer) or outer.info.tightly_nested_parallel != 1:
        return None
    body = [s for s in outer.body if not isinstance(s, ir.Continue)]
    if len(body) == 1 and isinstance(body[0], ir.Do) and body[0].info.parallel:
        return None  # a band already
    if any(isinstance(s, _LEAVE) or not isinstance(s, _OUTSIDE)
           for s in ir.walk(outer.body)):
        return None
    first = next((s for s in ir.walk(outer.body) if isinstance(s, ir.Do) and _plain(s)), None)
    if first is None:
        return None
    var = first.var
    rows: list[ir.Do] = []
    read_out: list[ir.Expr] = []
    assigned_out: set[str] = set()

    def visit(stmts: list[ir.Stmt]) -> bool:  # the statements outside the loops over var
        for s in stmts:
            if isinstance(s, ir.Do) and s.var == var:
                if not _plain(s) or any(isinstance(x, ir.Do) and x.var == var for x in ir.walk(s.body)):
                    return False
                rows.append(s)
            elif isinstance(s, ir.Do):
                read_out.extend(x for x in (s.start, s.end, s.step) if x is not None)
                assigned_out.add(s.var)
                if not visit(s.body):
                    return False
            elif isinstance(s, ir.If):
                read_out.extend(c for c, _ in s.branches)
                if not all(visit(b) for _, b in s.branches) or not visit(s.else_body):
                    return False
            elif isinstance(s, ir.Assign):
                if not isinstance(s.target, ir.Name):
                    return False  # an array written once per column: not per element
                read_out.append(s.value)
                assigned_out.add(s.target.name)
        return True

    if not visit(outer.body) or not rows:
        return None
    head = (expr_key(rows[0].start), expr_key(rows[0].end), expr_key(rows[0].step))
    if any((expr_key(d.start), expr_key(d.end), expr_key(d.step)) != head for d in rows[1:]):
        return None
    bounds = _names([x for x in (rows[0].start, rows[0].end, rows[0].step) if x is not None])
    written = set().union(*(_written(d.body) for d in rows)) | {var}
    if bounds & (assigned_out | written):  # the rows' bounds: the same for every statement of the column
        return None
    if (_names(read_out) | assigned_out) & written:
        return None
    return var, rows


def build(outer: ir.Do) -> ir.Do:
    """The sunk nest (fresh statements: the original stays as it was, and is kept on the new
    loop as ``host_original``): ``outer`` around one loop over the rows, whose body is
    ``outer``'s with every loop over the rows replaced by its body."""
    var, rows = split(outer)
    head = rows[0]

    def strip(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.Do) and s.var == var:
                out.extend(copy.deepcopy(s.body))  # its CONTINUE too: C++ prints nothing for it
                continue
            s = copy.copy(s)
            if isinstance(s, ir.Do):
                s.body = strip(s.body)
                s.info = ir.LoopInfo()
            elif isinstance(s, ir.If):
                s.branches = [(copy.deepcopy(c), strip(b)) for c, b in s.branches]
                s.else_body = strip(s.else_body)
            else:
                s = copy.deepcopy(s)
            out.append(s)
        return out

    inner = ir.Do(var, copy.deepcopy(head.start), copy.deepcopy(head.end), copy.deepcopy(head.step),
                  strip(outer.body), line=outer.line, end_line=outer.end_line)
    new = ir.Do(outer.var, outer.start, outer.end, outer.step, [inner], construct_name=outer.construct_name,
                end_label=outer.end_label, line=outer.line, label=outer.label, end_line=outer.end_line)
    new.host_original = outer
    new.sunk_rows = var
    return new
