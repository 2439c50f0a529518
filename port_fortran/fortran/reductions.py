"""Reduction idioms of a loop body (pure): ``s = s + x`` and its kin (the operator of a
scalar or array-element reduction) and the MIN/MAX-with-location idiom (an IF that keeps
the best value and where it was)."""
from __future__ import annotations

from typing import Optional

from . import ir

_RED_OPS = {"+": "sum", "-": "sum", "*": "prod"}


def mentions(e: ir.Expr, name: str) -> bool:
    return any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name == name for x in ir.walk_expr(e))


def same_expr(a: ir.Expr, b: ir.Expr) -> bool:
    return ir.to_dict(a) == ir.to_dict(b)


def reduction_op(target: ir.Expr, value: ir.Expr, apart=None) -> Optional[str]:
    """``t = t + e`` / ``t = e + t`` / ``t = t - e`` / ``t = t * e`` / ``t = max(t, e...)``
    -> op name; None when the statement is not a reduction update of ``target``. ``apart``
    (array reference -> bool): elements of the target's array ``e`` may read, never the
    target's (``x(i) = x(i) - a(j, i) * x(j)`` for ``j < i``)."""
    name = target.name

    def is_t(x):
        return same_expr(x, target)

    def mentions(e, nm):
        return any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name == nm
                   and not (apart is not None and isinstance(x, ir.ArrayRef) and apart(x)) for x in ir.walk_expr(e))

    if isinstance(value, ir.BinOp) and value.op in _RED_OPS:
        if is_t(value.left) and not mentions(value.right, name):
            return _RED_OPS[value.op]
        if value.op in ("+", "*") and is_t(value.right) and not mentions(value.left, name):
            return _RED_OPS[value.op]
        # t = t + a + b parses as (t + a) + b
        if value.op in ("+", "-") and isinstance(value.left, ir.BinOp) and not mentions(value.right, name):
            inner = reduction_op(target, value.left, apart)
            if inner == "sum":
                return "sum"
    if isinstance(value, ir.FuncCall) and value.intrinsic and value.name in ("max", "min", "amax1", "amin1",
                                                                          "dmax1", "dmin1", "max0", "min0"):
        ts = [a for a in value.args if is_t(a)]
        others = [a for a in value.args if not is_t(a)]
        if len(ts) == 1 and not any(mentions(a, name) for a in others):
            return "max" if "max" in value.name else "min"
    return None


def minmax_idiom(s: ir.Stmt) -> Optional[tuple[str, str, list[ir.Stmt]]]:
    """``if (e > m) m = e`` (max) / ``if (e < m) m = e`` (min). Returns (var, op, other
    statements in the branch); other statements mean a *loc* reduction (maxloc style)."""
    if not isinstance(s, ir.If) or len(s.branches) != 1 or s.else_body:
        return None
    cond, body = s.branches[0]
    if not isinstance(cond, ir.BinOp) or cond.op not in (">", ">=", "<", "<="):
        return None
    assigns = [x for x in body if isinstance(x, ir.Assign)]
    for a in assigns:
        if not isinstance(a.target, ir.Name):
            continue
        m = a.target.name
        e = a.value
        if isinstance(cond.right, ir.Name) and cond.right.name == m and same_expr(cond.left, e):
            op = "max" if cond.op in (">", ">=") else "min"
        elif isinstance(cond.left, ir.Name) and cond.left.name == m and same_expr(cond.right, e):
            op = "max" if cond.op in ("<", "<=") else "min"
        else:
            continue
        if mentions(e, m):
            return None
        return m, op, [x for x in body if x is not a]
    return None


def index_loc_idiom(s: ir.Stmt, var: str) -> Optional[tuple[str, str, str]]:
    """``if (x(k) < x(m)) m = k`` (the location of the first minimum; ``>`` the maximum)
    in the loop over ``k``: (m, 'min'|'max', x). Only strict comparisons (ties keep the
    earlier index) of the same one-dimensional array."""
    if not isinstance(s, ir.If) or len(s.branches) != 1 or s.else_body:
        return None
    cond, body = s.branches[0]
    if len(body) != 1 or not isinstance(body[0], ir.Assign) or not isinstance(body[0].target, ir.Name):
        return None
    a = body[0]
    if not (isinstance(a.value, ir.Name) and a.value.name == var) or not isinstance(cond, ir.BinOp) \
            or cond.op not in ("<", ">"):
        return None
    m = a.target.name
    left, right = cond.left, cond.right

    def ref_of(e, idx):
        return (isinstance(e, ir.ArrayRef) and len(e.subscripts) == 1 and isinstance(e.subscripts[0], ir.Name)
                and e.subscripts[0].name == idx)

    if ref_of(left, var) and ref_of(right, m) and left.name == right.name:
        op = "min" if cond.op == "<" else "max"
    elif ref_of(left, m) and ref_of(right, var) and left.name == right.name:
        op = "min" if cond.op == ">" else "max"
    else:
        return None
    return m, op, left.name


SECTION_ELEMENTS = 64  # the most elements a section reduction accumulates per thread


def per_thread(r: ir.Reduction) -> bool:
    """Does a parallel reduce accumulate ``r`` per thread: a scalar, or a constant section
    (not an element invariant in the loop, which stays serial)?"""
    return r.target is None or r.section is not None


def constant_section(subs: list[ir.Expr], loops: dict[str, list[ir.Do]], env: dict) -> Optional[tuple]:
    """The box of elements a reduction statement updates over its inner loops: for
    ``rms(m)`` under ``do m = 1, 5`` ((1, 5),). Each subscript linear in the variables of
    inner loops (``loops``: variable -> the DO loops over it inside the reduced loop) with
    constant bounds and unit steps, or constant; None otherwise or past SECTION_ELEMENTS."""
    from . import affine
    ranges: dict[str, tuple[int, int]] = {}
    for var, dos in loops.items():
        lo = hi = None
        for d in dos:
            b = [affine.poly_of(e, env) for e in (d.start, d.end)]
            st = affine.poly_of(d.step, env) if d.step is not None else affine.const(1)
            if any(p is None or not affine.is_const(p) for p in b + [st]) or affine.constant(st) != 1:
                lo = None
                break
            a, z = affine.constant(b[0]), affine.constant(b[1])
            lo, hi = (a, z) if lo is None else (min(lo, a), max(hi, z))
        if lo is not None and lo <= hi:
            ranges[var] = (lo, hi)
    around = [(v, affine.const(a), affine.const(z)) for v, (a, z) in ranges.items()]
    box = []
    count = 1
    for sub in subs:
        p = affine.poly_of(sub, env) if not isinstance(sub, ir.Slice) else None
        if p is None or any(len(k) > 1 for k in p) or not affine.names(p) <= set(ranges):
            return None
        lo, hi = (affine.constant(affine.extreme(p, around, s)) for s in (-1, +1))
        box.append((lo, hi))
        count *= hi - lo + 1
    if not box or count > SECTION_ELEMENTS:
        return None
    return tuple(box)
