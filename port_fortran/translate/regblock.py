"""Register blocking of compute-bound 2-D bands (unroll and jam of both parallel loops).

A band of two parallel loops whose iteration runs a sequential inner loop -- the matrix
product ``do j; do i; temp = 0; do l; temp = temp + a(i, l) * b(l, j); c(i, j) = ...`` --
reads two elements per multiply-add: on a GPU each thread streams its row of ``a`` and
column of ``b`` from memory. Blocking gives each iteration of the band an ``RI x RJ`` block
of ``(i, j)``: the statements of the ``RI * RJ`` iterations are copied (their private
scalars renamed per copy) and the inner loops jammed into one, so every element of ``a``
and ``b`` loaded in a pass of ``l`` feeds ``RJ`` (``RI``) multiply-adds from registers::

    do pf_bj = 0, (n - 1 + RJ) / RJ - 1          ! parallel, as the band was
      do pf_bi = 0, (m - 1 + RI) / RI - 1
        pf_j0 = 1 + pf_bj * RJ;  pf_i0 = 1 + pf_bi * RI
        if (pf_i0 + RI - 1 <= m .and. pf_j0 + RJ - 1 <= n) then
          temp_1 = 0 ... temp_16 = 0
          do l = 1, k
            temp_1 = temp_1 + a(pf_i0, l) * b(l, pf_j0) ... (16 copies)
          end do
          c(pf_i0, pf_j0) = alpha * temp_1 + beta * c(pf_i0, pf_j0) ...
        else                                    ! an edge block: the original loops
          do j = pf_j0, min(pf_j0 + RJ - 1, n); do i = pf_i0, min(pf_i0 + RI - 1, m); ...

Legal because the band's iterations are independent (the dependence analysis made it
parallel): interleaving their statements changes no value, and each element still sums its
terms in the original order (bit-identical results where the compiler contracts alike).

Taken only on the exact shape (the optimizer's ``regblock-RIxRJ`` variant; the default
translation is unchanged): two tightly nested parallel loops with unit steps, bounds
independent of each other, no reduction, scatter, induction or condition on either; the
inner body assignments around exactly one loop of assignments whose bounds read neither
band variable nor a private; every scalar assigned a private of the band; no calls but
intrinsic functions; the band variables not read after the band.

Pure: IR in, IR out (the symbol table gains the renamed scalars).
"""
from __future__ import annotations

import copy
from typing import Optional

from ..fortran import ir
from ..fortran.dataflow import FlowGraph
from ..fortran.rewrite import replace_names
from .access import names_in
from .symbols import SymbolTable

INT = ir.INTEGER


def _lit(v: int) -> ir.Literal:
    return ir.Literal(v, str(v), ftype=INT)


def _bin(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp(op, a, b, ftype=INT)


def _unit_step(d: ir.Do) -> bool:
    return d.step is None or (isinstance(d.step, ir.Literal) and d.step.value == 1)


def _plain(d: ir.Do) -> bool:
    i = d.info
    return bool(i.parallel and not i.reductions and not i.scattered and not i.inductions and i.condition is None
                and not i.calls and not i.early_exit and _unit_step(d))


def _stmts(body: list[ir.Stmt]) -> list[ir.Stmt]:
    return [s for s in body if not isinstance(s, ir.Continue)]


def _calls_nothing(s: ir.Assign) -> bool:
    return not any(isinstance(x, ir.FuncCall) and not x.intrinsic
                   for e in (s.target, s.value) for x in ir.walk_expr(e))


def _shape(outer: ir.Do):
    """(outer, inner, pre, loop, post) of a band that can be blocked, else None."""
    if not _plain(outer) or outer.info.tightly_nested_parallel < 2:
        return None
    body = _stmts(outer.body)
    if len(body) != 1 or not isinstance(body[0], ir.Do) or not _plain(body[0]):
        return None
    inner = body[0]
    if outer.var in names_in(inner.start) | names_in(inner.end) or \
            inner.var in names_in(outer.start) | names_in(outer.end):
        return None
    stmts = _stmts(inner.body)
    loops = [k for k, s in enumerate(stmts) if isinstance(s, ir.Do)]
    if len(loops) != 1:
        return None
    at = loops[0]
    loop = stmts[at]
    pre, post, core = stmts[:at], stmts[at + 1:], _stmts(loop.body)
    if not core or not all(isinstance(s, ir.Assign) and _calls_nothing(s) for s in pre + post + core):
        return None
    private = set(inner.info.private) | set(outer.info.private)
    assigned = {s.target.name for s in pre + post + core if isinstance(s.target, ir.Name)}
    if not assigned <= private or loop.var not in private:
        return None
    bound_names = names_in(loop.start) | names_in(loop.end) | names_in(loop.step)
    if bound_names & (assigned | {outer.var, inner.var, loop.var}):
        return None
    return outer, inner, pre, loop, post


def blockable(d: ir.Do) -> bool:
    """Whether ``d`` starts a band of the shape register blocking takes."""
    return isinstance(d, ir.Do) and _shape(d) is not None


def _live_after(body: list[ir.Stmt], outer: ir.Do, names: set[str]) -> bool:
    try:
        g = FlowGraph(body)
        return any(g.is_live_after(outer, n) for n in names)
    except Exception:  # a construct the graph does not take: assume the worst
        return True


def register_blocked(body: list[ir.Stmt], tab: SymbolTable, block: tuple[int, int],
                     kernel: Optional[ir.Kernel] = None) -> tuple[list[ir.Stmt], list[str]]:
    """``body`` with every band of the shape above blocked ``block`` = (RI, RJ) (inner loop,
    outer loop), and one note per band."""
    notes: list[str] = []
    dummies = {a.name for a in kernel.args} if kernel is not None else set()

    def rec(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            shape = _shape(s) if isinstance(s, ir.Do) else None
            if shape is not None and not ({shape[0].var, shape[1].var} & dummies) \
                    and not _live_after(body, s, {shape[0].var, shape[1].var}):
                out.append(_blocked(shape, tab, block))
                notes.append(f"line {s.line}: do {shape[0].var} / do {shape[1].var} -> register blocked "
                             f"{block[0]}x{block[1]} (each iteration of the band takes a block of "
                             f"{shape[1].var} x {shape[0].var}, the loop of line {shape[3].line} jammed; "
                             "edge blocks run the original loops)")
                continue
            if isinstance(s, ir.Do) and not s.info.parallel:
                s.body = rec(s.body)
            elif isinstance(s, ir.If):
                s.branches = [(c, rec(b)) for c, b in s.branches]
                s.else_body = rec(s.else_body)
            elif isinstance(s, ir.DoWhile):
                s.body = rec(s.body)
            out.append(s)
        return out

    return rec(body), notes


def _blocked(shape, tab: SymbolTable, block: tuple[int, int]) -> ir.Do:
    outer, inner, pre, loop, post = shape
    ri, rj = block
    bi, bj = tab.new_temp("bi", INT).name, tab.new_temp("bj", INT).name
    i0, j0 = tab.new_temp("i0", INT).name, tab.new_temp("j0", INT).name
    name = lambda n: ir.Name(n, ftype=INT)  # noqa: E731
    assigned = [s.target.name for s in pre + _stmts(loop.body) + post if isinstance(s.target, ir.Name)]
    assigned = list(dict.fromkeys(assigned))
    copies: list[dict] = []
    renamed: list[str] = []
    for jj in range(rj):
        for ii in range(ri):
            table: dict[str, ir.Expr] = {
                inner.var: _bin("+", name(i0), _lit(ii)) if ii else name(i0),
                outer.var: _bin("+", name(j0), _lit(jj)) if jj else name(j0)}
            for v in assigned:
                sym = tab.new_temp(f"{v}_", tab[v].ftype)
                renamed.append(sym.name)
                table[v] = ir.Name(sym.name, ftype=tab[v].ftype)
            copies.append(table)

    def each(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out = []
        for s in stmts:
            for t in copies:
                c = copy.deepcopy(s)
                c.target = replace_names(c.target, t)
                c.value = replace_names(c.value, t)
                out.append(c)
        return out

    jam = copy.deepcopy(loop)
    jam.body = each(_stmts(loop.body))
    jam.info = ir.LoopInfo(parallel=False, tightly_nested_parallel=0)
    jam.label = None
    jam.end_label = None
    full = each(pre) + [jam] + each(post)
    # an edge block: the original loops over what is left of the block, serially
    edge_inner = copy.deepcopy(inner)
    edge_inner.start = name(i0)
    edge_inner.end = ir.FuncCall("min", [_bin("+", name(i0), _lit(ri - 1)), copy.deepcopy(inner.end)], True, ftype=INT)
    edge_inner.info = ir.LoopInfo(parallel=False, tightly_nested_parallel=0)
    edge_inner.label = edge_inner.end_label = None
    edge_outer = copy.deepcopy(outer)
    edge_outer.start = name(j0)
    edge_outer.end = ir.FuncCall("min", [_bin("+", name(j0), _lit(rj - 1)), copy.deepcopy(outer.end)], True, ftype=INT)
    edge_outer.body = [edge_inner]
    edge_outer.info = ir.LoopInfo(parallel=False, tightly_nested_parallel=0)
    edge_outer.label = edge_outer.end_label = None
    whole = ir.BinOp("and", ir.BinOp("<=", _bin("+", name(i0), _lit(ri - 1)), copy.deepcopy(inner.end),
                                      ftype=ir.LOGICAL),
                     ir.BinOp("<=", _bin("+", name(j0), _lit(rj - 1)), copy.deepcopy(outer.end), ftype=ir.LOGICAL),
                     ftype=ir.LOGICAL)
    body = [ir.Assign(name(j0), _bin("+", copy.deepcopy(outer.start), _bin("*", name(bj), _lit(rj))), line=inner.line),
            ir.Assign(name(i0), _bin("+", copy.deepcopy(inner.start), _bin("*", name(bi), _lit(ri))), line=inner.line),
            ir.If(branches=[(whole, full)], else_body=[edge_outer], line=inner.line)]
    private = list(dict.fromkeys(list(outer.info.private) + list(inner.info.private)
                                 + [inner.var, outer.var, loop.var, i0, j0] + renamed))

    def count(d: ir.Do, r: int) -> ir.Expr:  # blocks: (hi - lo + r) / r, none when hi < lo
        return _bin("-", _bin("/", _bin("+", _bin("-", copy.deepcopy(d.end), copy.deepcopy(d.start)), _lit(r)),
                              _lit(r)), _lit(1))

    new_inner = ir.Do(bi, _lit(0), count(inner, ri), body=body, line=inner.line,
                      info=ir.LoopInfo(parallel=True, private=private, tightly_nested_parallel=1))
    new_inner.end_line = inner.end_line
    new_outer = ir.Do(bj, _lit(0), count(outer, rj), body=[new_inner], line=outer.line,
                      info=ir.LoopInfo(parallel=True, private=private + [bi], tightly_nested_parallel=2))
    new_outer.end_line = outer.end_line
    return new_outer
