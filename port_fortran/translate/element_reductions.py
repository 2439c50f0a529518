"""Sums into one array element, as sums into a scalar: ``x(i)`` reduced over ``j``.

The dependence analysis finds a reduction into an element the loop does not move
(``x(i) = x(i) - a(j, i) * x(j)`` over ``j = 1, i - 1`` in a triangular solve, a norm
``r(k, k)`` summed over ``i``): every statement touching the element is an update of one
operator, and the loop's other reads of the array never name it (``arraytest.never_same``).
A parallel reduce accumulates into a scalar, so before planning such a loop is rewritten
as Fortran would allow::

    pf_rN = x(i)
    do j = 1, i - 1
      pf_rN = pf_rN - a(j, i) * x(j)
    end do
    x(i) = pf_rN

which the planner then launches as a scalar reduction with the value from before the loop.
Only loops that no enclosing loop runs in parallel are rewritten: inside a parallel
iteration the element's loop runs serially in the iteration anyway (gemm's inner ``k``).
"""
from __future__ import annotations

import copy

from ..fortran import ir
from ..fortran.reductions import same_expr
from ..fortran.rewrite import transform
from .symbols import SymbolTable


def scalarize_element_reductions(body: list[ir.Stmt], tab: SymbolTable) -> list[ir.Stmt]:
    return _rewrite(body, tab, False)


def _rewrite(stmts: list[ir.Stmt], tab: SymbolTable, inside_parallel: bool) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in stmts:
        if isinstance(s, ir.Do):
            info = s.info
            parallel = bool(info is not None and info.parallel)
            if parallel and not inside_parallel:
                pre, post = _scalarize(s, tab)
                out += pre
                s.body = _rewrite(s.body, tab, True)
                out.append(s)
                out += post
                continue
            s.body = _rewrite(s.body, tab, inside_parallel or parallel)
        elif isinstance(s, ir.If):
            s.branches = [(c, _rewrite(b, tab, inside_parallel)) for c, b in s.branches]
            s.else_body = _rewrite(s.else_body, tab, inside_parallel)
        elif isinstance(s, ir.DoWhile):
            s.body = _rewrite(s.body, tab, inside_parallel)
        elif isinstance(s, ir.SelectCase):
            for c in s.cases:
                c.body = _rewrite(c.body, tab, inside_parallel)
        out.append(s)
    return out


def _scalarize(do: ir.Do, tab: SymbolTable) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
    """(statements before the loop, after it) for each element reduction of ``do``, the
    loop's updates rewritten to the scalar and its Reduction made a scalar one."""
    pre: list[ir.Stmt] = []
    post: list[ir.Stmt] = []
    for r in do.info.reductions:
        if r.target is None or r.section is not None or not isinstance(r.target, ir.ArrayRef):
            continue
        target = r.target
        sym = tab.new_temp("r", target.ftype)
        name = ir.Name(sym.name, ftype=target.ftype)

        def swap(e: ir.Expr) -> ir.Expr:
            return transform(e, lambda x: copy.deepcopy(name) if isinstance(x, ir.ArrayRef) and same_expr(x, target)
                             else None)
        for st in ir.walk(do.body):
            if isinstance(st, ir.Assign) and same_expr(st.target, target):
                st.target = copy.deepcopy(name)
                st.value = swap(st.value)
        pre.append(ir.Assign(copy.deepcopy(name), copy.deepcopy(target), line=do.line))
        post.append(ir.Assign(copy.deepcopy(target), copy.deepcopy(name), line=do.line))
        r.var, r.target = sym.name, None
    return pre, post
