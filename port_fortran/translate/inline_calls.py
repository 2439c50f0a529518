"""Calls at the routine's host level to routines with parallel loops, inlined (IR -> IR).

TeaLeaf's solvers set up a preconditioner by calling a routine of the tree outside any loop::

    if (preconditioner_type == TL_PREC_JAC_BLOCK) then
      call tea_block_solve(x_min, x_max, y_min, y_max, halo_exchange_depth, r, z, cp, bfp, ...)

``tea_block_solve`` is a loop nest over the whole grid, parallel on its own. As a device
function the call runs inside one single-iteration kernel: the whole nest on one thread
(tea_leaf_cg_init_kernel on 2 OpenMP threads: 1.6x the original's time, which runs the
callee's ``!$OMP DO`` in parallel; on a GPU, one thread of thousands). Inlined, the callee's
statements stand where the call was, its loops become the caller's own kernels, and the
dependence analysis sees them like any other nest.

Taken only where it is exactly the same computation:

* the call is outside every loop of the routine (in IF branches too), and the callee is a
  subroutine of the tree with a parallel loop of its own;
* the callee's body is assignments, loops, IFs and SELECT CASE only: no CALL, no function of
  its own, no RETURN, STOP, GOTO or label, no I/O, nothing it SAVEs, no COMMON or module
  variable (named constants of its modules are fine: they come along);
* each array dummy gets a whole array of the caller of the same type whose declared bounds
  are the dummy's with the call's actual arguments for the callee's scalars (the callee then
  indexes the caller's array as it declared it), no array twice;
* each scalar dummy the callee assigns gets a scalar variable of the caller, passed once;
  the others get any expression of the same type, which the callee cannot change.

The callee's locals become locals of the caller under new names (``<callee>_<name>``); the
inlined statements carry the call's line (the notes and kernel labels then point at the
call, in the caller's file). The result is analysed again (``dependence.analyse_loops``)."""
from __future__ import annotations

import copy
from typing import Optional

from ..fortran import ir
from ..fortran.affine import poly_of
from ..fortran.interchange import _written, source_order
from ..fortran.render import expr_str
from ..fortran.rewrite import transform

_PLAIN = (ir.Assign, ir.Do, ir.DoWhile, ir.If, ir.SelectCase, ir.Where, ir.Continue, ir.Cycle, ir.Exit)


def inline_host_calls(kernel: ir.Kernel, program) -> tuple[ir.Kernel, list[str]]:
    """(the kernel with its eligible calls inlined and analysed again, one note per call);
    the kernel itself when there is none."""
    if program is None or not kernel.calls:
        return kernel, []
    from ..fortran.dependence import analyse_loops
    from ..fortran.effects import Calls

    k = copy.deepcopy(kernel)
    notes: list[str] = []
    taken: set[str] = set()
    try:
        k.body = _host_level(k.body, k, program, notes, taken)
        if not notes:
            return kernel, []
        still = {s.name for s in ir.walk(k.body) if isinstance(s, ir.CallStmt)}
        still |= {x.name for s in ir.walk(k.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
                  if isinstance(x, ir.FuncCall) and not x.intrinsic}
        k.calls = [c for c in k.calls if c not in taken or c in still]
        analyse_loops(k, Calls(program))
    except Exception:  # a shape this module did not foresee: the calls stay calls
        return kernel, []
    return k, notes


def _host_level(body: list[ir.Stmt], k: ir.Kernel, program, notes: list[str], taken: set[str]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.CallStmt):
            got = _inline(s, k, program)
            if isinstance(got, list):
                notes.append(f"line {s.line}: call {s.name} -> inlined: its loops are kernels of this port "
                             "(a function called in a kernel runs them on one thread)")
                taken.add(s.name)
                out += got
                continue
        elif isinstance(s, ir.If):
            s.branches = [(c, _host_level(b, k, program, notes, taken)) for c, b in s.branches]
            s.else_body = _host_level(s.else_body, k, program, notes, taken)
        elif isinstance(s, ir.SelectCase):
            for c in s.cases:
                c.body = _host_level(c.body, k, program, notes, taken)
        out.append(s)
    return out


def _callee(k: ir.Kernel, name: str, program) -> Optional[ir.Kernel]:
    c = program.callee(k, name)
    if c is None or c.routine is None:
        return None
    callee = program.kernel_of(c.routine)
    return callee if isinstance(callee, ir.Kernel) else None


def _bounds(dims: list[ir.Dim], table: dict[str, ir.Expr], env: dict) -> Optional[list]:
    """Each dimension's (lower, upper) as polynomials where they are affine (``m + 1`` with
    ``n - 1`` for ``m`` is ``n``), else as text; None for an assumed size or shape."""
    out = []
    for d in dims:
        if d.upper is None or d.assumed_shape:
            return None
        lo = d.lower if d.lower is not None else ir.Literal(1, "1", ftype=ir.INTEGER)
        for e in (lo, d.upper):
            e = _subst(e, table, {})
            p = poly_of(e, env)
            out.append(sorted(p.items()) if p is not None else expr_str(e))
    return out


def _same_type(a: ir.FType, b: Optional[ir.FType]) -> bool:
    return b is not None and (a.base, a.kind) == (b.base, b.kind)


def _inline(call: ir.CallStmt, k: ir.Kernel, program) -> Optional[list[ir.Stmt]]:
    """The callee's statements for this call in the caller's names, or None."""
    fn = _callee(k, call.name, program)
    if fn is None or fn.kind != "subroutine" or fn.unsupported or fn.commons or fn.equivalences \
            or fn.host_vars or len(call.args) != len(fn.args) or fn.name == k.name:
        return None
    if not any(d.info.parallel for d in fn.loops()):
        return None
    stmts = list(ir.walk(fn.body))
    if any(not isinstance(s, _PLAIN) or s.label is not None or getattr(s, "end_label", None) is not None
           for s in stmts):
        return None
    if any(isinstance(x, ir.FuncCall) and not x.intrinsic for s in stmts for e in ir.stmt_exprs(s)
           for x in ir.walk_expr(e)):
        return None
    if any(v.parameter is None for v in fn.module_vars.values()):
        return None  # module state: only named constants come along
    for n, v in fn.module_vars.items():  # a constant of the same name in the caller must agree
        mine = k.module_vars.get(n) or k.locals.get(n)
        if mine is not None and (mine.parameter is None or repr(mine.parameter) != repr(v.parameter)):
            return None
    known = set(fn.locals) | set(fn.module_vars) | {a.name for a in fn.args}
    if any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name not in known for s in stmts
           for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)) or \
            any(isinstance(s, ir.Do) and s.var not in known for s in stmts):
        return None  # a name the callee does not declare (implicitly typed): kept as it is
    written = _written(fn.body)  # no CALL in it: assignment targets and DO variables
    caller_vars = {**k.module_vars, **k.locals, **{a.name: a for a in k.args}}
    exprs: dict[str, ir.Expr] = {}  # scalar dummy -> actual expression
    arrays: dict[str, str] = {}  # array dummy -> the caller's array
    seen: list[str] = []
    for d, actual in zip(fn.args, call.args):
        if d.dims:
            if not isinstance(actual, ir.Name) or actual.name not in caller_vars:
                return None
            mine = caller_vars[actual.name]
            if not mine.dims or mine.parameter is not None or not _same_type(d.ftype, mine.ftype):
                return None
            arrays[d.name] = actual.name
            seen.append(actual.name)
        else:
            if not _same_type(d.ftype, getattr(actual, "ftype", None)) or d.ftype.base == "character":
                return None
            if d.name in written:
                if not isinstance(actual, ir.Name) or actual.name not in caller_vars \
                        or caller_vars[actual.name].dims or caller_vars[actual.name].parameter is not None:
                    return None
                seen.append(actual.name)
            exprs[d.name] = actual
    if len(seen) != len(set(seen)) or any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name in seen
                                          for n, e in exprs.items() if n not in written for x in ir.walk_expr(e)):
        return None  # an array or a written scalar twice, or a written one also read through another dummy
    env_fn, env_k = fn.constants(), k.constants()
    for d in fn.args:  # the dummy indexes the caller's array as the callee declared it
        if d.dims and _bounds(d.dims, exprs, env_fn) != _bounds(caller_vars[arrays[d.name]].dims, {}, env_k):
            return None
    in_use = set(caller_vars)
    renamed: dict[str, str] = {}
    new_locals: dict[str, ir.Variable] = {}
    dummies = {a.name for a in fn.args}
    for n, v in fn.locals.items():
        if n in dummies or (fn.result is not None and n == fn.result.name):
            continue
        if v.save or v.common is not None or v.allocatable:
            return None
        if v.parameter is not None and n in caller_vars and repr(caller_vars[n].parameter) == repr(v.parameter):
            continue  # the same constant
        new = f"{fn.name}_{n}"
        while new in in_use:
            new += "_"
        in_use.add(new)
        renamed[n] = new
    for n, v in fn.locals.items():
        if n in renamed:
            nv = copy.deepcopy(v)
            nv.name = renamed[n]
            nv.dims = [ir.Dim(None if dd.lower is None else _subst(dd.lower, exprs, renamed),
                              None if dd.upper is None else _subst(dd.upper, exprs, renamed),
                              dd.assumed_shape, dd.extent_given) for dd in v.dims]
            new_locals[renamed[n]] = nv
    names = {**arrays, **renamed}
    body = source_order(fn.body)
    for s in ir.walk(body):
        _subst_stmt(s, exprs, names)
        s.line = call.line
        if isinstance(s, ir.Do):
            s.end_line = call.line
    k.locals.update(new_locals)
    for n, v in fn.module_vars.items():
        k.module_vars.setdefault(n, copy.deepcopy(v))
    k.uses = list(dict.fromkeys(list(k.uses) + list(fn.uses)))
    return body


def _subst(e: ir.Expr, exprs: dict[str, ir.Expr], names: dict[str, str]) -> ir.Expr:
    def f(x):
        if isinstance(x, ir.Name):
            if x.name in exprs:
                return copy.deepcopy(exprs[x.name])
            if x.name in names:
                return ir.Name(names[x.name], ftype=x.ftype)
        elif isinstance(x, ir.ArrayRef) and x.name in names:
            return ir.ArrayRef(names[x.name], [transform(a, f) for a in x.subscripts], ftype=x.ftype)
        return None
    return transform(e, f)


def _subst_stmt(s: ir.Stmt, exprs: dict[str, ir.Expr], names: dict[str, str]) -> None:
    sub = lambda e: None if e is None else _subst(e, exprs, names)  # noqa: E731
    if isinstance(s, ir.Assign):
        s.target, s.value = sub(s.target), sub(s.value)
    elif isinstance(s, ir.Do):
        v = exprs.get(s.var)
        s.var = v.name if isinstance(v, ir.Name) else names.get(s.var, s.var)
        s.start, s.end, s.step = sub(s.start), sub(s.end), sub(s.step)
    elif isinstance(s, ir.DoWhile):
        s.cond = sub(s.cond)
    elif isinstance(s, ir.If):
        s.branches = [(sub(c), b) for c, b in s.branches]
    elif isinstance(s, ir.SelectCase):
        s.expr = sub(s.expr)
        for c in s.cases:
            c.values = [sub(v) for v in c.values]
    elif isinstance(s, ir.Where):
        s.mask = sub(s.mask)
