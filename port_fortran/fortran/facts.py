"""Facts about integer scalars where a loop starts, and a small prover over them.

A fact is a linear inequality ``p >= 0`` over integer polynomials (:mod:`affine`; a product
of names counts as one unknown) or a disequality ``p /= 0``. :func:`guard_facts` collects
the facts that hold where a loop starts, path-sensitive but simple: the conditions of the
IF branches the loop sits in, the negated condition of each ``IF (c) RETURN`` (or STOP)
before it, and the ranges of the enclosing DO variables. Only names the routine never
assigns take part (their value at the guard is their value at the loop); PARAMETERs are
constants already (``env``).

:meth:`Facts.nonneg` proves ``p >= 0`` by Fourier-Motzkin elimination of the negation,
rounding each constraint to integers on the way (``2x - 1 >= 0`` becomes ``x - 1 >= 0``):
a proof found is a proof for integers; "not proven" says nothing. Pure functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Optional

from . import affine, ir
from .accesses import scalar_writes

Poly = affine.Poly
_LIMIT = 400  # constraints alive during one elimination; beyond it the proof is abandoned
_CMP = {"==", "/=", "<", "<=", ">", ">="}
_NEG = {"==": "/=", "/=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _round(p: Poly) -> Poly:
    """``c.x + k >= 0`` with g = gcd(c) > 1 -> ``(c/g).x + floor(k/g) >= 0`` (same integer points)."""
    g = 0
    for k, v in p.items():
        if k != ():
            g = gcd(g, abs(v))
    if g <= 1:
        return p
    out = {k: v // g for k, v in p.items() if k != ()}
    out[()] = p.get((), 0) // g
    return affine.add(out, {})


def _key(p: Poly) -> tuple:
    return tuple(sorted(p.items()))


def infeasible(cons: list[Poly]) -> bool:
    """True when no rational point satisfies every ``p >= 0`` of ``cons`` (so no integer
    point does either); False when one may, or when the elimination grew too large."""
    cur = {_key(c): c for c in (_round(c) for c in cons)}
    while True:
        live = []
        for c in cur.values():
            if affine.is_const(c):
                if affine.constant(c) < 0:
                    return True
                continue
            live.append(c)
        if not live:
            return False
        monos = sorted({k for c in live for k in c if k != ()})

        def cost(m):
            pos = sum(1 for c in live if c.get(m, 0) > 0)
            neg = sum(1 for c in live if c.get(m, 0) < 0)
            return pos * neg - pos - neg

        m = min(monos, key=cost)
        pos = [c for c in live if c.get(m, 0) > 0]
        neg = [c for c in live if c.get(m, 0) < 0]
        nxt = {_key(c): c for c in live if m not in c}
        for p in pos:
            for q in neg:
                r = _round(affine.add(affine.mul(affine.const(-q[m]), p), affine.mul(affine.const(p[m]), q)))
                nxt[_key(r)] = r
                if len(nxt) > _LIMIT:
                    return False
        cur = nxt


@dataclass
class Facts:
    """What is known: ``ineqs`` (each ``p >= 0``) and ``nonzero`` (each ``p /= 0``)."""

    ineqs: list = field(default_factory=list)
    nonzero: list = field(default_factory=list)

    def plus(self, ineqs=(), nonzero=()) -> "Facts":
        return Facts(self.ineqs + [p for p in ineqs if p is not None],
                     self.nonzero + [p for p in nonzero if p is not None])

    def names(self) -> set[str]:
        return {n for p in self.ineqs + self.nonzero for n in affine.names(p)}

    def nonneg(self, p: Poly) -> bool:
        """Proven ``p >= 0``."""
        if affine.is_const(p):
            return affine.constant(p) >= 0
        return infeasible(self.ineqs + [affine.add(affine.mul(affine.const(-1), p), affine.const(-1))])

    def pos(self, p: Poly) -> bool:
        """Proven ``p >= 1``."""
        return self.nonneg(affine.add(p, affine.const(-1)))

    def is_nonzero(self, p: Poly) -> bool:
        """Proven ``p /= 0``."""
        if affine.is_const(p):
            return affine.constant(p) != 0
        neg = affine.mul(affine.const(-1), p)
        g = affine.gcd_of(p)
        unit = {k: v // g for k, v in p.items()} if g > 1 else p
        for q in self.nonzero:
            if q in (p, neg, unit) or affine.mul(affine.const(-1), q) == unit:
                return True
        return self.pos(p) or self.pos(neg)

    def sign(self, p: Poly) -> Optional[int]:
        """1 (p >= 0 proven), -1 (p <= 0 proven), None (unknown)."""
        if self.nonneg(p):
            return 1
        if self.nonneg(affine.mul(affine.const(-1), p)):
            return -1
        return None


def condition_facts(e: ir.Expr, env: dict, negate: bool = False) -> tuple[list, list]:
    """(inequalities, disequalities) that hold when ``e`` is true (``negate``: false).
    Conjunctions give all their parts; disjunctions and what is not an integer comparison
    give nothing."""
    if isinstance(e, ir.UnaryOp) and e.op == "not":
        return condition_facts(e.operand, env, not negate)
    if isinstance(e, ir.BinOp) and e.op in ("and", "or"):
        if (e.op == "and") != negate:
            i1, n1 = condition_facts(e.left, env, negate)
            i2, n2 = condition_facts(e.right, env, negate)
            return i1 + i2, n1 + n2
        return [], []
    if isinstance(e, ir.BinOp) and e.op in _CMP:
        op = _NEG[e.op] if negate else e.op
        left, right = affine.poly_of(e.left, env), affine.poly_of(e.right, env)
        if left is None or right is None:
            return [], []
        p = affine.add(left, right, -1)
        m = affine.mul(affine.const(-1), p)
        one = affine.const(1)
        if op == ">=":
            return [p], []
        if op == ">":
            return [affine.add(p, one, -1)], []
        if op == "<=":
            return [m], []
        if op == "<":
            return [affine.add(m, one, -1)], []
        if op == "==":
            return [p, m], []
        return [], [p]
    return [], []


_JUMPS = (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)


def _ends_the_routine(body: list[ir.Stmt]) -> bool:
    """The block always ends the routine: it ends in RETURN or STOP and nothing in it jumps."""
    if not body or not isinstance(body[-1], (ir.Return, ir.Stop)):
        return False
    return not any(isinstance(s, _JUMPS + (ir.Exit, ir.Cycle)) for s in ir.walk(body))


def _jump_targets(s: ir.Stmt) -> list[int]:
    if isinstance(s, ir.Goto):
        return [s.target]
    if isinstance(s, ir.ComputedGoto):
        return list(s.targets)
    if isinstance(s, ir.ArithmeticIf):
        return list(s.labels)
    return []


def _clean(ineqs, nonzero, assigned: set[str]) -> tuple[list, list]:
    ok = lambda p: not (affine.names(p) & assigned)  # noqa: E731
    return [p for p in ineqs if ok(p)], [p for p in nonzero if ok(p)]


def path_to(body: list[ir.Stmt], target: ir.Stmt, path=None) -> Optional[list]:
    """[(block, index, statement holding the next block)] from ``body`` down to ``target``."""
    path = path or []
    for i, s in enumerate(body):
        if s is target:
            return path + [(body, i, None)]
        blocks = []
        if isinstance(s, (ir.Do, ir.DoWhile)):
            blocks = [s.body]
        elif isinstance(s, ir.If):
            blocks = [b for _, b in s.branches] + [s.else_body]
        elif isinstance(s, ir.SelectCase):
            blocks = [c.body for c in s.cases]
        elif isinstance(s, ir.Where):
            blocks = [s.body, s.elsewhere]
        for b in blocks:
            r = path_to(b, target, path + [(body, i, s)])
            if r is not None:
                return r
    return None


def guard_facts(kbody: list[ir.Stmt], path: list, assigned: set[str], env: dict) -> Facts:
    """Facts that hold where the statement at the end of ``path`` starts.

    ``path`` is ``[(block, index, statement holding the next block)]`` from the routine's
    body down to the statement (:func:`path_to`); ``assigned`` the names the
    routine assigns anywhere (facts about them are dropped). A guard ``IF (c) RETURN`` is
    used only when no jump from before it lands between it and the statement."""
    order = {id(s): k for k, s in enumerate(ir.walk(kbody))}
    target = path[-1][0][path[-1][1]]
    t_pos = order.get(id(target), 0)
    labels_at = {s.label: order[id(s)] for s in ir.walk(kbody) if s.label is not None}
    jumps = [(order[id(s)], t) for s in ir.walk(kbody) for t in _jump_targets(s)]
    ineqs: list = []
    nonzero: list = []

    def bypassed(g_pos: int) -> bool:
        return any(src < g_pos and g_pos < labels_at.get(t, -1) <= t_pos for src, t in jumps)

    for level, (block, idx, owner) in enumerate(path):
        for s in block[:idx]:
            if isinstance(s, ir.If) and len(s.branches) == 1 and not s.else_body \
                    and _ends_the_routine(s.branches[0][1]) and not bypassed(order[id(s)]):
                i, n = condition_facts(s.branches[0][0], env, negate=True)
                i, n = _clean(i, n, assigned)
                ineqs += i
                nonzero += n
        if owner is None or level + 1 >= len(path):
            continue
        inner_block = path[level + 1][0]
        if isinstance(owner, ir.If):
            conds = [c for c, _ in owner.branches]
            k = next((j for j, (_, b) in enumerate(owner.branches) if b is inner_block), None)
            pairs = [(c, True) for c in conds] if k is None else [(c, True) for c in conds[:k]] + [(conds[k], False)]
            for c, neg in pairs:
                i, n = condition_facts(c, env, negate=neg)
                i, n = _clean(i, n, assigned)
                ineqs += i
                nonzero += n
        elif isinstance(owner, ir.Do) and inner_block is owner.body:
            ineqs += loop_var_facts(owner, env)
    return Facts(ineqs, nonzero)


def loop_var_facts(do: ir.Do, env: dict) -> list:
    """``start <= var <= end`` (constant positive step; reversed for a negative one) inside
    the body of ``do``, when the bounds' names keep their values in the body."""
    lo, hi = affine.poly_of(do.start, env), affine.poly_of(do.end, env)
    st = affine.poly_of(do.step, env) if do.step is not None else affine.const(1)
    if lo is None or hi is None or st is None or not affine.is_const(st) or affine.constant(st) == 0:
        return []
    if (affine.names(lo) | affine.names(hi)) & set(scalar_writes(do.body, set())):
        return []
    v = affine.var(do.var)
    if affine.constant(st) > 0:
        return [affine.add(v, lo, -1), affine.add(hi, v, -1)]
    return [affine.add(lo, v, -1), affine.add(v, hi, -1)]
