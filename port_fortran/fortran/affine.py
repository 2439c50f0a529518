"""Integer polynomials over names, for subscripts and bounds.

A ``Poly`` maps a monomial (sorted tuple of names; () is the constant) to an integer
coefficient. ``poly_of`` turns an integer expression of +, -, * and literals into one
(None when the expression is not such a polynomial). Pure functions.
"""
from __future__ import annotations

from math import gcd
from typing import Optional

from . import ir

Poly = dict  # tuple[str, ...] -> int


def _clean(p: Poly) -> Poly:
    return {k: v for k, v in p.items() if v != 0}


def const(c: int) -> Poly:
    return _clean({(): c})


def var(name: str) -> Poly:
    return {(name,): 1}


def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
    return _clean(out)


def mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            k = tuple(sorted(ka + kb))
            out[k] = out.get(k, 0) + va * vb
    return _clean(out)


def poly_of(e: ir.Expr, env: dict | None = None) -> Optional[Poly]:
    """Polynomial of an integer expression; PARAMETER values in ``env`` are substituted (a
    value may be a Poly too: a scalar known to equal another's value plus a constant)."""
    env = env or {}
    if isinstance(e, ir.Literal):
        return const(e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ir.Name):
        if e.name in env and isinstance(env[e.name], int):
            return const(env[e.name])
        if e.name in env and isinstance(env[e.name], dict):
            return dict(env[e.name])
        if e.ftype is not None and e.ftype.base != "integer":
            return None
        return var(e.name)
    if isinstance(e, ir.UnaryOp) and e.op in ("-", "+"):
        p = poly_of(e.operand, env)
        if p is None:
            return None
        return mul(const(-1), p) if e.op == "-" else p
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*"):
        a, b = poly_of(e.left, env), poly_of(e.right, env)
        if a is None or b is None:
            return None
        if e.op == "+":
            return add(a, b)
        if e.op == "-":
            return add(a, b, -1)
        return mul(a, b)
    if isinstance(e, ir.BinOp) and e.op == "/":
        a, b = poly_of(e.left, env), poly_of(e.right, env)
        if a is not None and b is not None and is_const(b) and constant(b) not in (0,):
            d = constant(b)
            if all(v % d == 0 for v in a.values()):
                return {k: v // d for k, v in a.items()}
        return None
    return None


def names(p: Poly) -> set[str]:
    return {n for k in p for n in k}


def extreme(p: Poly, loops: list, sign: int) -> Optional[Poly]:
    """min (sign -1) or max (+1) of the linear ``p`` over the ranges of ``loops``
    ((variable, lower, upper) polynomials, innermost last), or None when that is not linear
    or still names one of the loops' variables."""
    for v, lo, hi in reversed(loops):
        c = p.get((v,), 0)
        if not c:
            continue
        p = substitute(p, v, hi if (c > 0) == (sign > 0) else lo)
        if any(len(k) > 1 for k in p):
            return None
    if names(p) & {v for v, _, _ in loops}:
        return None
    return p


def is_const(p: Poly) -> bool:
    return all(k == () for k in p)


def constant(p: Poly) -> int:
    return p.get((), 0)


def nonneg(p: Poly) -> bool:
    """Is ``p`` a constant of at least zero?"""
    return is_const(p) and constant(p) >= 0


def split(p: Poly, v: str) -> tuple[Optional[Poly], Poly]:
    """p = c*v + r with c, r free of v. Returns (c, r); c None when v appears non-linearly."""
    c: Poly = {}
    r: Poly = {}
    for k, val in p.items():
        cnt = k.count(v)
        if cnt == 0:
            r[k] = val
        elif cnt == 1:
            rest = list(k)
            rest.remove(v)
            c[tuple(rest)] = c.get(tuple(rest), 0) + val
        else:
            return None, r
    return _clean(c), _clean(r)


def substitute(p: Poly, v: str, q: Poly) -> Poly:
    out: Poly = {}
    for k, val in p.items():
        cnt = k.count(v)
        term = {tuple(x for x in k if x != v): val}
        for _ in range(cnt):
            term = mul(term, q)
        out = add(out, term)
    return out


def to_expr(p: Poly, ftype=ir.INTEGER) -> ir.Expr:
    """Expression for a polynomial (terms in a stable order, constant last)."""
    terms = sorted((k for k in p if k != ()), key=lambda k: (p[k] < 0, len(k), k))
    expr: Optional[ir.Expr] = None
    for k in terms:
        c = p[k]
        mono: ir.Expr = ir.Name(k[0], ftype=ftype)
        for n in k[1:]:
            mono = ir.BinOp("*", mono, ir.Name(n, ftype=ftype), ftype=ftype)
        mag = abs(c)
        if mag != 1:
            mono = ir.BinOp("*", ir.Literal(mag, str(mag), ftype=ftype), mono, ftype=ftype)
        if expr is None:
            expr = mono if c > 0 else ir.UnaryOp("-", mono, ftype=ftype)
        else:
            expr = ir.BinOp("+" if c > 0 else "-", expr, mono, ftype=ftype)
    c0 = p.get((), 0)
    if expr is None:
        return ir.Literal(c0, str(c0), ftype=ftype)
    if c0:
        expr = ir.BinOp("+" if c0 > 0 else "-", expr, ir.Literal(abs(c0), str(abs(c0)), ftype=ftype), ftype=ftype)
    return expr


def gcd_of(p: Poly) -> int:
    g = 0
    for v in p.values():
        g = gcd(g, abs(v))
    return g


def trip_count(loop: ir.Do, env: dict | None = None) -> Optional[ir.Expr]:
    """Iterations of a DO as an expression (max(0, .) left implicit)."""
    ps, pe = poly_of(loop.start, env), poly_of(loop.end, env)
    step = poly_of(loop.step, env) if loop.step is not None else const(1)
    it = ir.INTEGER
    if ps is not None and pe is not None and step is not None and is_const(step):
        st = constant(step)
        if st == 1:
            return to_expr(add(add(pe, ps, -1), const(1)))
        if st == -1:
            return to_expr(add(add(ps, pe, -1), const(1)))
        if st != 0:
            num = to_expr(add(add(pe, ps, -1), const(st)))
            return ir.BinOp("/", num, ir.Literal(st, str(st), ftype=it), ftype=it)
    stp = loop.step if loop.step is not None else ir.Literal(1, "1", ftype=it)
    num = ir.BinOp("+", ir.BinOp("-", loop.end, loop.start, ftype=it), stp, ftype=it)
    return ir.BinOp("/", num, stp, ftype=it)
