"""Numeric interval analysis: the largest subscript a kernel can touch in each dimension of
an array, for one input case (``x(*)`` assumed-size dims, ``auto`` in a spec).

Given the values of the scalar arguments and the value ranges of the integer index
arrays, each loop variable gets the interval it runs over, each integer local the union of
what is assigned to it (an index stepped by ``ix = ix + incx`` inside loops grows by the
trip counts), and each subscript the interval of its expression. Conditions are not
evaluated, so the result covers every branch: a safe over-estimate. The flow-sensitive
walk for one case (which versions of a loop a case selects) is :mod:`.flowranges`.
"""
from __future__ import annotations

from typing import Optional

from ..fortran import ir

Interval = Optional[tuple[int, int]]  # None: unbounded / unknown


def _add(a: Interval, b: Interval) -> Interval:
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def _neg(a: Interval) -> Interval:
    return None if a is None else (-a[1], -a[0])


def _mul(a: Interval, b: Interval) -> Interval:
    if a is None or b is None:
        return None
    c = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return (min(c), max(c))


def _div(a: Interval, b: Interval) -> Interval:
    if a is None or b is None or b[0] <= 0 <= b[1]:
        return None
    c = [int(x / y) for x in a for y in b]
    return (min(c) - 1, max(c) + 1)


def _union(a: Interval, b: Interval) -> Interval:
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), max(a[1], b[1]))


def intrinsic_interval(name: str, args: list[Interval]) -> Interval:
    """The interval of MAX, MIN, ABS or MOD/MODULO of arguments in these intervals (None:
    unknown, or another function)."""
    if not args or any(a is None for a in args):
        return None
    if name in ("max", "max0"):
        return (max(a[0] for a in args), max(a[1] for a in args))
    if name in ("min", "min0"):
        return (min(a[0] for a in args), min(a[1] for a in args))
    if name in ("abs", "iabs") and len(args) == 1:
        lo, hi = args[0]
        return (lo, hi) if lo >= 0 else (-hi, -lo) if hi <= 0 else (0, max(-lo, hi))
    if name in ("mod", "modulo") and len(args) == 2:
        m = max(abs(args[1][0]), abs(args[1][1]))
        lo = 0 if args[0][0] >= 0 else -(m - 1)
        hi = 0 if args[0][1] <= 0 else m - 1
        return (lo, max(lo, hi))
    return None


class Ranges:
    """Interval evaluation of integer expressions in one case."""

    def __init__(self, kernel: ir.Kernel, scalars: dict[str, int], array_values: dict[str, tuple[int, int]]):
        self.kernel = kernel
        self.scalars = scalars  # integer scalar arguments -> value
        self.array_values = array_values  # integer array arguments -> (min, max) of their values
        self.locals: dict[str, Interval] = {}
        # arrays passed to a routine (name -> (callee, line)): found by max_subscripts, whose
        # bound for them is then None (the callee may touch what no subscript here shows)
        self.passed_to: dict[str, tuple[str, int]] = {}
        self._sub_memo: dict[tuple[str, int], tuple[list, list]] = {}  # _subscript_bounds
        self._compute_locals()

    # expressions ------------------------------------------------------------------

    def expr(self, e: ir.Expr, loopvars: dict[str, Interval]) -> Interval:
        if isinstance(e, ir.Literal):
            if isinstance(e.value, bool) or not isinstance(e.value, int):
                return None
            return (e.value, e.value)
        if isinstance(e, ir.Name):
            if e.name in loopvars:
                return loopvars[e.name]
            if e.name in self.scalars:
                v = self.scalars[e.name]
                return (v, v) if isinstance(v, int) else None
            if e.name in self.locals:
                return self.locals[e.name]
            var = self.kernel.locals.get(e.name)
            if var is not None and var.parameter is not None and isinstance(var.parameter, int):
                return (var.parameter, var.parameter)
            return None
        if isinstance(e, ir.UnaryOp):
            if e.op == "-":
                return _neg(self.expr(e.operand, loopvars))
            if e.op == "+":
                return self.expr(e.operand, loopvars)
            return None
        if isinstance(e, ir.BinOp):
            a, b = self.expr(e.left, loopvars), self.expr(e.right, loopvars)
            if e.op == "+":
                return _add(a, b)
            if e.op == "-":
                return _add(a, _neg(b))
            if e.op == "*":
                return _mul(a, b)
            if e.op == "/":
                return _div(a, b)
            return None
        if isinstance(e, ir.ArrayRef):
            return self.array_values.get(e.name)
        if isinstance(e, ir.FuncCall):
            return intrinsic_interval(e.name, [self.expr(a, loopvars) for a in e.args])
        return None

    # loops -----------------------------------------------------------------------

    def loop_range(self, d: ir.Do, loopvars: dict[str, Interval]) -> tuple[Interval, int]:
        """(interval of the loop variable, max trip count); (None, 0) if unknown; an empty
        loop gives ((1, 0), 0)."""
        s, e = self.expr(d.start, loopvars), self.expr(d.end, loopvars)
        st = self.expr(d.step, loopvars) if d.step is not None else (1, 1)
        if s is None or e is None or st is None:
            return None, 0
        if st[0] > 0:
            if s[0] > e[1]:
                return (1, 0), 0
            return (s[0], max(s[0], e[1])), (e[1] - s[0]) // st[0] + 1
        if st[1] < 0:
            if s[1] < e[0]:
                return (1, 0), 0
            return (min(s[1], e[0]), s[1]), (s[1] - e[0]) // (-st[1]) + 1
        return None, 0

    def _compute_locals(self) -> None:
        """Union of the intervals assigned to each integer local; ``v = v + s`` inside
        loops grows ``v`` by s times the product of the enclosing trip counts."""
        ints = {n for n, v in self.kernel.locals.items() if v.ftype.base == "integer" and not v.dims}
        assigns: dict[str, list[tuple[ir.Expr, list[ir.Do]]]] = {}

        def rec(body, stack):
            for s in body:
                if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name in ints:
                    assigns.setdefault(s.target.name, []).append((s.value, list(stack)))
                if isinstance(s, ir.Do):
                    rec(s.body, stack + [s])
                else:
                    rec(ir.children(s), stack)

        rec(self.kernel.body, [])
        loopvar_names = {d.var for d in self.kernel.loops()}
        for name in assigns:
            if name not in loopvar_names:
                self.locals[name] = None
        for _ in range(4):  # a few rounds resolve locals defined from other locals
            changed = False
            for name, items in assigns.items():
                if name in loopvar_names:
                    continue
                plain = [(v, st) for v, st in items if name not in _names(v)]
                steps = [(v, st) for v, st in items if name in _names(v)]
                cur: Interval = None
                for k, (v, stack) in enumerate(plain):
                    lv = self._stack_vars(stack)
                    iv = self.expr(v, lv) if lv is not None else None
                    if iv is None:
                        cur = None
                        break
                    cur = iv if k == 0 else _union(cur, iv)
                if cur is not None and steps:
                    grow_lo, grow_hi = 0, 0
                    for v, stack in steps:
                        inc = _increment(name, v)
                        lv = self._stack_vars(stack)
                        if inc is None or lv is None:
                            cur = None
                            break
                        iv = self.expr(inc[1], lv)
                        trips = self._trips(stack)
                        if iv is None or trips is None:
                            cur = None
                            break
                        if inc[0] == "-":
                            iv = _neg(iv)
                        grow_lo += min(0, iv[0]) * trips
                        grow_hi += max(0, iv[1]) * trips
                    if cur is not None:
                        cur = (cur[0] + grow_lo, cur[1] + grow_hi)
                if cur != self.locals.get(name):
                    self.locals[name] = cur
                    changed = True
            if not changed:
                break

    def _stack_vars(self, stack: list[ir.Do]) -> Optional[dict[str, Interval]]:
        lv: dict[str, Interval] = {}
        for d in stack:
            r, _ = self.loop_range(d, lv)
            if r is None:
                return None
            lv[d.var] = r
        return lv

    def _trips(self, stack: list[ir.Do]) -> Optional[int]:
        lv: dict[str, Interval] = {}
        total = 1
        for d in stack:
            r, t = self.loop_range(d, lv)
            if r is None:
                return None
            lv[d.var] = r
            total *= max(t, 0)
        return total

    # accesses --------------------------------------------------------------------

    def max_subscripts(self, array: str, rank: int) -> list[Optional[int]]:
        """For each dimension of ``array``, the largest subscript any reference can take
        (None: unbounded; 0 when the array is never referenced in that dim). An array passed
        to a routine is unbounded in every dimension (whole) or its last (an element): what
        the callee touches is the front end's to say (``access_bounds``), see
        :attr:`passed_to`."""
        return self._subscript_bounds(array, rank)[1]

    def min_subscripts(self, array: str, rank: int) -> list[Optional[int]]:
        """For each dimension, the smallest subscript any reference can take (None:
        unbounded, or never referenced): where an allocatable module array the harness
        allocates must start."""
        return self._subscript_bounds(array, rank)[0]

    def _subscript_bounds(self, array: str, rank: int) -> tuple[list[Optional[int]], list[Optional[int]]]:
        key = (array, rank)
        if key in self._sub_memo:
            return self._sub_memo[key]
        best: list[Optional[int]] = [0] * rank
        least: list[Optional[int]] = [None] * rank
        unbounded = [False] * rank

        def passed(callee: str, args: list[ir.Expr], line: int) -> None:
            """An actual argument: the callee may touch elements the subscripts do not show
            (a whole array: any; an element: from it on, by sequence association)."""
            for a in args:
                if isinstance(a, ir.Name) and a.name == array:
                    unbounded[:] = [True] * rank
                elif isinstance(a, ir.ArrayRef) and a.name == array and rank:
                    unbounded[rank - 1] = True
                else:
                    continue
                self.passed_to.setdefault(array, (callee, line))

        def visit_expr(e: ir.Expr, lv: dict[str, Interval], line: int = 0) -> None:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    passed(x.name, x.args, line)
                if isinstance(x, ir.Name) and x.name == array and rank:
                    # the whole array in array syntax (wmu = w*mu): as large as whatever it is
                    # conformable with, which nothing here bounds
                    unbounded[:] = [True] * rank
                if isinstance(x, ir.ArrayRef) and x.name == array:
                    for k, sub in enumerate(x.subscripts[:rank]):
                        if isinstance(sub, ir.Slice):
                            iv = self.expr(sub.upper, lv) if sub.upper is not None else None
                        else:
                            iv = self.expr(sub, lv)
                        if iv is None:
                            unbounded[k] = True
                        else:
                            best[k] = max(best[k], iv[1])
                            least[k] = iv[0] if least[k] is None else min(least[k], iv[0])

        def rec(body: list[ir.Stmt], lv: dict[str, Interval]) -> None:
            from .ir_facts import all_exprs_of_stmt
            for s in body:
                if isinstance(s, ir.Do):
                    for e in (s.start, s.end, s.step):
                        if e is not None:
                            visit_expr(e, lv)
                    r, _ = self.loop_range(s, lv)
                    if r is not None and r[0] > r[1]:
                        continue  # never runs
                    inner = dict(lv)
                    inner[s.var] = r
                    rec(s.body, inner)
                    continue
                if isinstance(s, ir.CallStmt):
                    passed(s.name, s.args, s.line)
                for e in all_exprs_of_stmt(s):
                    visit_expr(e, lv, s.line)
                rec(ir.children(s), lv)

        rec(self.kernel.body, {})
        out = ([None if unbounded[k] else least[k] for k in range(rank)],
               [None if unbounded[k] else best[k] for k in range(rank)])
        self._sub_memo[key] = out
        return out


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}


def _increment(name: str, v: ir.Expr) -> Optional[tuple[str, ir.Expr]]:
    """``name + e`` / ``e + name`` / ``name - e`` -> ('+'|'-', e); None for anything else."""
    if isinstance(v, ir.BinOp) and v.op in "+-":
        if isinstance(v.left, ir.Name) and v.left.name == name and name not in _names(v.right):
            return v.op, v.right
        if v.op == "+" and isinstance(v.right, ir.Name) and v.right.name == name and name not in _names(v.left):
            return "+", v.left
    return None
