"""The array test of the dependence analysis (pure): can a write and another access of
one array touch the same element in two different iterations of a loop? Exact for
subscripts affine in the loop indices (same coefficient: constant distance; different
coefficients: GCD test; ranges of elements a call touches), with conditions on values
known where the loop starts under which they never coincide; conservative otherwise."""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Optional

from . import affine, ir
from .accesses import Access
from .facts import Facts

_NEVER, _SAME_ITER, _ANY = "never", "same-iteration", "any"


def _subst(p, subst: dict):
    if p is None or not subst:
        return p
    for name, q in subst.items():
        if name in affine.names(p):
            if q is None:
                return None
            p = affine.substitute(p, name, q)
    return p


@dataclass
class DimTest:
    """How two subscripts in one dimension can coincide in iterations v1 /= v2 of a loop:
    ``never``, only in the ``same-iteration``, or ``any`` (then ``exact`` says whether a
    coincidence is certain, and ``cond``, when set, is a condition on values known where
    the loop starts under which they never coincide across iterations)."""

    rel: str
    exact: bool
    cond: Optional[ir.Expr] = None


@dataclass
class PairTest:
    carried: bool
    exact: bool
    cond: Optional[ir.Expr] = None  # carried, unless this holds


@dataclass
class LoopScope:
    """What the array test of one loop needs: the loop, its inner loops, the scalars that
    change in it, PARAMETERs, the facts at its start and the closed forms of its
    induction variables."""

    loop: ir.Do
    inner: dict  # inner DO variable -> its Do
    variant: set
    env: dict
    facts: "Facts"
    enclosing: dict  # id(statement) -> the inner DOs around it (outermost first)
    subst_of: object = None

    @property
    def v(self) -> str:
        return self.loop.var

    def step(self) -> Optional[int]:
        st = affine.poly_of(self.loop.step, self.env) if self.loop.step is not None else affine.const(1)
        if st is None or not affine.is_const(st) or affine.constant(st) == 0:
            return None
        return affine.constant(st)

    def span(self) -> Optional[affine.Poly]:
        """Largest |v1 - v2| over two iterations (end - start for a positive step)."""
        st = self.step()
        lo, hi = affine.poly_of(self.loop.start, self.env), affine.poly_of(self.loop.end, self.env)
        if st is None or lo is None or hi is None or (affine.names(lo) | affine.names(hi)) & self.variant:
            return None
        return affine.add(hi, lo, -1) if st > 0 else affine.add(lo, hi, -1)

    def pair_facts(self, w: Access, a: Access) -> "Facts":
        """Facts at the loop's start, plus: the loop runs twice, and the inner loops around
        both accesses run (an access in a loop that does not run touches nothing)."""
        extra = []
        t = self.span()
        if t is not None:
            extra.append(affine.add(t, affine.const(1), -1))
        for d in self.enclosing.get(id(w.stmt), []) + self.enclosing.get(id(a.stmt), []):
            r = _loop_bounds(d, self.env)
            if r is not None:
                lo, hi = r
                if not ((affine.names(lo) | affine.names(hi)) & (set(self.inner) | {self.v} | self.variant)):
                    extra.append(affine.add(hi, lo, -1))
        return self.facts.plus(extra)


def _loop_bounds(d: ir.Do, env) -> Optional[tuple]:
    """(smallest, largest) value a DO variable can take, as polynomials (constant step)."""
    lo, hi = affine.poly_of(d.start, env), affine.poly_of(d.end, env)
    st = affine.poly_of(d.step, env) if d.step is not None else affine.const(1)
    if lo is None or hi is None or st is None or not affine.is_const(st) or affine.constant(st) == 0:
        return None
    return (lo, hi) if affine.constant(st) > 0 else (hi, lo)


def _neg(p):
    return affine.mul(affine.const(-1), p)


def _extremes(p, loops: list, env, facts) -> Optional[tuple]:
    """(min, max) of a polynomial over the ranges of the loops' variables (innermost
    substituted first; each coefficient's sign must be known). None when not bounded."""
    lo_p, hi_p = p, p
    for d in reversed(loops):
        out = []
        for q, want_max in ((lo_p, False), (hi_p, True)):
            c, _ = affine.split(q, d.var)
            if c is None:
                return None
            if not c:
                out.append(q)
                continue
            b = _loop_bounds(d, env)
            sign = facts.sign(c)
            if b is None or sign is None:
                return None
            end = b[1] if (sign > 0) == want_max else b[0]
            out.append(affine.substitute(q, d.var, end))
        lo_p, hi_p = out
    return lo_p, hi_p


# conditions (IR expressions over values known where the loop starts)


def _int(p) -> ir.Expr:
    return affine.to_expr(p)


def _cmp(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp(op, a, b, ftype=ir.LOGICAL)


def _abs(p, facts) -> ir.Expr:
    """|p| as an expression: p or -p when its sign is known."""
    s = facts.sign(p)
    if s == 1:
        return _int(p)
    if s == -1:
        return _int(_neg(p))
    return ir.FuncCall("abs", [_int(p)], True, ftype=ir.INTEGER)


def join_conditions(op: str, items: list) -> Optional[ir.Expr]:
    out: list = []
    for x in items:
        if x is not None and not any(ir.to_dict(x) == ir.to_dict(y) for y in out):
            out.append(x)
    if not out:
        return None
    e = out[0]
    for x in out[1:]:
        e = ir.BinOp(op, e, x, ftype=ir.LOGICAL)
    return e


def _signed(p):
    """p or -p, whichever is written with a positive leading term."""
    return _neg(p) if isinstance(affine.to_expr(p), ir.UnaryOp) else p


def _unit(p):
    """p divided by the gcd of its coefficients, leading term positive."""
    g = affine.gcd_of(p) or 1
    return _signed({k: v // g for k, v in p.items()})


def _nonzero_cond(c) -> ir.Expr:
    q = _unit(c)
    zero = ir.Literal(0, "0", ftype=ir.INTEGER)
    if len(q) == 1 and not affine.is_const(q):
        (mono, _), = q.items()
        return join_conditions("and", [_cmp("/=", ir.Name(n, ftype=ir.INTEGER), zero) for n in dict.fromkeys(mono)])
    return _cmp("/=", _int(q), zero)


def _at_least(e: ir.Expr, p) -> ir.Expr:
    return _cmp(">=", e, _int(p))


def _sides(e: ir.Expr) -> Optional[list]:
    """The polynomials an expression may equal: [p] for p, [p, -p] for abs(p)."""
    if isinstance(e, ir.FuncCall) and e.name == "abs" and len(e.args) == 1:
        p = affine.poly_of(e.args[0])
        return None if p is None else [p, _neg(p)]
    p = affine.poly_of(e)
    return None if p is None else [p]


def _impossible(cond: ir.Expr, facts) -> bool:
    """The facts prove that ``cond`` never holds (a version that would never run)."""
    if isinstance(cond, ir.BinOp) and cond.op == "or":
        return _impossible(cond.left, facts) and _impossible(cond.right, facts)
    if isinstance(cond, ir.BinOp) and cond.op == "and":
        return _impossible(cond.left, facts) or _impossible(cond.right, facts)
    if not isinstance(cond, ir.BinOp) or cond.op not in (">=", ">", "<", "<=", "==", "/="):
        return False
    ls, rs = _sides(cond.left), _sides(cond.right)
    if ls is None or rs is None or len(rs) != 1:
        return False
    r = rs[0]
    one = affine.const(1)
    if cond.op in (">=", ">"):  # every value of the left side stays below r (or at most r)
        gap = one if cond.op == ">=" else affine.const(0)
        return all(facts.nonneg(affine.add(affine.add(r, x, -1), gap, -1)) for x in ls)
    if cond.op in ("<", "<="):
        gap = affine.const(0) if cond.op == "<" else one
        return all(facts.nonneg(affine.add(affine.add(x, r, -1), gap, -1)) for x in ls)
    if cond.op == "==":
        return len(ls) == 1 and facts.is_nonzero(affine.add(ls[0], r, -1))
    return len(ls) == 1 and facts.nonneg(affine.add(ls[0], r, -1)) and facts.nonneg(affine.add(r, ls[0], -1))


def _same_coefficient(c, d, scope: LoopScope, facts) -> DimTest:
    """c*v1 + r1 == c*v2 + r2 with d = r2 - r1 free of inner loop indices."""
    one = affine.const(1)
    if not c:  # the loop variable is not in the subscript: the same element or never
        if not d:
            return DimTest(_ANY, True)
        if facts.is_nonzero(d):
            return DimTest(_NEVER, True)
        return DimTest(_ANY, False)
    if not d:  # c*(v1 - v2) == 0: only the same iteration, if c /= 0
        if facts.is_nonzero(c):
            return DimTest(_SAME_ITER, True)
        return DimTest(_ANY, False, _nonzero_cond(c))
    step = scope.step()
    span = scope.span()
    if affine.is_const(c):
        cc = abs(affine.constant(c))
        if affine.is_const(d):
            dd = affine.constant(d)
            if dd % cc != 0:
                return DimTest(_NEVER, True)
            dist = abs(dd // cc)  # |v1 - v2| of the two iterations that meet
            if step is not None and dist % abs(step) != 0:
                return DimTest(_NEVER, True)
            if span is not None and facts.pos(affine.add(affine.const(dist), span, -1)):
                return DimTest(_NEVER, True)
            return DimTest(_ANY, True)
        if span is None:
            return DimTest(_ANY, False)
        # they meet only if |d| <= cc*(v1 - v2) <= cc*span: independent if d == 0 or |d| > cc*span
        big = affine.add(affine.mul(affine.const(cc), span), one)
        if facts.nonneg(affine.add(d, big, -1)) or facts.nonneg(affine.add(_neg(d), big, -1)):
            return DimTest(_NEVER, True)
        zero = None if facts.is_nonzero(d) else _cmp("==", _int(_unit(d)), ir.Literal(0, "0", ftype=ir.INTEGER))
        return DimTest(_ANY, False, join_conditions("or", [zero, _at_least(_abs(_signed(d), facts), big)]))
    # a symbolic coefficient: |c| > |d| leaves no room for v1 /= v2 (|v1 - v2| >= 1)
    pc, nc = affine.add(c, one, -1), affine.add(_neg(c), one, -1)
    if (facts.nonneg(affine.add(pc, d, -1)) and facts.nonneg(affine.add(pc, d))) or \
            (facts.nonneg(affine.add(nc, d, -1)) and facts.nonneg(affine.add(nc, d))):
        return DimTest(_SAME_ITER, True)
    if affine.is_const(d):
        return DimTest(_ANY, False, _at_least(_abs(c, facts), affine.const(abs(affine.constant(d)) + 1)))
    return DimTest(_ANY, False, _cmp(">", _abs(c, facts), _abs(d, facts)))


def _dim_relation(sw: ir.Expr, sa: ir.Expr, w: Access, a: Access, scope: LoopScope, facts) -> DimTest:
    """How the subscripts ``sw`` (of the write ``w``) and ``sa`` (of the access ``a``) in
    one dimension can coincide for iterations v1 /= v2 of the loop."""
    if isinstance(sw, ir.Slice) or isinstance(sa, ir.Slice):
        return _range_relation(sw, sa, w, a, scope, facts)
    env, v = scope.env, scope.v
    subst_w = scope.subst_of(w) if scope.subst_of else None
    subst_a = scope.subst_of(a) if scope.subst_of else None
    pw, pa = _subst(affine.poly_of(sw, env), subst_w), _subst(affine.poly_of(sa, env), subst_a)
    if pw is None or pa is None:
        return DimTest(_ANY, False)
    nw, na = affine.names(pw), affine.names(pa)
    if (nw | na) & scope.variant:
        return DimTest(_ANY, False)
    inner = set(scope.inner)
    uses_inner = bool((nw | na) & inner)
    if uses_inner and pw == pa and v not in nw:
        # inner loop indices range freely: the same elements in every iteration of v
        return DimTest(_ANY, True)
    cw, rw = affine.split(pw, v)
    ca, ra = affine.split(pa, v)
    if cw is None or ca is None or (affine.names(cw) | affine.names(ca)) & inner:
        return DimTest(_ANY, False)
    if cw == ca and not uses_inner:
        return _same_coefficient(cw, affine.add(ra, rw, -1), scope, facts)
    if cw == ca:
        return _flattened(cw, rw, ra, w, a, scope, facts)
    if not uses_inner and affine.is_const(cw) and affine.is_const(ca):
        diff = affine.add(ra, rw, -1)
        if affine.is_const(diff):
            g = gcd(affine.constant(cw), affine.constant(ca))
            if g and affine.constant(diff) % g != 0:
                return DimTest(_NEVER, True)
            # a reflection (q(1 - k) written, q(k) read: a halo mirrored from the interior)
            # meets only where the two ranges over the loop overlap
            if _disjoint_ranges(pw, pa, rw, ra, w, a, scope, facts).rel == _NEVER:
                return DimTest(_NEVER, True)
            return DimTest(_ANY, True)
    return _disjoint_ranges(pw, pa, rw, ra, w, a, scope, facts)


def _ends(sub: ir.Expr) -> Optional[tuple[ir.Expr, ir.Expr]]:
    """(first, last) subscript of a point or of a unit-stride range ``lo:hi``."""
    if not isinstance(sub, ir.Slice):
        return sub, sub
    if sub.lower is None or sub.upper is None:
        return None
    if sub.step is not None and not (isinstance(sub.step, ir.Literal) and sub.step.value == 1):
        return None
    return sub.lower, sub.upper


def _range_relation(sw: ir.Expr, sa: ir.Expr, w: Access, a: Access, scope: LoopScope, facts) -> DimTest:
    """Like :func:`_dim_relation` when a subscript is a range ``lo:hi`` (the elements a
    call touches of an array passed as an element): c*v + r_lo .. c*v + r_hi with the
    same c at both ends meets another such range of iteration v2 only if c*(v1 - v2)
    falls between the ranges' differences (:func:`_flattened`); with different
    coefficients, only if the ranges the two cover over the whole loop overlap."""
    ew, ea = _ends(sw), _ends(sa)
    if ew is None or ea is None:
        return DimTest(_ANY, False)
    env, v = scope.env, scope.v
    subst_w = scope.subst_of(w) if scope.subst_of else None
    subst_a = scope.subst_of(a) if scope.subst_of else None
    pw = [_subst(affine.poly_of(x, env), subst_w) for x in ew]
    pa = [_subst(affine.poly_of(x, env), subst_a) for x in ea]
    if any(p is None for p in pw + pa):
        return DimTest(_ANY, False)
    if set().union(*(affine.names(p) for p in pw + pa)) & scope.variant:
        return DimTest(_ANY, False)
    inner = set(scope.inner)
    splits = [affine.split(p, v) for p in pw + pa]
    if any(c is None or affine.names(c) & inner for c, _ in splits):
        return DimTest(_ANY, False)
    coefs = [c for c, _ in splits]
    rests = [r for _, r in splits]
    if all(c == coefs[0] for c in coefs) and affine.is_const(coefs[0]) and coefs[0] and scope.step() is not None \
            and not set().union(*(affine.names(r) for r in rests)) & inner:
        dmin, dmax = affine.add(rests[2], rests[1], -1), affine.add(rests[3], rests[0], -1)
        if affine.is_const(dmin) and affine.is_const(dmax):
            # contiguous ranges c*v + [lo, hi]: they meet iff c*step*delta is in [dmin, dmax] for some delta /= 0
            cs = abs(affine.constant(coefs[0]) * scope.step())
            lo, hi = affine.constant(dmin), affine.constant(dmax)
            meets = any(lo <= m <= hi for m in (-(-lo // cs) * cs, (hi // cs) * cs, cs, -cs) if m != 0)
            return DimTest(_ANY, True) if meets else DimTest(_NEVER, True)
    if all(c == coefs[0] for c in coefs):
        return _flattened(coefs[0], (splits[0][1], splits[1][1]), (splits[2][1], splits[3][1]), w, a, scope, facts)
    loops = [scope.loop]
    lw = _extremes(pw[0], loops + scope.enclosing.get(id(w.stmt), []), env, facts)
    hw = _extremes(pw[1], loops + scope.enclosing.get(id(w.stmt), []), env, facts)
    la = _extremes(pa[0], loops + scope.enclosing.get(id(a.stmt), []), env, facts)
    ha = _extremes(pa[1], loops + scope.enclosing.get(id(a.stmt), []), env, facts)
    if lw is None or hw is None or la is None or ha is None:
        return DimTest(_ANY, False)
    ends = [lw[0], hw[1], la[0], ha[1]]
    if set().union(*(affine.names(p) for p in ends)) & (inner | {v} | scope.variant):
        return DimTest(_ANY, False)
    one = affine.const(1)
    if facts.nonneg(affine.add(affine.add(la[0], hw[1], -1), one, -1)) or \
            facts.nonneg(affine.add(affine.add(lw[0], ha[1], -1), one, -1)):
        return DimTest(_NEVER, True)
    return DimTest(_ANY, False)


def _flattened(c, rw, ra, w: Access, a: Access, scope: LoopScope, facts) -> DimTest:
    """c*v + r(inner indices): ``a(i + (j-1)*n)`` with i in 1..n. Iterations v1 /= v2 meet
    only if c*(v1 - v2) falls in the range of r_a - r_w; when |c*step| exceeds that range
    (a range test on the symbolic bounds of the inner loops) they never do. ``rw``/``ra``
    may be (first, last) pairs: the ranges of elements a call touches."""
    rw_lo, rw_hi = rw if isinstance(rw, tuple) else (rw, rw)
    ra_lo, ra_hi = ra if isinstance(ra, tuple) else (ra, ra)
    lo_w = _extremes(rw_lo, scope.enclosing.get(id(w.stmt), []), scope.env, facts)
    hi_w = _extremes(rw_hi, scope.enclosing.get(id(w.stmt), []), scope.env, facts)
    lo_a = _extremes(ra_lo, scope.enclosing.get(id(a.stmt), []), scope.env, facts)
    hi_a = _extremes(ra_hi, scope.enclosing.get(id(a.stmt), []), scope.env, facts)
    if lo_w is None or hi_w is None or lo_a is None or hi_a is None:
        return DimTest(_ANY, False)
    ew, ea = (lo_w[0], hi_w[1]), (lo_a[0], hi_a[1])
    dmin, dmax = affine.add(ea[0], ew[1], -1), affine.add(ea[1], ew[0], -1)
    if (affine.names(dmin) | affine.names(dmax)) & (set(scope.inner) | {scope.v} | scope.variant):
        return DimTest(_ANY, False)
    one = affine.const(1)
    if not c:
        if facts.pos(dmin) or facts.pos(_neg(dmax)):
            return DimTest(_NEVER, True)
        return DimTest(_ANY, False)
    step = scope.step()
    cs = affine.mul(c, affine.const(abs(step))) if step is not None else c
    for s in (cs, _neg(cs)):
        if facts.pos(affine.add(s, dmax, -1)) and facts.pos(affine.add(s, dmin)):
            return DimTest(_SAME_ITER, True)
    if affine.is_const(cs):
        return DimTest(_ANY, False)  # a condition on the inner trip counts alone is not worth a version
    mag = _abs(cs, facts)
    lo_need = affine.add(one, dmin, -1)  # |cs| >= 1 - dmin
    hi_need = affine.add(dmax, one)  # |cs| >= dmax + 1
    if lo_need == hi_need:
        return DimTest(_ANY, False, _at_least(mag, hi_need))
    return DimTest(_ANY, False, join_conditions("and", [_at_least(mag, hi_need), _at_least(_abs(cs, facts), lo_need)]))


def _disjoint_ranges(pw, pa, rw, ra, w: Access, a: Access, scope: LoopScope, facts) -> DimTest:
    """Different coefficients: the two accesses never meet if the ranges of elements they
    touch over the whole loop are disjoint. A condition only when the ranges are apart by a
    symbolic offset (two regions of one array), not by the loop bounds alone."""
    loops = [scope.loop]
    ew = _extremes(pw, loops + scope.enclosing.get(id(w.stmt), []), scope.env, facts)
    ea = _extremes(pa, loops + scope.enclosing.get(id(a.stmt), []), scope.env, facts)
    if ew is None or ea is None:
        return DimTest(_ANY, False)
    if (affine.names(ew[0]) | affine.names(ew[1]) | affine.names(ea[0]) | affine.names(ea[1])) & \
            (set(scope.inner) | {scope.v} | scope.variant):
        return DimTest(_ANY, False)
    one = affine.const(1)
    below = affine.add(affine.add(ea[0], ew[1], -1), one, -1)  # amin - wmax - 1 >= 0
    above = affine.add(affine.add(ew[0], ea[1], -1), one, -1)  # wmin - amax - 1 >= 0
    if facts.nonneg(below) or facts.nonneg(above):
        return DimTest(_NEVER, True)
    bound_names = set()
    for d in [scope.loop] + scope.enclosing.get(id(w.stmt), []) + scope.enclosing.get(id(a.stmt), []):
        for e in (d.start, d.end, d.step):
            if e is not None:
                bound_names |= {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
    offset = affine.add(ra, rw, -1)
    if not (affine.names(offset) - bound_names - set(scope.inner)):
        return DimTest(_ANY, False)
    return DimTest(_ANY, False, join_conditions("or", [_cmp("<", _int(ew[1]), _int(ea[0])), _cmp("<", _int(ea[1]), _int(ew[0]))]))


def pair_test(w: Access, a: Access, scope: LoopScope) -> PairTest:
    """Can the write ``w`` and the access ``a`` of one array touch the same element in two
    different iterations of the loop? Independent in one dimension is independent."""
    if w.subs is None or a.subs is None or len(w.subs) != len(a.subs):
        return PairTest(True, False)
    facts = scope.pair_facts(w, a)
    exact = True
    conds = []
    for sw, sa in zip(w.subs, a.subs):
        t = _dim_relation(sw, sa, w, a, scope, facts)
        if t.rel in (_NEVER, _SAME_ITER):
            return PairTest(False, True)
        exact = exact and t.exact
        if t.cond is not None and not _impossible(t.cond, facts):
            conds.append(t.cond)
    if conds:
        return PairTest(True, False, join_conditions("or", conds))
    return PairTest(True, exact)


def never_same(subs: list, other: list, loops: list, env: dict) -> bool:
    """Do the subscripts ``subs`` never name the element ``other`` names, whatever the
    iteration of ``loops`` (unit-step DOs, outermost first): in some dimension their
    difference keeps one sign over the loops' ranges (``x(j)`` for ``j = 1, i - 1`` against
    ``x(i)``)."""
    if subs is None or other is None or len(subs) != len(other) or \
            any(isinstance(x, ir.Slice) for x in list(subs) + list(other)):
        return False
    ranges = []
    for d in loops:
        if d.step is not None and not (isinstance(d.step, ir.Literal) and d.step.value == 1):
            return False
        lo, hi = affine.poly_of(d.start, env), affine.poly_of(d.end, env)
        if lo is None or hi is None:
            return False
        ranges.append((d.var, lo, hi))
    for x, y in zip(subs, other):
        px, py = affine.poly_of(x, env), affine.poly_of(y, env)
        if px is None or py is None:
            continue
        diff = affine.add(px, py, -1)
        top, bottom = affine.extreme(diff, ranges, +1), affine.extreme(diff, ranges, -1)
        if (top is not None and affine.is_const(top) and affine.constant(top) < 0) or \
                (bottom is not None and affine.is_const(bottom) and affine.constant(bottom) > 0):
            return True
    return False
