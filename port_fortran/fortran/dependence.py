"""Loop dependence analysis: which DO loops may run their iterations in parallel.

Pure functions over the IR. For every ``Do`` of a kernel, ``loop_info`` computes an
``ir.LoopInfo``: the verdict, the trip count, reductions (scalar and array-element),
privatisable scalars, indirect and scattered arrays, calls, early exits and, when the
loop is not parallel, the reasons as ``Diagnostic(code, message, line)``.

The array test is exact for subscripts affine in the loop indices (same coefficient:
constant distance; different coefficients: GCD test) and conservative otherwise.

Calls: given the effects of the program's routines (``effects.Calls``), a call to a routine
whose effects are confined to its arguments is the accesses it makes -- an array element
passed to an array dummy is the range of elements the callee touches from it
(``u(1:5, i, j, k)``), tested like any subscript (ranges included); a scalar passed to a
dummy it writes is a scalar write, one it surely assigns first a definition. Any other
call (I/O, COMMON, module or SAVE state, a routine no file defines, in the callee or
below) keeps the loop serial with ``call-in-loop`` naming the callee and the line.
Reason codes: loop-carried-dependence, possible-dependence, scalar-dependence,
last-value, loc-reduction, scattered-update, indirect-write, early-exit, call-in-loop,
io-in-loop, unsupported-in-loop, loop-variable-modified.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Optional

from . import affine, ir
from .ir import stmt_exprs
from .dataflow import FlowGraph, exposed_reads
from .facts import Facts, guard_facts, loop_var_facts, path_to
from .render import expr_str

# --------------------------------------------------------------------------- accesses


@dataclass
class Access:
    name: str
    subs: Optional[list[ir.Expr]]  # None: the whole array
    write: bool
    line: int
    stmt: ir.Stmt
    ref: Optional[ir.Expr] = None


class CallSites:
    """The effects of the calls of one kernel (``effects.Calls``), as the dependence test
    needs them: what a call reads and writes of the arrays and scalars it is passed."""

    def __init__(self, kernel: ir.Kernel, calls):
        self.kernel = kernel
        self.calls = calls
        self._cache: dict[str, object] = {}

    def effects(self, name: str):
        if name not in self._cache:
            self._cache[name] = self.calls.effects(self.kernel, name)
        return self._cache[name]

    def analysed(self, name: str, nargs: int):
        """The callee's effects when they are known for this call (a routine of the
        program, called with no more arguments than it has), else None."""
        eff = self.effects(name)
        if eff.callee is None or nargs > len(eff.dummies):
            return None
        return eff

    def written(self, name: str, nargs: int) -> Optional[set[int]]:
        """Positions the call may write (None: any)."""
        eff = self.analysed(name, nargs)
        return None if eff is None else eff.written_positions()

    def outs(self) -> dict[str, set[int]]:
        """Called name -> positions of scalar dummies the callee surely assigns first
        (the dataflow's kills)."""
        out: dict[str, set[int]] = {}
        for name in self.kernel.calls:
            eff = self.effects(name)
            if eff.callee is not None:
                out[name] = eff.assigned_positions()
        return out


def _call_accesses(name: str, args: list[ir.Expr], s: ir.Stmt, arrays: set[str], out: list[Access],
                   sites: Optional[CallSites], facts) -> set[int]:
    """Accesses of the caller's arrays passed to an analysed callee (what the callee
    touches of them); returns the ids of the actual arguments it accounted for."""
    done: set[int] = set()
    eff = sites.analysed(name, len(args)) if sites is not None else None
    if eff is None:
        return done
    for q, a in enumerate(args):
        if not isinstance(a, (ir.Name, ir.ArrayRef)) or a.name not in arrays:
            continue
        done.add(id(a))
        if isinstance(a, ir.ArrayRef):
            for sub in a.subscripts:
                _expr_reads(sub, out, s, arrays, sites, facts)
        d = eff.dummies[q]
        ref = sites.calls.actual_ref(sites.kernel, name, args, q, facts)
        if ref is None:
            continue
        subs = list(ref.subscripts) if isinstance(ref, ir.ArrayRef) else None
        if d.read:
            out.append(Access(a.name, subs, False, s.line, s, ref))
        if d.write:
            out.append(Access(a.name, subs, True, s.line, s, ref))
    return done


def _expr_reads(e: ir.Expr, out: list[Access], s: ir.Stmt, arrays: set[str], sites: Optional[CallSites] = None,
                facts=None):
    skip: set[int] = set()
    if sites is not None:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.FuncCall) and not x.intrinsic:
                skip |= _call_accesses(x.name, x.args, s, arrays, out, sites, facts)
    for x in ir.walk_expr(e):
        if id(x) in skip:
            continue
        if isinstance(x, ir.ArrayRef):
            out.append(Access(x.name, list(x.subscripts), False, s.line, s, x))
        elif isinstance(x, ir.Name) and x.name in arrays:
            out.append(Access(x.name, None, False, s.line, s, x))


def array_accesses(body: list[ir.Stmt], arrays: set[str], sites: Optional[CallSites] = None,
                   facts_at=None) -> list[Access]:
    """Reads and writes of arrays in ``body`` (nested statements included), in order.
    With ``sites`` a call to a routine of the program accesses what the callee touches of
    the arrays passed (``effects.Calls.actual_ref``; ``facts_at(statement)``: the facts
    that hold there); any other call reads and writes the whole arrays it is passed."""
    out: list[Access] = []
    for s in ir.walk(body):
        facts = facts_at(s) if facts_at is not None and sites is not None else None
        if isinstance(s, ir.Assign):
            t = s.target
            if isinstance(t, ir.ArrayRef):
                for sub in t.subscripts:
                    _expr_reads(sub, out, s, arrays, sites, facts)
                _expr_reads(s.value, out, s, arrays, sites, facts)
                out.append(Access(t.name, list(t.subscripts), True, s.line, s, t))
            else:
                _expr_reads(s.value, out, s, arrays, sites, facts)
                if t.name in arrays:
                    out.append(Access(t.name, None, True, s.line, s, t))
        elif isinstance(s, ir.CallStmt):
            done = _call_accesses(s.name, s.args, s, arrays, out, sites, facts)
            for a in s.args:
                if id(a) in done:
                    continue
                _expr_reads(a, out, s, arrays, sites, facts)
                if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name in arrays:
                    out.append(Access(a.name, None, True, s.line, s, a))
        else:
            for e in stmt_exprs(s):
                _expr_reads(e, out, s, arrays, sites, facts)
    return out


# --------------------------------------------------------------------------- scalar dataflow


def scalar_writes(body: list[ir.Stmt], arrays: set[str], sites: Optional[CallSites] = None) -> dict[str, int]:
    """Scalars assigned in ``body`` (name -> first line); DO variables of inner loops too,
    and scalars passed to CALLs (they may be written; with ``sites``, those passed to
    dummies an analysed callee writes, also through user functions)."""
    out: dict[str, int] = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name not in arrays:
            out.setdefault(s.target.name, s.line)
        elif isinstance(s, ir.Do):
            out.setdefault(s.var, s.line)
        elif isinstance(s, ir.CallStmt):
            w = sites.written(s.name, len(s.args)) if sites is not None else None
            for q, a in enumerate(s.args):
                if isinstance(a, ir.Name) and a.name not in arrays and (w is None or q in w):
                    out.setdefault(a.name, s.line)
        if sites is not None:
            for e in stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.FuncCall) and not x.intrinsic:
                        w = sites.written(x.name, len(x.args)) or set()
                        for q, a in enumerate(x.args):
                            if q in w and isinstance(a, ir.Name) and a.name not in arrays:
                                out.setdefault(a.name, s.line)
    return out


# --------------------------------------------------------------------------- reductions

_RED_OPS = {"+": "sum", "-": "sum", "*": "prod"}


def _mentions(e: ir.Expr, name: str) -> bool:
    return any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name == name for x in ir.walk_expr(e))


def _same(a: ir.Expr, b: ir.Expr) -> bool:
    return ir.to_dict(a) == ir.to_dict(b)


def reduction_op(target: ir.Expr, value: ir.Expr) -> Optional[str]:
    """``t = t + e`` / ``t = e + t`` / ``t = t - e`` / ``t = t * e`` / ``t = max(t, e...)``
    -> op name; None when the statement is not a reduction update of ``target``."""
    name = target.name

    def is_t(x):
        return _same(x, target)

    if isinstance(value, ir.BinOp) and value.op in _RED_OPS:
        if is_t(value.left) and not _mentions(value.right, name):
            return _RED_OPS[value.op]
        if value.op in ("+", "*") and is_t(value.right) and not _mentions(value.left, name):
            return _RED_OPS[value.op]
        # t = t + a + b parses as (t + a) + b
        if value.op in ("+", "-") and isinstance(value.left, ir.BinOp) and not _mentions(value.right, name):
            inner = reduction_op(target, value.left)
            if inner == "sum":
                return "sum"
    if isinstance(value, ir.FuncCall) and value.intrinsic and value.name in ("max", "min", "amax1", "amin1",
                                                                          "dmax1", "dmin1", "max0", "min0"):
        ts = [a for a in value.args if is_t(a)]
        others = [a for a in value.args if not is_t(a)]
        if len(ts) == 1 and not any(_mentions(a, name) for a in others):
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
        if isinstance(cond.right, ir.Name) and cond.right.name == m and _same(cond.left, e):
            op = "max" if cond.op in (">", ">=") else "min"
        elif isinstance(cond.left, ir.Name) and cond.left.name == m and _same(cond.right, e):
            op = "max" if cond.op in ("<", "<=") else "min"
        else:
            continue
        if _mentions(e, m):
            return None
        return m, op, [x for x in body if x is not a]
    return None


# --------------------------------------------------------------------------- helpers


def _label_set(body: list[ir.Stmt]) -> set[int]:
    return {s.label for s in ir.walk(body) if s.label is not None}


def _inner_loops(body: list[ir.Stmt]) -> list[ir.Stmt]:
    return [s for s in ir.walk(body) if isinstance(s, (ir.Do, ir.DoWhile))]


def _early_exits(loop: ir.Do, outer_names: set[str]) -> list[ir.Diagnostic]:
    """EXIT/CYCLE leaving the loop, GOTO out of it, RETURN or STOP inside."""
    labels = _label_set(loop.body)
    out: list[ir.Diagnostic] = []

    def visit(body, depth):
        for s in body:
            if isinstance(s, ir.Exit):
                if (s.construct_name is None and depth == 0) or (s.construct_name is not None and (
                        s.construct_name == loop.construct_name or s.construct_name in outer_names)):
                    out.append(ir.Diagnostic("early-exit", f"EXIT leaves the loop over {loop.var} (line {s.line})", s.line))
            elif isinstance(s, ir.Cycle):
                if s.construct_name is not None and s.construct_name in outer_names and s.construct_name != loop.construct_name:
                    out.append(ir.Diagnostic("early-exit", f"CYCLE of an outer loop leaves the loop over {loop.var} "
                                             f"(line {s.line})", s.line))
            elif isinstance(s, ir.Goto):
                if s.target not in labels:
                    out.append(ir.Diagnostic("early-exit", f"GOTO {s.target} jumps out of the loop over {loop.var} "
                                             f"(line {s.line})", s.line))
            elif isinstance(s, (ir.ComputedGoto, ir.ArithmeticIf)):
                targets = s.targets if isinstance(s, ir.ComputedGoto) else list(s.labels)
                bad = [t for t in targets if t not in labels]
                if bad:
                    out.append(ir.Diagnostic("early-exit", f"jump to label {bad[0]} leaves the loop over {loop.var} "
                                             f"(line {s.line})", s.line))
            elif isinstance(s, ir.Return):
                out.append(ir.Diagnostic("early-exit", f"RETURN inside the loop over {loop.var} (line {s.line})", s.line))
            elif isinstance(s, ir.Stop):
                out.append(ir.Diagnostic("early-exit", f"STOP inside the loop over {loop.var} (line {s.line})", s.line))
            if isinstance(s, (ir.Do, ir.DoWhile)):
                visit(ir.children(s), depth + 1)
            else:
                visit(ir.children(s), depth)

    visit(loop.body, 0)
    return out


def _calls(body: list[ir.Stmt]) -> list[tuple[str, int]]:
    out = []
    for s in ir.walk(body):
        if isinstance(s, ir.CallStmt):
            out.append((s.name, s.line))
        for e in stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    out.append((x.name, s.line))
    return out


def trip_count(loop: ir.Do, env: dict | None = None) -> Optional[ir.Expr]:
    """Iterations of a DO as an expression (max(0, .) left implicit)."""
    ps, pe = affine.poly_of(loop.start, env), affine.poly_of(loop.end, env)
    step = affine.poly_of(loop.step, env) if loop.step is not None else affine.const(1)
    it = ir.INTEGER
    if ps is not None and pe is not None and step is not None and affine.is_const(step):
        st = affine.constant(step)
        if st == 1:
            return affine.to_expr(affine.add(affine.add(pe, ps, -1), affine.const(1)))
        if st == -1:
            return affine.to_expr(affine.add(affine.add(ps, pe, -1), affine.const(1)))
        if st != 0:
            num = affine.to_expr(affine.add(affine.add(pe, ps, -1), affine.const(st)))
            return ir.BinOp("/", num, ir.Literal(st, str(st), ftype=it), ftype=it)
    stp = loop.step if loop.step is not None else ir.Literal(1, "1", ftype=it)
    num = ir.BinOp("+", ir.BinOp("-", loop.end, loop.start, ftype=it), stp, ftype=it)
    return ir.BinOp("/", num, stp, ftype=it)


def _subscript_text(subs: Optional[list[ir.Expr]]) -> str:
    from .render import expr_str
    if subs is None:
        return "(:)"
    return "(" + ", ".join(expr_str(x) for x in subs) + ")"


# --------------------------------------------------------------------------- array test

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


def _join(op: str, items: list) -> Optional[ir.Expr]:
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
        return _join("and", [_cmp("/=", ir.Name(n, ftype=ir.INTEGER), zero) for n in dict.fromkeys(mono)])
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
        return DimTest(_ANY, False, _join("or", [zero, _at_least(_abs(_signed(d), facts), big)]))
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
    return DimTest(_ANY, False, _join("and", [_at_least(mag, hi_need), _at_least(_abs(cs, facts), lo_need)]))


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
    return DimTest(_ANY, False, _join("or", [_cmp("<", _int(ew[1]), _int(ea[0])), _cmp("<", _int(ea[1]), _int(ew[0]))]))


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
        return PairTest(True, False, _join("or", conds))
    return PairTest(True, exact)


def entry_names(e: ir.Expr) -> ir.Expr:
    """A condition with the induction variables' starting values (``iy@0``) spelled as the
    variables themselves: where the loop starts, they hold those values."""
    import copy
    e = copy.deepcopy(e)
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Name) and x.name.endswith("@0"):
            x.name = x.name[:-2]
    return e


_FIXABLE_BESIDES_CONDITION = {"induction-variable"}


def _entry_facts(kernel: ir.Kernel, loop: ir.Do, ctx: "Context") -> Facts:
    path = path_to(kernel.body, loop)
    if path is None:
        return Facts()
    return guard_facts(kernel.body, path, set(scalar_writes(kernel.body, ctx.arrays, ctx.sites)), ctx.env)


def _enclosing_inner(loop: ir.Do) -> dict:
    out: dict = {}

    def rec(body, stack):
        for s in body:
            out[id(s)] = list(stack)
            if isinstance(s, ir.Do):
                rec(s.body, stack + [s])
            else:
                rec(ir.children(s), stack)

    rec(loop.body, [])
    return out


def condition_args(kernel: ir.Kernel, cond: ir.Expr) -> list[str]:
    """The arguments a loop's condition depends on: its names, and through the locals and
    DO variables among them, what those are computed from."""
    args = [a.name for a in kernel.args]
    defs: dict[str, set[str]] = {}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name):
            defs.setdefault(s.target.name, set()).update(x.name for x in ir.walk_expr(s.value)
                                                         if isinstance(x, (ir.Name, ir.ArrayRef)))
        elif isinstance(s, ir.Do):
            for e in (s.start, s.end, s.step):
                if e is not None:
                    defs.setdefault(s.var, set()).update(x.name for x in ir.walk_expr(e)
                                                         if isinstance(x, (ir.Name, ir.ArrayRef)))
    seen: set[str] = set()
    todo = [x.name for x in ir.walk_expr(cond) if isinstance(x, ir.Name)]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in args:
            todo += sorted(defs.get(n, ()))
    return [a for a in args if a in seen]


def _set_condition(info: ir.LoopInfo, conditional: list, kernel: ir.Kernel, loop: ir.Do,
                   reasons: list[ir.Diagnostic]) -> None:
    """The loop is independent when every pair's condition holds: record the conjunction
    (``LoopInfo.condition``) and say so in a reason (code ``conditional-independence``)."""
    cond = entry_names(_join("and", [c for c, _, _ in conditional]))
    info.condition = cond
    info.condition_args = condition_args(kernel, cond)
    _, w, a = conditional[0]
    where = f"{w.name}{_subscript_text(w.subs)} written, line {w.line}"
    if a is not w:
        where += f"; {a.name}{_subscript_text(a.subs)} {'written' if a.write else 'read'}, line {a.line}"
    reasons.append(ir.Diagnostic(
        "conditional-independence", f"iterations of {loop.var} are independent only if {expr_str(cond)} ({where}); "
        "otherwise they may touch the same element: parallel when it holds, serial when not", w.line))


# --------------------------------------------------------------------------- the verdict


@dataclass
class Context:
    """Facts about the kernel the loop analysis needs."""

    arrays: set[str]
    globals_: set[str]  # arguments, COMMON, module and host variables, function result: live after the kernel
    env: dict  # PARAMETER values
    flow: FlowGraph  # the routine's control flow: liveness of every scalar
    sites: Optional[CallSites] = None  # the effects of its calls (None: calls are not analysed)

    @property
    def outs(self) -> dict:
        return self.sites.outs() if self.sites is not None else {}


def kernel_context(k: ir.Kernel, calls=None) -> Context:
    arrays = {a.name for a in k.args if a.dims}
    arrays |= {n for n, v in k.locals.items() if v.dims}
    arrays |= {n for n, v in k.module_vars.items() if v.dims}
    arrays |= {n for n, v in k.host_vars.items() if v.dims}
    if k.result is not None and k.result.dims:
        arrays.add(k.result.name)
    globals_ = {a.name for a in k.args} | set(k.module_vars) | set(k.host_vars)
    globals_ |= {n for n, v in k.locals.items() if v.common is not None or v.save}
    if k.result is not None:
        globals_.add(k.result.name)
    env = {n: v.parameter for n, v in k.locals.items() if v.parameter is not None}
    shared = set(k.module_vars) | set(k.host_vars) | {n for n, v in k.locals.items() if v.common is not None or v.save}
    sites = CallSites(k, calls) if calls is not None else None
    outs = sites.outs() if sites is not None else None
    return Context(arrays, globals_, env, FlowGraph(k.body, live_at_end=globals_, globals_=shared, outs=outs), sites)


def live_after(loop: ir.Do, name: str, ctx: Context) -> bool:
    """May the value ``name`` has when ``loop`` ends be read later? (flow-sensitive: a
    reassignment on every path kills it; GOTOs are followed)."""
    return ctx.flow.is_live_after(loop, name)


def _use_line(loop: ir.Do, name: str, ctx: Context) -> str:
    use = ctx.flow.use_after(loop, name)
    return f"line {use.line}" if use is not None else "as an output of the routine"


def loop_info(loop: ir.Do, kernel: ir.Kernel, ctx: Context, outer: list[ir.Do]) -> ir.LoopInfo:
    info = ir.LoopInfo()
    v = loop.var
    info.trip = trip_count(loop, ctx.env)
    reasons: list[ir.Diagnostic] = []
    inner_loops = _inner_loops(loop.body)
    inner_vars = {s.var for s in inner_loops if isinstance(s, ir.Do)}

    # statements the loop cannot run in parallel with
    for s in ir.walk(loop.body):
        if isinstance(s, ir.Unsupported):
            code = "io-in-loop" if s.construct == "io-in-kernel" else "unsupported-in-loop"
            reasons.append(ir.Diagnostic(code, f"{s.reason} (line {s.line}) inside the loop over {v}", s.line))
    exits = _early_exits(loop, {o.construct_name for o in outer if o.construct_name})
    if exits:
        info.early_exit = True
        reasons += exits
    calls = _calls(loop.body)
    for name, line in calls:
        if name not in info.calls:
            info.calls.append(name)
    blocked = _blocked_call(loop.body, ctx)
    if blocked is not None:
        name, line, why = blocked
        reasons.append(ir.Diagnostic("call-in-loop", f"call to {name} (line {line}) inside the loop over {v}: {why}",
                                     line))

    # scalars
    writes = scalar_writes(loop.body, ctx.arrays, ctx.sites)
    if v in writes:
        reasons.append(ir.Diagnostic("loop-variable-modified", f"the loop variable {v} is assigned inside the loop "
                                     f"(line {writes[v]})", writes[v]))
    # scalars one iteration reads before assigning them (GOTOs inside the body followed)
    exposed = set(exposed_reads(loop.body, outs=ctx.outs)) - ctx.arrays - {v}
    variant = set(writes) - {v} - inner_vars
    handled: set[str] = set()

    # induction variables: ix = ix + incx, once per iteration
    inductions = find_inductions(loop, writes, variant | inner_vars | {v}, ctx)
    for ind in inductions:
        ind.live_after = live_after(loop, ind.var, ctx)
        handled.add(ind.var)
    info.inductions = inductions
    if inductions:
        names = ", ".join(f"{ind.var} (+{expr_str(ind.step)}, line {ind.line})" for ind in inductions)
        reasons.append(ir.Diagnostic("induction-variable", f"induction variable{'s' if len(inductions) > 1 else ''} "
                                     f"{names} in the loop over {v}: parallel once computed from {v}",
                                     inductions[0].line))
    subst_of = _induction_substitution(loop, inductions, ctx)

    # min/max idioms and loc-reductions
    for s in ir.walk(loop.body):
        mm = minmax_idiom(s)
        if mm is None:
            continue
        m, op, others = mm
        uses = _other_uses(loop.body, m, s)
        if uses:
            continue
        if others:
            extra = [x.target.name for x in others if isinstance(x, ir.Assign) and isinstance(x.target, ir.Name)]
            if len(extra) == len(others):
                reasons.append(ir.Diagnostic("loc-reduction", f"{op}loc-style reduction on {m} with "
                                             f"{', '.join(extra)} (line {s.line}): needs a MaxLoc/MinLoc reducer",
                                             s.line))
                handled.add(m)
                handled.update(extra)
            continue
        info.reductions.append(ir.Reduction(m, op, s.line))
        handled.add(m)

    for name in sorted(variant - handled, key=lambda n: writes[n]):
        if name in inner_vars:
            continue
        stmts = [s for s in ir.walk(loop.body) if _touches(s, name)]
        ops = set()
        ok = True
        for s in stmts:
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
                op = reduction_op(s.target, s.value)
                if op is None:
                    ok = False
                    break
                ops.add(op)
            elif isinstance(s, (ir.If, ir.Where, ir.SelectCase)) and not _mentions_direct(s, name):
                continue
            else:
                ok = False
                break
        if name in exposed and ok and len(ops) == 1:
            info.reductions.append(ir.Reduction(name, ops.pop(), writes[name]))
            continue
        if name not in exposed:
            if live_after(loop, name, ctx):
                reasons.append(ir.Diagnostic("last-value", f"{name} is assigned in the loop over {v} (line {writes[name]}) "
                                             f"and its last value is used after the loop ({_use_line(loop, name, ctx)})",
                                             writes[name]))
            else:
                info.private.append(name)
            continue
        reasons.append(ir.Diagnostic("scalar-dependence", f"loop-carried dependence on {name} across iterations of {v} "
                                     f"({name} is read before it is assigned, line {writes[name]})", writes[name]))
    for iv in sorted(inner_vars):
        if iv not in info.private:
            info.private.append(iv)
    for lv in [v] + sorted(inner_vars):
        if live_after(loop, lv, ctx):
            use = ctx.flow.use_after(loop, lv)
            reasons.append(ir.Diagnostic("last-value", f"the value of the loop variable {lv} after the loop over {v} "
                                         f"is used ({_use_line(loop, lv, ctx)})", use.line if use else loop.line))

    # arrays
    entry = _entry_facts(kernel, loop, ctx)
    accesses = array_accesses(loop.body, ctx.arrays, ctx.sites, _call_facts(loop, entry, ctx))
    by_name: dict[str, list[Access]] = {}
    for a in accesses:
        by_name.setdefault(a.name, []).append(a)
    indirect = []
    for a in accesses:
        if a.subs is not None and any(isinstance(x, ir.ArrayRef) or (isinstance(x, ir.FuncCall) and not x.intrinsic)
                                      for sub in a.subs for x in ir.walk_expr(sub)):
            if a.name not in indirect:
                indirect.append(a.name)
    info.indirect = indirect
    scope = LoopScope(loop, {s.var: s for s in inner_loops if isinstance(s, ir.Do)},
                      variant - {i.var for i in inductions}, ctx.env, entry,
                      _enclosing_inner(loop), subst_of)
    conditional: list = []  # (condition, write, other access)
    for name, accs in by_name.items():
        ws = [a for a in accs if a.write]
        if not ws:
            continue
        # written through an index array, or through an index computed in the iteration
        through_array = any(a.subs is not None and any(isinstance(x, ir.ArrayRef) for sub in a.subs
                                                       for x in ir.walk_expr(sub)) for a in ws)
        sub_names = {x.name for a in ws if a.subs is not None for sub in a.subs for x in ir.walk_expr(sub)
                     if isinstance(x, ir.Name)}
        computed = bool(sub_names & variant) and (sub_names & variant) <= set(info.private)
        if through_array or (computed and _is_update(accs)):
            if _is_update(accs):
                info.scattered.append(name)
                reasons.append(ir.Diagnostic("scattered-update", f"{name}{_subscript_text(ws[0].subs)} is updated through "
                                             f"an index array in the loop over {v} (line {ws[0].line}): iterations may "
                                             "hit the same element (atomics make it parallel)", ws[0].line))
            else:
                reasons.append(ir.Diagnostic("indirect-write", f"{name}{_subscript_text(ws[0].subs)} is written through an "
                                             f"index array in the loop over {v} (line {ws[0].line})", ws[0].line))
            continue
        # accumulation into an element invariant in the loop
        red = _array_reduction(accs, v, inner_vars, variant, ctx)
        if red is not None:
            info.reductions.append(red)
            continue
        carried = None
        guarded = []
        for w in ws:
            for a in accs:
                t = pair_test(w, a, scope)
                if t.carried and t.cond is None:
                    carried = (w, a, t.exact)
                    break
                if t.carried:
                    guarded.append((t.cond, w, a))
            if carried:
                break
        if carried:
            w, a, exact = carried
            if a is w:
                msg = (f"loop-carried dependence on {name}{_subscript_text(w.subs)} across iterations of {v} "
                       f"(every iteration writes {name}{_subscript_text(w.subs)}, line {w.line})")
            else:
                msg = (f"loop-carried dependence on {name} across iterations of {v} ({name}{_subscript_text(w.subs)} "
                       f"written, line {w.line}; {name}{_subscript_text(a.subs)} {'written' if a.write else 'read'}, "
                       f"line {a.line})")
            reasons.append(ir.Diagnostic("loop-carried-dependence" if exact else "possible-dependence",
                                         msg if exact else msg + "; the subscripts could not be analysed exactly",
                                         w.line))
        else:
            conditional += guarded
    if conditional and {r.code for r in reasons} <= _FIXABLE_BESIDES_CONDITION:
        _set_condition(info, conditional, kernel, loop, reasons)
    info.reasons = reasons
    info.parallel = not reasons
    return info


def find_inductions(loop: ir.Do, writes: dict[str, int], variant: set[str], ctx: Context) -> list[ir.Induction]:
    """Scalars updated exactly once per iteration by a direct ``t = t + e`` / ``t = t - e``
    statement of the loop body, ``e`` invariant in the loop."""
    out = []
    for name in sorted(writes, key=lambda n: writes[n]):
        if name == loop.var or name in ctx.arrays:
            continue
        stmts = [s for s in ir.walk(loop.body) if _writes_scalar(s, name)]
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


def _writes_scalar(s: ir.Stmt, name: str) -> bool:
    if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
        return True
    if isinstance(s, ir.Do) and s.var == name:
        return True
    if isinstance(s, ir.CallStmt) and any(isinstance(a, ir.Name) and a.name == name for a in s.args):
        return True
    return False


def _induction_substitution(loop: ir.Do, inductions: list[ir.Induction], ctx: Context):
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
    upd = {ind.var: order.get(id(next(s for s in loop.body if _writes_scalar(s, ind.var))), 0) for ind in inductions}

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


def _touches(s: ir.Stmt, name: str) -> bool:
    if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
        return True
    return any(_mentions(e, name) for e in stmt_exprs(s))


def _mentions_direct(s: ir.Stmt, name: str) -> bool:
    return any(_mentions(e, name) for e in stmt_exprs(s))


def _other_uses(body: list[ir.Stmt], name: str, idiom: ir.Stmt) -> bool:
    inside = {id(x) for x in ir.walk([idiom])}
    for s in ir.walk(body):
        if id(s) in inside:
            continue
        if _touches(s, name):
            return True
    return False


def _is_update(accs: list[Access]) -> bool:
    """``h(idx(i)) = h(idx(i)) op e``: every access of h is in such a statement."""
    stmts = {id(a.stmt): a.stmt for a in accs}
    for s in stmts.values():
        if not isinstance(s, ir.Assign) or not isinstance(s.target, ir.ArrayRef):
            return False
        if reduction_op(s.target, s.value) is None:
            return False
    return True


def _array_reduction(accs: list[Access], v: str, inner: set[str], variant: set[str], ctx: Context):
    ws = [a for a in accs if a.write]
    first = ws[0]
    if first.subs is None:
        return None
    for sub in first.subs:
        if isinstance(sub, ir.Slice):
            return None
        nm = {x.name for x in ir.walk_expr(sub) if isinstance(x, (ir.Name, ir.ArrayRef))}
        if v in nm or nm & inner or nm & variant or any(isinstance(x, ir.ArrayRef) for x in ir.walk_expr(sub)):
            return None
    ops = set()
    for a in accs:
        if a.subs is None or len(a.subs) != len(first.subs) or not all(_same(x, y) for x, y in zip(a.subs, first.subs)):
            return None
        s = a.stmt
        if not isinstance(s, ir.Assign) or not isinstance(s.target, ir.ArrayRef) or not _same(s.target, first.ref):
            return None
        op = reduction_op(s.target, s.value)
        if op is None:
            return None
        ops.add(op)
    if len(ops) != 1:
        return None
    return ir.Reduction(first.name, ops.pop(), first.line, target=first.ref)


# --------------------------------------------------------------------------- whole kernel


def _band(loop: ir.Do) -> int:
    if not loop.info.parallel:
        return 0
    body = [s for s in loop.body if not (isinstance(s, ir.Continue) and True)]
    if len(body) == 1 and isinstance(body[0], ir.Do):
        inner = body[0]
        bound_names = set()
        for e in (inner.start, inner.end, inner.step):
            if e is not None:
                bound_names |= {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}
        outer_scalars = {r.var for r in loop.info.reductions if r.target is None}
        inner_ok = inner.info.parallel and all(r.target is None and r.var in outer_scalars for r in inner.info.reductions) \
            and not inner.info.scattered
        if inner_ok and loop.var not in bound_names and inner.info.tightly_nested_parallel > 0:
            return 1 + inner.info.tightly_nested_parallel
    return 1


def _blocked_call(body: list[ir.Stmt], ctx: Context) -> Optional[tuple[str, int, str]]:
    """The first call in ``body`` whose effects are not known to be confined to its
    arguments: (name, line, why), naming the callee, its file and line and what it does."""
    for s in ir.walk(body):
        sites = [(s.name, len(s.args))] if isinstance(s, ir.CallStmt) else []
        for e in stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    sites.append((x.name, len(x.args)))
        for name, nargs in sites:
            if ctx.sites is None:
                return name, s.line, "its side effects are not analysed"
            eff = ctx.sites.effects(name)
            if not eff.translatable:
                return name, s.line, eff.why_not()
            if nargs > len(eff.dummies):
                return name, s.line, f"{name} ({eff.where}) has {len(eff.dummies)} arguments, it is called with {nargs}"
    return None


def _call_facts(loop: ir.Do, entry: Facts, ctx: Context):
    """Facts at each statement of the loop: those where the loop starts and the ranges of
    the loop's and the inner loops' variables around it (bound the spans of calls)."""
    if ctx.sites is None:
        return None
    enclosing = _enclosing_inner(loop)
    memo: dict[int, Facts] = {}

    def at(s: ir.Stmt) -> Facts:
        key = id(s)
        if key not in memo:
            extra = loop_var_facts(loop, ctx.env)
            for d in enclosing.get(key, []):
                extra += loop_var_facts(d, ctx.env)
            memo[key] = entry.plus(extra)
        return memo[key]

    return at


def analyse_loops(k: ir.Kernel, calls=None) -> None:
    """Fill ``info`` of every DO in the kernel (inner loops first). ``calls``
    (``effects.Calls``): the effects of the routines it calls; a call to a routine whose
    effects are confined to its arguments is then analysed like the accesses it makes
    (without it, or for any other callee, a call keeps its loop serial)."""
    ctx = kernel_context(k, calls)

    def visit(body, outer):
        for s in body:
            if isinstance(s, ir.Do):
                visit(s.body, outer + [s])
                s.info = loop_info(s, k, ctx, outer)
                s.info.tightly_nested_parallel = _band(s)
            elif isinstance(s, ir.DoWhile):
                visit(s.body, outer)
            else:
                visit(ir.children(s), outer)

    visit(k.body, [])
