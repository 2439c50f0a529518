"""Scalar replacement: an array element a kernel's inner loop updates in place kept in a
register for the loop.

``do l = 1, k; c(i, j) = c(i, j) + temp * a(i, l)`` inside a parallel band (a matrix product
sunk into a band, ``fortran/sink.py``, or written that way) loads and stores ``c(i, j)`` at
every ``l``: the C++ compiler cannot keep it in a register because the views' data might
overlap ``a`` (Fortran forbids that; C++ does not know). On an H100 the sunk product ran at
0.8 TFLOP/s so, its register-blocked form at 0.2 (16 elements loaded and stored per ``l``).
Replaced::

    if (1 <= k) then                      ! the element is touched only if the loop runs
      pf_c1 = c(i, j)
      do l = 1, k
        pf_c1 = pf_c1 + temp * a(i, l)
      end do
      c(i, j) = pf_c1
    end if

Taken for a serial loop inside a parallel loop, with a positive literal step (or none),
whose body is assignments, block IFs and loops only (no call but intrinsic functions, no
exit), for every array written there whose references in the loop read nothing the loop
assigns (its own variable, inner loop variables, assigned scalars) and are, two by two,
the same element or provably different ones (the same base plus different constants in some
dimension: a register-blocked band's 16 elements, each then in its own register); of those,
the elements an assignment of the loop's own body touches (every pass, not under an IF: an
element touched only under a condition may be out of bounds, or another thread's, when the
condition does not hold). Each element then takes the same values in the same order: identical
results. The temporary is private to the enclosing parallel loops.

Pure: IR in, IR out (the symbol table gains the temporaries)."""
from __future__ import annotations

import copy
from typing import Optional

from ..fortran import ir
from ..fortran.sink import expr_key as _key
from .access import names_in
from .symbols import SymbolTable

_BODY = (ir.Assign, ir.If, ir.Do, ir.Continue)


def _exprs(stmts: list[ir.Stmt]):
    for s in ir.walk(stmts):
        yield from ir.stmt_exprs(s)


def _candidates(loop: ir.Do, tab: SymbolTable) -> tuple[list[ir.ArrayRef], list[ir.ArrayRef]]:
    """(one reference per element the loop may keep in a register, the elements of arrays
    it only reads that it may load once before it)."""
    if loop.step is not None and not (isinstance(loop.step, ir.Literal) and isinstance(loop.step.value, int)
                                      and loop.step.value > 0):
        return [], []
    if any(not isinstance(s, _BODY) for s in ir.walk(loop.body)):
        return [], []
    if any(isinstance(x, ir.FuncCall) and not x.intrinsic for e in _exprs(loop.body) for x in ir.walk_expr(e)):
        return [], []
    if any(isinstance(x, ir.FuncCall) and not x.intrinsic for e in (loop.start, loop.end) for x in ir.walk_expr(e)):
        return [], []
    assigned = {loop.var} | {s.var for s in ir.walk(loop.body) if isinstance(s, ir.Do)} | \
        {s.target.name for s in ir.walk(loop.body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
    written = [s.target for s in ir.walk(loop.body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.ArrayRef)]
    # elements every pass of the loop touches (an assignment of its own body, not under an IF
    # or in an inner loop): only those may be loaded before it and stored after it -- one the
    # original touches under a condition may be out of bounds, or another thread's, when not
    every_pass = {_key(x) for s in loop.body if isinstance(s, ir.Assign) for e in (s.target, s.value)
                  for x in ir.walk_expr(e) if isinstance(x, ir.ArrayRef)}
    out: list[ir.ArrayRef] = []
    for name in dict.fromkeys(t.name for t in written):
        sym = tab.get(name)
        uses = [x for e in _exprs(loop.body) for x in ir.walk_expr(e)
                if isinstance(x, (ir.Name, ir.ArrayRef)) and x.name == name]
        if sym is None or not sym.dims or not all(isinstance(x, ir.ArrayRef) and len(x.subscripts) == len(sym.dims)
                                                  for x in uses):
            continue
        refs = list({_key(x): x for x in uses}.values())  # one per distinct element
        if any(isinstance(x, ir.Slice) for r in refs for x in r.subscripts) or \
                any((names_in(r) - {name}) & assigned for r in refs):
            continue
        if all(_distinct(a, b) for n, a in enumerate(refs) for b in refs[n + 1:]):
            out += [r for r in refs if _key(r) in every_pass]
    return out, _invariant_reads(loop, tab, assigned, {t.name for t in written})


def _invariant_reads(loop: ir.Do, tab: SymbolTable, assigned: set, written: set) -> list[ir.ArrayRef]:
    """Elements of arrays the loop never writes, at subscripts that read nothing it assigns,
    that every pass reads (a statement of its own body, or the first condition of an IF
    there, outside the right operand of .AND./.OR., which C++ may not evaluate): loaded once
    before the loop, they are the same values. TeaLeaf's generate_chunk_kernel branches on
    ``state_geometry(state)`` at every cell of a row; gfortran takes the branch out of the
    loop (dummies cannot alias), g++ reloads it after every store (the Views might overlap):
    the host form ran 3.4x the original on one core, 2.0x with the element loaded once."""
    seen: dict = {}

    def visit(e: ir.Expr) -> None:  # iterative: a long operator chain is a deep tree
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, ir.BinOp) and x.op in ("and", "or"):
                stack.append(x.left)
                continue
            if isinstance(x, ir.ArrayRef) and x.name not in written and x.name not in assigned:
                sym = tab.get(x.name)
                if sym is not None and sym.dims and len(x.subscripts) == len(sym.dims) \
                        and sym.ftype.base in ("integer", "real", "logical", "complex") \
                        and not any(isinstance(y, ir.Slice) for y in x.subscripts) \
                        and not (names_in(x) - {x.name}) & assigned:
                    seen.setdefault(_key(x), x)
                    continue
            stack.extend(ir.expr_children(x) or ())

    for s in loop.body:
        if isinstance(s, ir.Assign):
            visit(s.value)
            if isinstance(s.target, ir.ArrayRef):
                for x in s.target.subscripts:
                    visit(x)
        elif isinstance(s, ir.If) and s.branches:
            visit(s.branches[0][0])
    return list(seen.values())[:_MAX_READS]


_MAX_READS = 8  # registers are few: a loop reading more invariant elements keeps the rest in memory


def _offset(e: ir.Expr):
    """(the key of e's base, its constant offset): ``i + 2`` -> (key(i), 2)."""
    if isinstance(e, ir.BinOp) and e.op in ("+", "-") and isinstance(e.right, ir.Literal) \
            and isinstance(e.right.value, int):
        base, off = _offset(e.left)
        return base, off + (e.right.value if e.op == "+" else -e.right.value)
    if isinstance(e, ir.Literal) and isinstance(e.value, int):
        return (), e.value
    return _key(e), 0


def _distinct(a: ir.ArrayRef, b: ir.ArrayRef) -> bool:
    """Whether two references are different elements whatever the values of their names: in
    some dimension the same base plus different constants (``c(s + 1, t)``, ``c(s, t)``)."""
    for x, y in zip(a.subscripts, b.subscripts):
        (bx, ox), (by, oy) = _offset(x), _offset(y)
        if bx == by and ox != oy:
            return True
    return False


def _replace(stmts: list[ir.Stmt], ref: ir.ArrayRef, temp: ir.Name) -> None:
    key = _key(ref)

    def sub(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.ArrayRef) and e.name == ref.name and _key(e) == key:
            return copy.deepcopy(temp)
        for f in ("left", "right", "operand"):
            if hasattr(e, f) and getattr(e, f) is not None:
                setattr(e, f, sub(getattr(e, f)))
        if isinstance(e, ir.FuncCall):
            e.args = [sub(a) for a in e.args]
        elif isinstance(e, ir.ArrayRef):
            e.subscripts = [sub(a) for a in e.subscripts]
        return e

    for s in ir.walk(stmts):
        if isinstance(s, ir.Assign):
            s.target = sub(s.target)
            s.value = sub(s.value)
        elif isinstance(s, ir.If):
            s.branches = [(sub(c), b) for c, b in s.branches]
        elif isinstance(s, ir.Do):
            s.start, s.end = sub(s.start), sub(s.end)


def promoted(body: list[ir.Stmt], tab: SymbolTable) -> tuple[list[ir.Stmt], list[str]]:
    """``body`` with the replacement above made in every kernel, and one note per loop."""
    notes: list[str] = []

    def rec(stmts: list[ir.Stmt], kernels: list[ir.Do], band_left: int) -> list[ir.Stmt]:
        """``kernels``: the band loops around (none: host code); ``band_left``: how many
        loops of the band are still to come (perfectly nested: the list's only loop)."""
        out: list[ir.Stmt] = []
        only = [s for s in stmts if not isinstance(s, ir.Continue)]
        for s in stmts:
            in_band = isinstance(s, ir.Do) and (band_left > 0 and len(only) == 1 or not kernels and s.info.parallel)
            if isinstance(s, ir.Do) and kernels and not in_band:  # a loop each thread runs itself
                refs, reads = _candidates(s, tab)
                if any(isinstance(x, (ir.Do, ir.DoWhile)) for x in ir.walk(s.body)) or s.info.parallel:
                    reads = []  # innermost serial loops only: the planner's shapes around them stay
                if refs or reads:  # the loop's elements and reads in registers, as one
                    out.append(_promote(s, refs, reads, tab, kernels, notes))
                    continue
            if isinstance(s, ir.Do):
                if in_band:
                    left = (band_left if kernels else max(1, s.info.tightly_nested_parallel)) - 1
                    s.body = rec(s.body, kernels + [s], left)
                else:
                    s.body = rec(s.body, kernels, 0)
            elif isinstance(s, ir.If):
                s.branches = [(c, rec(b, kernels, 0)) for c, b in s.branches]
                s.else_body = rec(s.else_body, kernels, 0)
            elif isinstance(s, ir.DoWhile):
                s.body = rec(s.body, kernels, 0)
            out.append(s)
        return out

    return rec(body, [], 0), notes


def _promote(loop: ir.Do, refs: list[ir.ArrayRef], reads: list[ir.ArrayRef], tab: SymbolTable,
             kernels: list[ir.Do], notes: list[str]) -> ir.Stmt:
    before: list[ir.Stmt] = []
    after: list[ir.Stmt] = []
    unpromoted = copy.deepcopy(loop)
    for ref in refs + reads:
        load = _load(ref, loop.body, tab, loop.line)
        before.append(load)
        if any(ref is r for r in refs):
            after.append(ir.Assign(copy.deepcopy(ref), copy.deepcopy(load.target), line=loop.line))
        for k in kernels:
            k.info.private = list(k.info.private) + [load.target.name]
    if refs:
        names = list(dict.fromkeys(r.name for r in refs))
        what = ", ".join(_text(r) for r in refs) if len(refs) <= 2 else \
            "; ".join(f"{sum(r.name == x for r in refs)} elements of {x}" for x in names)
        notes.append(f"line {loop.line}: do {loop.var} -> {what} kept in registers for the loop (loaded before, "
                     "stored after)")
    if reads:
        notes.append(f"line {loop.line}: do {loop.var} -> {', '.join(_text(r) for r in reads)} read once before "
                     "the loop (the loop never writes them)")
    runs: Optional[ir.Expr] = ir.BinOp("<=", copy.deepcopy(loop.start), copy.deepcopy(loop.end), ftype=ir.LOGICAL)
    made = ir.If(branches=[(runs, before + [loop] + after)], else_body=[], line=loop.line)
    made.unpromoted = unpromoted  # an interchanged nest's host form runs the loop as it was
    return made


def _load(ref: ir.ArrayRef, body: list[ir.Stmt], tab: SymbolTable, line: int = 0) -> ir.Assign:
    """A new temporary standing for ``ref`` in ``body`` (replaced there), and its load."""
    sym = tab.new_temp(f"{ref.name}_", tab[ref.name].ftype)
    temp = ir.Name(sym.name, ftype=tab[ref.name].ftype)
    _replace(body, ref, temp)
    return ir.Assign(copy.deepcopy(temp), copy.deepcopy(ref), line=line)


def _text(ref: ir.ArrayRef) -> str:
    from ..fortran.render import expr_str
    return expr_str(ref)


def read_once(var: str, start: ir.Expr, end: ir.Expr, body: list[ir.Stmt],
              tab: SymbolTable) -> tuple[list[ir.Stmt], list[ir.Stmt], list[str]]:
    """For a host form's innermost loop (``do var = start, end`` around ``body``, built by
    ``translate/interchanged.py``): (the statements to put before it: the invariant reads,
    under ``start <= end`` as the original reads them only when the loop runs; the body
    reading the temporaries; their names). Nothing when the body has a loop or a call."""
    if any(isinstance(x, (ir.Do, ir.DoWhile)) for x in ir.walk(body)):
        return [], body, []
    body = copy.deepcopy(body)
    loop = ir.Do(var, start, end, None, body)
    reads = _candidates(loop, tab)[1]
    if not reads:
        return [], body, []
    loads = [_load(ref, body, tab) for ref in reads]
    runs = ir.BinOp("<=", copy.deepcopy(start), copy.deepcopy(end), ftype=ir.LOGICAL)
    return [ir.If(branches=[(runs, loads)], else_body=[])], body, [s.target.name for s in loads]
