"""Induction variables of a loop (pure): scalars updated once per iteration by a direct
``t = t + e`` with ``e`` invariant (BLAS strides: ``ix = ix + incx``), their closed forms
in the loop variable, and the substitution the array test uses for them. The dependence
analysis asks them here (:mod:`.dependence`)."""
from __future__ import annotations

from . import affine, ir
from .accesses import Access


def find_inductions(loop: ir.Do, writes: dict[str, int], variant: set[str], ctx) -> list[ir.Induction]:
    """Scalars updated exactly once per iteration by a direct ``t = t + e`` / ``t = t - e``
    statement of the loop body, ``e`` invariant in the loop."""
    out = []
    for name in sorted(writes, key=lambda n: writes[n]):
        if name == loop.var or name in ctx.arrays:
            continue
        stmts = [s for s in ir.walk(loop.body) if writes_scalar(s, name)]
        if len(stmts) != 1 or not any(s is stmts[0] for s in loop.body):
            continue
        s = stmts[0]
        if not isinstance(s, ir.Assign) or not isinstance(s.target, ir.Name):
            continue
        val = s.value
        if not isinstance(val, ir.BinOp) or val.op not in ("+", "-"):
            continue
        if isinstance(val.left, ir.Name) and val.left.name == name:
            step = val.right if val.op == "+" else ir.UnaryOp("-", val.right, ftype=val.right.ftype)
            step_e = val.right
        elif val.op == "+" and isinstance(val.right, ir.Name) and val.right.name == name:
            step = step_e = val.left
        else:
            continue
        if any(isinstance(x, ir.FuncCall) and not x.intrinsic for x in ir.walk_expr(step_e)):
            continue
        if {x.name for x in ir.walk_expr(step_e) if isinstance(x, (ir.Name, ir.ArrayRef))} & (variant | set(writes)):
            continue
        if step_e.ftype is not None and step_e.ftype.base != "integer":
            continue
        out.append(ir.Induction(name, step, s.line))
    return out


def writes_scalar(s: ir.Stmt, name: str) -> bool:
    if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
        return True
    if isinstance(s, ir.Do) and s.var == name:
        return True
    if isinstance(s, ir.CallStmt) and any(isinstance(a, ir.Name) and a.name == name for a in s.args):
        return True
    return False


def induction_substitution(loop: ir.Do, inductions: list[ir.Induction], ctx):
    """Access -> {induction var: closed-form polynomial} (None when not expressible)."""
    if not inductions:
        return None
    step = affine.poly_of(loop.step, ctx.env) if loop.step is not None else affine.const(1)
    start = affine.poly_of(loop.start, ctx.env)
    k = None  # iteration number as a polynomial in the loop variable
    if step is not None and start is not None and affine.is_const(step) and affine.constant(step) in (1, -1):
        k = affine.add(affine.var(loop.var), start, -1)
        if affine.constant(step) == -1:
            k = affine.mul(affine.const(-1), k)
    order = {id(s): i for i, s in enumerate(ir.walk(loop.body))}
    base = {}
    for ind in inductions:
        ps = affine.poly_of(ind.step, ctx.env)
        if k is None or ps is None:
            base[ind.var] = None
        else:
            base[ind.var] = (affine.add(affine.var(ind.var + "@0"), affine.mul(k, ps)), ps)
    upd = {ind.var: order.get(id(next(s for s in loop.body if writes_scalar(s, ind.var))), 0) for ind in inductions}

    def subst_of(acc: Access):
        out = {}
        pos = order.get(id(acc.stmt), 0)
        for ind in inductions:
            b = base[ind.var]
            if b is None:
                out[ind.var] = None
                continue
            p, ps = b
            out[ind.var] = affine.add(p, ps) if pos > upd[ind.var] else p
        return out

    return subst_of


def closed_form(loop: ir.Do, ind: ir.Induction, after_update: bool = False) -> ir.Expr:
    """The value of an induction variable in an iteration, as an expression of the loop
    variable and the variable's value before the loop (``ind.var`` itself):
    ``var + ((v - start)/step)*ind.step`` (+ ``ind.step`` after the update)."""
    it = ir.INTEGER
    k: ir.Expr = ir.BinOp("-", ir.Name(loop.var, ftype=it), loop.start, ftype=it)
    if loop.step is not None and not (isinstance(loop.step, ir.Literal) and loop.step.value == 1):
        k = ir.BinOp("/", k, loop.step, ftype=it)
    e: ir.Expr = ir.BinOp("+", ir.Name(ind.var, ftype=it), ir.BinOp("*", k, ind.step, ftype=it), ftype=it)
    if after_update:
        e = ir.BinOp("+", e, ind.step, ftype=it)
    return e
