"""Numeric interval analysis: the largest subscript a kernel can touch in each dimension of
an array, for one input case (``x(*)`` assumed-size dims, ``auto`` in a spec).

Given the values of the scalar arguments and the value ranges of the integer index
arrays, each loop variable gets the interval it runs over, each integer local the union of
what is assigned to it (an index stepped by ``ix = ix + incx`` inside loops grows by the
trip counts), and each subscript the interval of its expression. Conditions are not
evaluated, so the result covers every branch: a safe over-estimate.
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
            args = [self.expr(a, loopvars) for a in e.args]
            if any(a is None for a in args) or not args:
                return None
            if e.name in ("max", "max0"):
                return (max(a[0] for a in args), max(a[1] for a in args))
            if e.name in ("min", "min0"):
                return (min(a[0] for a in args), min(a[1] for a in args))
            if e.name in ("abs", "iabs") and len(args) == 1:
                lo, hi = args[0]
                if lo >= 0:
                    return (lo, hi)
                if hi <= 0:
                    return (-hi, -lo)
                return (0, max(-lo, hi))
            if e.name == "mod" and len(args) == 2:
                m = max(abs(args[1][0]), abs(args[1][1]))
                lo = 0 if args[0][0] >= 0 else -(m - 1)
                hi = 0 if args[0][1] <= 0 else m - 1
                return (lo, max(lo, hi))
            return None
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
        best: list[Optional[int]] = [0] * rank
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

        def rec(body: list[ir.Stmt], lv: dict[str, Interval]) -> None:
            from .analysis import all_exprs_of_stmt
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
        return [None if unbounded[k] else best[k] for k in range(rank)]


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


# --------------------------------------------------------------------------- flow-sensitive


class GiveUp(Exception):
    """The walk cannot follow the routine (a backward or computed jump)."""


_UNKNOWN = None


def _hull(a: Interval, b: Interval) -> Interval:
    return _union(a, b)


def _join_value(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple):
        return _union(a, b)
    return a if a == b and not isinstance(a, tuple) else None


def _join(a: Optional[dict], b: Optional[dict]) -> Optional[dict]:
    """Join of two environments; None is a path that does not get here."""
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    return {k: _join_value(a.get(k), b.get(k)) for k in set(a) | set(b)}


class FlowRanges:
    """The subscripts one input case can touch, following the routine's control flow.

    Scalars hold an interval (integers), a value (characters, logicals) or None (unknown).
    An IF whose condition the values decide takes one branch (``IF (INCX .LT. 0)
    IX = (-N+1)*INCX + 1`` for a negative stride only), ``IF (c) RETURN`` ends the path, a
    forward GOTO carries its values to its label; undecided conditions take every branch.
    DO loops run to a fixed point (a scalar stepped in the loop grows by the trip count).
    ``touched[array][dim]`` is the (min, max) subscript, None when unbounded; ``errors``
    the operations the original would fail on (a zero DO step, an integer division by
    zero). Raises :class:`GiveUp` when the control flow cannot be followed."""

    ROUNDS = 6

    def __init__(self, kernel: ir.Kernel, values: dict, array_values: Optional[dict] = None):
        self.kernel = kernel
        self.array_values = array_values or {}
        self.arrays = {a.name: a.rank for a in kernel.args if a.rank}
        self.arrays.update({n: len(v.dims) for n, v in kernel.locals.items() if v.dims})
        self.params = {n: v.parameter for n, v in kernel.locals.items() if v.parameter is not None}
        self.touched: dict[str, list] = {}
        self.errors: list[str] = []
        self.pending: dict[int, dict] = {}
        self.seen_labels: set[int] = set()
        self.loops: list[dict] = []
        self.entry: dict[int, Optional[dict]] = {}  # id(DO) -> the values where it starts (joined)
        env: dict = {}
        for a in kernel.args:
            if not a.rank:
                env[a.name] = self._value(values.get(a.name))
        for n, v in kernel.locals.items():
            if not v.dims and v.parameter is None and n not in env:
                env[n] = None
        self.start = env

    @staticmethod
    def _value(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            return (v, v)
        if isinstance(v, tuple) and len(v) == 2:
            return (int(v[0]), int(v[1]))
        return None

    def run(self) -> "FlowRanges":
        self.block(self.kernel.body, dict(self.start))
        return self

    # values ---------------------------------------------------------------------

    def ival(self, e: ir.Expr, env: dict, line: int = 0) -> Interval:
        if isinstance(e, ir.Literal):
            return (e.value, e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else None
        if isinstance(e, ir.Name):
            if e.name in self.params and isinstance(self.params[e.name], int) \
                    and not isinstance(self.params[e.name], bool):
                return (self.params[e.name], self.params[e.name])
            v = env.get(e.name)
            return v if isinstance(v, tuple) else None
        if isinstance(e, ir.UnaryOp) and e.op in "+-":
            v = self.ival(e.operand, env, line)
            return _neg(v) if e.op == "-" else v
        if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*", "/"):
            a, b = self.ival(e.left, env, line), self.ival(e.right, env, line)
            integer = e.ftype is None or e.ftype.base == "integer"
            if e.op == "/" and integer and b is not None and b[0] <= 0 <= b[1]:
                self.errors.append(f"line {line}: integer division by {_text(e.right)} = 0")
                return None
            if e.op == "+":
                return _add(a, b)
            if e.op == "-":
                return _add(a, _neg(b))
            if e.op == "*":
                return _mul(a, b)
            return _div(a, b) if integer else None
        if isinstance(e, ir.ArrayRef):
            return self.array_values.get(e.name)
        if isinstance(e, ir.FuncCall) and e.intrinsic:
            args = [self.ival(a, env, line) for a in e.args]
            if e.name in ("mod", "modulo") and len(args) == 2 and args[1] is not None and args[1][0] <= 0 <= args[1][1] \
                    and (e.args[1].ftype is None or e.args[1].ftype.base == "integer"):
                self.errors.append(f"line {line}: mod(.., {_text(e.args[1])}) with {_text(e.args[1])} = 0")
                return None
            if any(a is None for a in args) or not args:
                return None
            if e.name in ("max", "max0"):
                return (max(a[0] for a in args), max(a[1] for a in args))
            if e.name in ("min", "min0"):
                return (min(a[0] for a in args), min(a[1] for a in args))
            if e.name in ("abs", "iabs") and len(args) == 1:
                lo, hi = args[0]
                return (lo, hi) if lo >= 0 else (-hi, -lo) if hi <= 0 else (0, max(-lo, hi))
            if e.name in ("mod", "modulo") and len(args) == 2:
                m = max(abs(args[1][0]), abs(args[1][1]))
                lo = 0 if args[0][0] >= 0 else -(m - 1)
                hi = 0 if args[0][1] <= 0 else m - 1
                return (lo, max(lo, hi))
        return None

    def bval(self, e: ir.Expr, env: dict):
        """True, False or None (undecided)."""
        if isinstance(e, ir.Literal) and isinstance(e.value, bool):
            return e.value
        if isinstance(e, ir.Name):
            v = env.get(e.name)
            return v if isinstance(v, bool) else None
        if isinstance(e, ir.UnaryOp) and e.op == "not":
            v = self.bval(e.operand, env)
            return None if v is None else not v
        if isinstance(e, ir.BinOp) and e.op in ("and", "or"):
            a, b = self.bval(e.left, env), self.bval(e.right, env)
            if e.op == "and":
                return False if a is False or b is False else (True if a and b else None)
            return True if a is True or b is True else (False if a is False and b is False else None)
        if isinstance(e, ir.BinOp) and e.op in ("==", "/=", "<", "<=", ">", ">="):
            sa, sb = self.sval(e.left, env), self.sval(e.right, env)
            if sa is not None and sb is not None and e.op in ("==", "/="):
                return (sa.rstrip() == sb.rstrip()) == (e.op == "==")
            a, b = self.ival(e.left, env), self.ival(e.right, env)
            if a is None or b is None:
                return None
            lo, hi = a[0] - b[1], a[1] - b[0]  # range of a - b
            table = {"==": (lo == hi == 0, lo > 0 or hi < 0), "/=": (lo > 0 or hi < 0, lo == hi == 0),
                     "<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0), ">=": (lo >= 0, hi < 0)}
            yes, no = table[e.op]
            return True if yes else (False if no else None)
        return None

    def sval(self, e: ir.Expr, env: dict) -> Optional[str]:
        if isinstance(e, ir.Literal) and isinstance(e.value, str):
            return e.value
        if isinstance(e, ir.Name) and isinstance(env.get(e.name), str):
            return env[e.name]
        return None

    # accesses -------------------------------------------------------------------

    def visit(self, e: ir.Expr, env: dict, line: int) -> None:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.ArrayRef) and x.name in self.arrays:
                dims = self.touched.setdefault(x.name, [(1, 0)] * self.arrays[x.name])
                for k, sub in enumerate(x.subscripts[:len(dims)]):
                    if isinstance(sub, ir.Slice):  # an omitted end is the declared bound
                        ivs = [self.ival(b, env, line) for b in (sub.lower, sub.upper) if b is not None]
                        if not ivs:
                            continue
                        iv = None if None in ivs else (ivs[0] if len(ivs) == 1 else _hull(ivs[0], ivs[1]))
                    else:
                        iv = self.ival(sub, env, line)
                    cur = dims[k]
                    if cur is None or iv is None:
                        dims[k] = None
                    else:
                        dims[k] = iv if cur[0] > cur[1] else _hull(cur, iv)
            elif isinstance(x, ir.FuncCall) and not x.intrinsic:
                for a in x.args:
                    if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name in self.arrays:
                        self.touched[a.name] = [None] * self.arrays[a.name]  # the callee may touch any element

    # statements -----------------------------------------------------------------

    def block(self, stmts: list[ir.Stmt], env: Optional[dict]) -> Optional[dict]:
        for s in stmts:
            if s.label is not None:
                if s.label in self.pending:
                    env = _join(env, self.pending.pop(s.label))
                self.seen_labels.add(s.label)
            if env is None:
                continue
            env = self.stmt(s, env)
        return env

    def stmt(self, s: ir.Stmt, env: dict) -> Optional[dict]:
        line = s.line
        if not isinstance(s, (ir.Do, ir.If)):
            for e in ir.stmt_exprs(s):
                self.visit(e, env, line)
        if isinstance(s, ir.Assign):
            t = s.target
            if isinstance(t, ir.Name) and t.name in env:
                env = dict(env)
                ft = t.ftype
                if ft is not None and ft.base == "integer":
                    env[t.name] = self.ival(s.value, env, line)
                elif ft is not None and ft.base == "logical":
                    env[t.name] = self.bval(s.value, env)
                elif ft is not None and ft.base == "character":
                    env[t.name] = self.sval(s.value, env)
                else:
                    env[t.name] = None
            else:
                self.ival(s.value, env, line)  # integer divisions in the value
            return env
        if isinstance(s, ir.If):
            outs = []
            cur = env
            decided = False
            for cond, body in s.branches:
                self.visit(cond, cur, line)
                t = self.bval(cond, cur)
                if t is not False:
                    outs.append(self.block(body, dict(cur)))
                if t is True:
                    decided = True
                    break
            if not decided:
                outs.append(self.block(s.else_body, dict(cur)))
            out = None
            for o in outs:
                out = _join(out, o)
            return out
        if isinstance(s, ir.Do):
            return self.do(s, env)
        if isinstance(s, ir.DoWhile):
            return self.loop(s.body, env, {}, None, s.construct_name, cond=s.cond, line=line)
        if isinstance(s, ir.SelectCase):
            out = None
            for c in s.cases:
                out = _join(out, self.block(c.body, dict(env)))
            if not any(not c.values for c in s.cases):
                out = _join(out, env)
            return out
        if isinstance(s, ir.Where):
            return _join(_join(self.block(s.body, dict(env)), self.block(s.elsewhere, dict(env))), env)
        if isinstance(s, ir.Goto):
            if s.target in self.seen_labels:
                raise GiveUp(f"backward GO TO {s.target} at line {line}")
            self.pending[s.target] = _join(self.pending.get(s.target), env)
            return None
        if isinstance(s, (ir.ComputedGoto, ir.ArithmeticIf)):
            raise GiveUp(f"computed or arithmetic jump at line {line}")
        if isinstance(s, (ir.Return, ir.Stop)):
            return None
        if isinstance(s, (ir.Cycle, ir.Exit)):
            ctx = self._loop_ctx(s.construct_name)
            if ctx is None:
                raise GiveUp(f"{type(s).__name__.upper()} outside a loop at line {line}")
            key = "cycle" if isinstance(s, ir.Cycle) else "exit"
            ctx[key] = _join(ctx[key], env)
            return None
        if isinstance(s, ir.CallStmt):
            env = dict(env)
            for a in s.args:
                if isinstance(a, ir.Name) and a.name in env:
                    env[a.name] = None  # the callee may assign it
                if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name in self.arrays:
                    self.touched[a.name] = [None] * self.arrays[a.name]
            return env
        return env

    def _loop_ctx(self, name: Optional[str]) -> Optional[dict]:
        for ctx in reversed(self.loops):
            if name is None or ctx["name"] == name:
                return ctx
        return None

    def do(self, s: ir.Do, env: dict) -> Optional[dict]:
        line = s.line
        self.entry[id(s)] = _join(self.entry.get(id(s)), env)
        for e in (s.start, s.end, s.step):
            if e is not None:
                self.visit(e, env, line)
        lo, hi = self.ival(s.start, env, line), self.ival(s.end, env, line)
        st = self.ival(s.step, env, line) if s.step is not None else (1, 1)
        if st is not None and st[0] <= 0 <= st[1]:
            self.errors.append(f"line {line}: DO step {_text(s.step)} = 0")
            return None
        var: Interval = None
        trips: Optional[int] = None
        maybe_empty = True
        if lo is not None and hi is not None and st is not None:
            if st[0] > 0:
                if lo[0] > hi[1]:
                    out = dict(env)
                    out[s.var] = lo
                    return out
                trips = (hi[1] - lo[0]) // st[0] + 1
                last = hi[1] if lo[0] != lo[1] or st[0] != st[1] else lo[0] + (trips - 1) * st[0]
                var = (lo[0], max(lo[1], last))
                maybe_empty = lo[1] > hi[0]
            else:
                if lo[1] < hi[0]:
                    out = dict(env)
                    out[s.var] = lo
                    return out
                trips = (lo[1] - hi[0]) // (-st[1]) + 1
                last = hi[0] if lo[0] != lo[1] or st[0] != st[1] else lo[1] + (trips - 1) * st[1]
                var = (min(lo[0], last), lo[1])
                maybe_empty = lo[0] < hi[1]
        fixed = {s.var: var}
        out = self.loop(s.body, env, fixed, trips, s.construct_name, line=line, stride=st)
        after = _join(out, env if maybe_empty else None)
        if after is not None:
            after = dict(after)
            after[s.var] = None if var is None or st is None else \
                _hull(lo, (var[0] + min(0, st[0]), var[1] + max(0, st[1])))
            # a scalar stepped once in every iteration leaves the loop at v0 + trips*step
            span = _trip_range(lo, hi, st)
            for v, (sign, e) in _once_per_iteration(s.body, set(self.arrays)).items():
                v0, inc = env.get(v), self.ival(e, env, line)
                if after is not None and isinstance(v0, tuple) and inc is not None and span is not None:
                    inc = inc if sign == "+" else _neg(inc)
                    after[v] = _add(v0, _mul(span, inc))
        return after

    def loop(self, body, env: dict, fixed: dict, trips: Optional[int], name, cond=None, line=0, stride=None):
        """Fixed point of a loop body; scalars stepped by ``v = v + e`` grow by the number
        of times the update can run (None when that is unbounded)."""
        written = _scalars_assigned(body, set(self.arrays))
        start = dict(env)
        start.update(fixed)
        stepped = _steps(body, written)
        for v, steps in stepped.items():
            count = self._count(body, [st for st, _ in steps], trips, start)
            cur = start.get(v)
            growth = []  # per update: the interval it adds
            for _, (sign, e) in steps:
                g = self.ival(e, start, line)
                growth.append(None if g is None else (g if sign == "+" else _neg(g)))
            if not isinstance(cur, tuple) or count is None or any(g is None for g in growth):
                start[v] = None
                continue
            glo = sum(min(0, g[0]) for g in growth)
            ghi = sum(max(0, g[1]) for g in growth)
            done = max(0, count - 1)  # updates before the last pass through the loop's head
            start[v] = (cur[0] + glo * done, cur[1] + ghi * done)
        grown = set(stepped)
        cur = start
        out = None
        for _ in range(self.ROUNDS + 1):
            ctx = {"name": name, "cycle": None, "exit": None}
            self.loops.append(ctx)
            try:
                if cond is not None:
                    self.visit(cond, cur, line)
                end = self.block(body, dict(cur))
            finally:
                self.loops.pop()
            back = _join(end, ctx["cycle"])
            out = _join(back, ctx["exit"])
            nxt = _join(cur, back)
            if nxt is None:
                break
            nxt.update(fixed)
            for v in grown:
                nxt[v] = start[v]
            if nxt == cur:
                break
            if _ == self.ROUNDS - 1:  # no fixed point yet: what still changes is unknown
                nxt = {k: (v if cur.get(k) == v else None) for k, v in nxt.items()}
            cur = nxt
        return _join(out, cur)

    def _count(self, body, steps, trips, env) -> Optional[int]:
        """How many times the updates of one stepped scalar can run: the loop's trips times
        the trips of the loops around each update inside the body (the largest)."""
        if trips is None:
            return None
        best = 0
        for stmt in steps:
            inner = _loops_around(body, stmt)
            if inner is None:
                return None
            n = trips
            lv = dict(env)
            for d in inner:
                lo, hi = self.ival(d.start, lv), self.ival(d.end, lv)
                st = self.ival(d.step, lv) if d.step is not None else (1, 1)
                if lo is None or hi is None or st is None or st[0] <= 0 <= st[1]:
                    return None
                t = (hi[1] - lo[0]) // st[0] + 1 if st[0] > 0 else (lo[1] - hi[0]) // (-st[1]) + 1
                n *= max(0, t)
                lv[d.var] = (min(lo[0], hi[0]), max(lo[1], hi[1]))
            best = max(best, n)
        return best


def _trip_range(lo: Interval, hi: Interval, st: Interval) -> Interval:
    """(fewest, most) iterations of a DO whose bounds and step lie in these intervals."""
    if lo is None or hi is None or st is None or st[0] <= 0 <= st[1]:
        return None
    if st[0] > 0:
        return (max(0, (hi[0] - lo[1]) // st[1] + 1), max(0, (hi[1] - lo[0]) // st[0] + 1))
    return (max(0, (lo[0] - hi[1]) // (-st[0]) + 1), max(0, (lo[1] - hi[0]) // (-st[1]) + 1))


def _once_per_iteration(body: list[ir.Stmt], arrays: set[str]) -> dict:
    """Scalars updated by ``v = v +- e`` exactly once per iteration: the update is a
    statement of the body itself, the only assignment to ``v``, ``e`` is unchanged in the
    body, and nothing in the body jumps or leaves the iteration early."""
    if any(isinstance(x, (ir.Cycle, ir.Exit, ir.Goto, ir.ComputedGoto, ir.ArithmeticIf, ir.Return, ir.Stop))
           for x in ir.walk(body)):
        return {}
    written = _scalars_assigned(body, arrays)
    out = {}
    for v, steps in _steps(body, written).items():
        if len(steps) == 1 and any(steps[0][0] is x for x in body):
            out[v] = steps[0][1]
    return out


def _text(e: Optional[ir.Expr]) -> str:
    from ..fortran.render import expr_str
    return expr_str(e) if e is not None else "1"


def _scalars_assigned(body: list[ir.Stmt], arrays: set[str]) -> set[str]:
    out = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name not in arrays:
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.CallStmt):
            out |= {a.name for a in s.args if isinstance(a, ir.Name) and a.name not in arrays}
    return out


def _steps(body: list[ir.Stmt], written: set[str]) -> dict:
    """Scalars whose every assignment in ``body`` is ``v = v + e`` / ``v = v - e`` with
    ``e`` unchanged in the body: name -> [(statement, (sign, e))]."""
    found: dict = {}
    bad: set[str] = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Do):
            bad.add(s.var)
        elif isinstance(s, ir.CallStmt):
            bad |= {a.name for a in s.args if isinstance(a, ir.Name)}
        if not (isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)):
            continue
        name = s.target.name
        inc = _increment(name, s.value)
        if inc is None or _names(inc[1]) & written:
            bad.add(name)
            continue
        found.setdefault(name, []).append((s, inc))
    return {k: [(s, inc) for s, inc in v] for k, v in found.items() if k not in bad}


def _loops_around(body: list[ir.Stmt], target: ir.Stmt) -> Optional[list[ir.Do]]:
    """The DO loops inside ``body`` around ``target`` (outermost first); None for a DO WHILE."""
    def rec(stmts, stack):
        for s in stmts:
            if s is target:
                return stack
            if isinstance(s, ir.Do):
                r = rec(s.body, stack + [s])
            elif isinstance(s, ir.DoWhile):
                r = rec(s.body, stack + [None])
            else:
                r = rec(ir.children(s), stack)
            if r is not None:
                return r
        return None
    r = rec(body, [])
    if r is None or any(d is None for d in r):
        return None
    return r
