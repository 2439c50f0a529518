"""Flow-sensitive interval analysis for one input case: the subscripts and values the case
reaches, following the routine's control flow (conditions whose value the case decides
are evaluated), on the intervals of :mod:`.extents`. ``GiveUp`` when the walk cannot
follow the routine (a backward or computed jump)."""
from __future__ import annotations

from typing import Optional

from ..fortran import ir
from .extents import Interval, intrinsic_interval, _add, _div, _increment, _mul, _names, _neg, _union

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
            return intrinsic_interval(e.name, args)
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
