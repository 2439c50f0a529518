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

Taken only on the exact shape (the optimizer's ``regblock-4x4`` variant; the default
translation is unchanged): two tightly nested parallel loops (or one: the all-pairs form,
``do i; s = 0; do j; s = s + f(i, j)``, blocked along ``i``) with unit steps, bounds
independent of each other, no reduction, scatter, induction or condition on either; the
inner body assignments (or block IFs of them) around exactly one loop of such statements whose bounds read neither
band variable nor a private; every scalar assigned a private of the band; no calls but
intrinsic functions; the band variables plain locals (no dummy, COMMON, module or SAVE
variable, whose value after the band a caller may see), not read after the band.

Pure: IR in, IR out (the symbol table gains the renamed scalars).
"""
from __future__ import annotations

import copy
import itertools
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


def _calls_nothing(s: ir.Stmt) -> bool:
    """An assignment, or a block IF of assignments (``if (beta == 0) then; c(i, j) = 0``),
    that calls no function but intrinsics."""
    if isinstance(s, ir.If):
        return all(_calls_nothing(x) for x in _stmts(ir.children(s))) and not any(
            isinstance(x, ir.FuncCall) and not x.intrinsic for c, _b in s.branches for x in ir.walk_expr(c))
    return isinstance(s, ir.Assign) and not any(isinstance(x, ir.FuncCall) and not x.intrinsic
                                                for e in (s.target, s.value) for x in ir.walk_expr(e))


def _assigns(stmts: list[ir.Stmt]) -> list[ir.Assign]:
    return [s for s in ir.walk(stmts) if isinstance(s, ir.Assign)]


def _renamed(s: ir.Stmt, table: dict) -> ir.Stmt:
    c = copy.deepcopy(s)
    for x in [c] + list(ir.walk(ir.children(c))):
        if isinstance(x, ir.Assign):
            x.target = replace_names(x.target, table)
            x.value = replace_names(x.value, table)
        elif isinstance(x, ir.If):
            x.branches = [(replace_names(e, table), b) for e, b in x.branches]
    return c


def _shape(outer: ir.Do):
    """(outer, inner, pre, loop, post) of a band that can be blocked, else None; ``outer`` is
    None for a band of one loop (the all-pairs form: ``do i; s = 0; do j; s = s + f(i, j)``)."""
    if not _plain(outer):
        return None
    if outer.info.tightly_nested_parallel >= 2:
        body = _stmts(outer.body)
        if len(body) != 1 or not isinstance(body[0], ir.Do) or not _plain(body[0]):
            return None
        inner = body[0]
        if outer.var in names_in(inner.start) | names_in(inner.end) or \
                inner.var in names_in(outer.start) | names_in(outer.end):
            return None
        band_vars = {outer.var, inner.var}
        private = set(inner.info.private) | set(outer.info.private)
    else:
        outer, inner = None, outer
        band_vars = {inner.var}
        private = set(inner.info.private)
    stmts = _stmts(inner.body)
    loops = [k for k, s in enumerate(stmts) if isinstance(s, ir.Do)]
    if len(loops) != 1:
        return None
    at = loops[0]
    loop = stmts[at]
    pre, post, core = stmts[:at], stmts[at + 1:], _stmts(loop.body)
    if not core or not all(_calls_nothing(s) for s in pre + post + core):
        return None
    assigned = {s.target.name for s in _assigns(pre + post + core) if isinstance(s.target, ir.Name)}
    if not assigned <= private or loop.var not in private:
        return None
    bound_names = names_in(loop.start) | names_in(loop.end) | names_in(loop.step)
    if bound_names & (assigned | band_vars | {loop.var}):
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
                     kernel: Optional[ir.Kernel] = None) -> tuple[list[ir.Stmt], list[str], bool]:
    """``body`` with every band of the shape above blocked ``block`` = (RI, RJ) (inner loop,
    outer loop), one note per band, and whether a blocked band runs on the host backends too
    (a sunk band keeps its original order there, ``fortran/sink.py``)."""
    notes: list[str] = []
    on_host = []
    dummies = {a.name for a in kernel.args} if kernel is not None else set()

    def plain_local(name: str) -> bool:  # its value after the band is nobody else's to see
        v = kernel.locals.get(name) if kernel is not None else None
        return v is not None and v.common is None and v.module is None and not v.save

    def rec(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            shape = _shape(s) if isinstance(s, ir.Do) else None
            band = [d for d in shape[:2] if d is not None] if shape is not None else []
            if shape is not None and not ({d.var for d in band} & dummies) \
                    and all(plain_local(d.var) for d in band) and not _live_after(body, s, {d.var for d in band}):
                made = _blocked(shape, tab, block)
                made.host_original = getattr(s, "host_original", None)  # the host backends' order, if sunk
                made.sunk_rows = getattr(s, "sunk_rows", None)
                on_host.append(made.host_original is None)
                out.append(made)
                size = f"{block[0]}x{block[1]}" if shape[0] is not None else f"{block[0]}"
                notes.append(f"line {s.line}: {' / '.join(f'do {d.var}' for d in band)} -> register blocked "
                             f"{size} (each iteration of the band takes a block of "
                             f"{' x '.join(d.var for d in reversed(band))}, the loop of line {shape[3].line} "
                             "jammed; edge blocks run the original loops)")
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

    body = rec(body)
    return body, notes, any(on_host)


def _blocked(shape, tab: SymbolTable, block: tuple[int, int]) -> ir.Do:
    """The blocked band: one loop over blocks per loop of the band (parallel, as the band
    was), full blocks jammed, edge blocks through the original loops."""
    outer, inner, pre, loop, post = shape
    # per loop of the band, innermost first: (loop, block size, block-index temp, block start temp)
    dims = [(inner, block[0])] + ([(outer, block[1])] if outer is not None else [])
    dims = [(d, r, tab.new_temp("b", INT).name, tab.new_temp("s", INT).name) for d, r in dims]
    name = lambda n: ir.Name(n, ftype=INT)  # noqa: E731
    assigned = list(dict.fromkeys(s.target.name for s in _assigns(pre + _stmts(loop.body) + post)
                                  if isinstance(s.target, ir.Name)))
    copies: list[dict] = []
    renamed: list[str] = []
    for offsets in itertools.product(*[range(r) for _d, r, _b, _s in reversed(dims)]):
        table: dict[str, ir.Expr] = {}
        for (d, _r, _b, s0), off in zip(reversed(dims), offsets):
            table[d.var] = _bin("+", name(s0), _lit(off)) if off else name(s0)
        for v in assigned:
            sym = tab.new_temp(f"{v}_", tab[v].ftype)
            renamed.append(sym.name)
            table[v] = ir.Name(sym.name, ftype=tab[v].ftype)
        copies.append(table)

    def each(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out = []
        for s in stmts:
            out.extend(_renamed(s, t) for t in copies)
        return out

    def serial(d: ir.Do) -> ir.Do:
        d.info = ir.LoopInfo(parallel=False, tightly_nested_parallel=0)
        d.label = d.end_label = None
        return d

    jam = serial(copy.deepcopy(loop))
    jam.body = each(_stmts(loop.body))
    full = each(pre) + [jam] + each(post)
    # an edge block: the original loops over what is left of the block, serially
    edge: list[ir.Stmt] = copy.deepcopy(inner.body)
    for d, r, _b, s0 in dims:
        e = serial(copy.deepcopy(d))
        e.start = name(s0)
        e.end = ir.FuncCall("min", [_bin("+", name(s0), _lit(r - 1)), copy.deepcopy(d.end)], True, ftype=INT)
        e.body = edge
        edge = [e]
    whole: Optional[ir.Expr] = None
    for d, r, _b, s0 in dims:
        c = ir.BinOp("<=", _bin("+", name(s0), _lit(r - 1)), copy.deepcopy(d.end), ftype=ir.LOGICAL)
        whole = c if whole is None else ir.BinOp("and", whole, c, ftype=ir.LOGICAL)
    body: list[ir.Stmt] = [ir.Assign(name(s0), _bin("+", copy.deepcopy(d.start), _bin("*", name(b), _lit(r))),
                                     line=inner.line) for d, r, b, s0 in reversed(dims)]
    body.append(ir.If(branches=[(whole, full)], else_body=edge, line=inner.line))
    band_private = [x for d, _r, _b, _s in dims for x in d.info.private]
    private = list(dict.fromkeys(band_private + [d.var for d, _r, _b, _s in dims] + [loop.var]
                                 + [s0 for _d, _r, _b, s0 in dims] + renamed))

    def count(d: ir.Do, r: int) -> ir.Expr:  # blocks: (hi - lo + r) / r, none when hi < lo
        return _bin("-", _bin("/", _bin("+", _bin("-", copy.deepcopy(d.end), copy.deepcopy(d.start)), _lit(r)),
                              _lit(r)), _lit(1))

    made: Optional[ir.Do] = None
    for k, (d, r, b, _s) in enumerate(dims):  # innermost first: each wraps the one before
        extra = [bb for _d, _r, bb, _ss in dims[:k]]
        made = ir.Do(b, _lit(0), count(d, r), body=body if made is None else [made], line=d.line,
                     info=ir.LoopInfo(parallel=True, private=private + extra, tightly_nested_parallel=k + 1))
        made.end_line = d.end_line
    assert made is not None
    return made
