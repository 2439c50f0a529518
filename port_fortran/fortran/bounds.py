"""Access bounds (pure): for each dimension of an array argument, the smallest and largest
subscript a kernel can touch, as expressions of its arguments (None where it cannot be
bounded). Sound: the union over every reference and every value a local may hold (the
values that reach a loop, induction variables in closed form); with ``effects.Calls``
the elements its calls touch through sequence association too. ``argfacts`` records
them in ``Argument.access_bounds``; ``effects`` asks them for a callee's dummies."""
from __future__ import annotations

from typing import Optional

from . import affine, ir
from .accesses import direct_actuals
from .common_use import names_written
from .dataflow import FlowGraph, IterationValues
from .ir import stmt_exprs
from .rewrite import replace_names


def _refs_with_loops(body: list[ir.Stmt], name: str, loops=None, calls=None, caller=None):
    """(ref, enclosing DO loops outermost first, statement) for every reference to ``name``.
    With ``calls`` (``effects.Calls``) an actual argument of a call is what the callee
    touches of it (an element passed to an array dummy: the elements from it on, as
    ranges); a call touching nothing of it is no reference."""
    loops = loops or []
    for s in body:
        mapped: dict[int, Optional[ir.Expr]] = {}
        if calls is not None:
            for callee, args, q in direct_actuals(s):
                if args[q].name == name:
                    mapped[id(args[q])] = calls.actual_ref(caller, callee, args, q)
        for e in stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, (ir.ArrayRef, ir.Name)) and x.name == name:
                    if id(x) in mapped:
                        if mapped[id(x)] is not None:
                            yield mapped[id(x)], loops, s
                    else:
                        yield x, loops, s
        if isinstance(s, ir.Do):
            yield from _refs_with_loops(s.body, name, loops + [s], calls, caller)
        else:
            yield from _refs_with_loops(ir.children(s), name, loops, calls, caller)


def _writes(s: ir.Stmt, name: str) -> list[ir.Stmt]:
    out = []
    for x in ir.walk([s]):
        if isinstance(x, ir.Assign) and isinstance(x.target, ir.Name) and x.target.name == name:
            out.append(x)
        elif isinstance(x, ir.Do) and x.var == name:
            out.append(x)
        elif isinstance(x, ir.CallStmt) and any(isinstance(a, ir.Name) and a.name == name for a in x.args):
            out.append(x)
    return out


def initial_values(kbody: list[ir.Stmt], loop: ir.Do, name: str) -> Optional[list[ir.Expr]]:
    """Values ``name`` may hold when ``loop`` starts: the right-hand sides of every
    assignment that can reach it (None when the value may come from elsewhere: before the
    routine, a call, a READ, the previous iteration of an enclosing loop's own update)."""
    g = FlowGraph(kbody)
    defs = g.reaching_defs(loop, name)
    if not defs or not all(isinstance(d, ir.Assign) and isinstance(d.target, ir.Name) for d in defs):
        return None
    if any(g.follows(loop, d) for d in defs):
        return None  # assigned after the loop too: the value may come from an earlier iteration of an enclosing loop
    return [d.value for d in defs]


def _fixed_shared_scalars(k: ir.Kernel, calls) -> set[str]:
    """Integer COMMON scalars the routine reads and nothing in it changes (no assignment,
    DO variable, READ or actual argument names them, and every routine it calls is
    analysed and runs as a device function, so writes no shared state): their values are
    set before the call like the arguments', so a bound may name them (Nekbone's
    ``ee = nelt``). None that an EQUIVALENCE names (written under another name), and
    without ``calls`` (one file's analysis) none."""
    if calls is None or not k.commons:
        return set()
    written = names_written(k)
    if written is None:
        return set()
    aliased = {n for cls in getattr(k, "equivalences", []) or [] for n in cls}  # written under another name
    for s in ir.walk(k.body):  # every routine it calls analysed, none writing shared state
        names = [s.name] if isinstance(s, ir.CallStmt) else []
        for e in ir.stmt_exprs(s):
            names += [x.name for x in ir.walk_expr(e) if isinstance(x, ir.FuncCall) and not x.intrinsic]
        if any(not calls.effects(k, n).translatable for n in names):
            return set()
    cands = {n for c in k.commons for n in c.variables
             if (v := k.locals.get(n)) is not None and v.ftype.base == "integer" and not v.dims}
    return cands - written - aliased


def _coef_sign(c: affine.Poly) -> Optional[bool]:
    if c and affine.is_const(c):
        return affine.constant(c) > 0
    return None


_ATOM_FUNCS = {"mod", "min", "max", "abs", "iabs", "int", "nint", "min0", "max0", "isign", "sign", "modulo"}


class BoundsFinder:
    """Subscript ranges of one kernel's array arguments. Subscripts are integer
    polynomials of the loop indices; integer sub-expressions that are not polynomials but
    depend only on arguments (``mod(n, 5)``, ``(hi - lo)/step``) are kept as opaque atoms."""

    def __init__(self, k: ir.Kernel, env: dict, calls=None):
        self.k = k
        self.env = env
        self.calls = calls  # effects.Calls: what the kernel's calls touch of the arrays passed
        self.args = {a.name for a in k.args} | _fixed_shared_scalars(k, calls)
        self.atoms: dict[str, ir.Expr] = {}
        self._atom_keys: dict[str, str] = {}
        self._values: dict[int, IterationValues] = {}

    # -- polynomials with atoms
    def atom(self, e: ir.Expr) -> Optional[affine.Poly]:
        names = {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}
        if names - self.args - set(self.atoms) or any(isinstance(x, ir.ArrayRef) for x in ir.walk_expr(e)):
            return None
        key = repr(ir.to_dict(e))
        name = self._atom_keys.get(key)
        if name is None:
            name = f"@{len(self.atoms)}"
            self._atom_keys[key] = name
            self.atoms[name] = e
        return affine.var(name)

    def poly(self, e: Optional[ir.Expr]) -> Optional[affine.Poly]:
        if e is None:
            return None
        p = affine.poly_of(e, self.env)
        if p is not None:
            return p
        if isinstance(e, ir.UnaryOp) and e.op in ("-", "+"):
            q = self.poly(e.operand)
            return None if q is None else (affine.mul(affine.const(-1), q) if e.op == "-" else q)
        if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*"):
            a, b = self.poly(e.left), self.poly(e.right)
            if a is None or b is None:
                return None
            return affine.add(a, b) if e.op == "+" else affine.add(a, b, -1) if e.op == "-" else affine.mul(a, b)
        if isinstance(e, ir.BinOp) and e.op == "**" and isinstance(e.right, ir.Literal) \
                and isinstance(e.right.value, int) and 0 <= e.right.value <= 4:
            base = self.poly(e.left)  # nu**3: a polynomial (Nekbone's points per element)
            if base is None:
                return None
            q = affine.const(1)
            for _ in range(e.right.value):
                q = affine.mul(q, base)
            return q
        integer = e.ftype is None or e.ftype.base == "integer"
        if integer and ((isinstance(e, ir.FuncCall) and e.intrinsic and e.name in _ATOM_FUNCS)
                        or (isinstance(e, ir.BinOp) and e.op == "/")):
            return self.atom(e)
        return None

    def expr(self, p: affine.Poly) -> ir.Expr:
        e = affine.to_expr(p)
        return replace_names(e, self.atoms)

    def _iteration_values(self, lp: ir.Do) -> IterationValues:
        if id(lp) not in self._values:
            k = self.k
            shared = set(k.module_vars) | set(k.host_vars) | {n for n, v in k.locals.items()
                                                               if v.common is not None or v.save}
            self._values[id(lp)] = IterationValues(lp.body, shared)
        return self._values[id(lp)]

    # -- locals through their reaching assignments
    def resolve(self, polys: list[affine.Poly], anchor: ir.Stmt, keep: set[str], depth: int = 0):
        out = []
        for p in polys:
            others = sorted(affine.names(p) - keep - self.args - set(self.atoms))
            if not others:
                out.append(p)
                continue
            if depth > 4:
                return None
            name = others[0]
            if isinstance(anchor, (ir.Do, ir.DoWhile)) and any(_writes(x, name) for x in anchor.body):
                return None
            vals = initial_values(self.k.body, anchor, name)
            if not vals:
                return None
            subs = []
            for v in vals:
                q = self.poly(v)
                if q is None:
                    return None
                subs.append(affine.substitute(p, name, q))
            r = self.resolve(subs, anchor, keep, depth + 1)
            if r is None:
                return None
            out += r
            if len(out) > 64:
                return None
        return out

    # -- loop ranges
    def ranges(self, lp: ir.Do, keep: set[str]):
        """[(first, last, ascending)] the index takes; ascending None when the order of the
        two is unknown (a step of unknown sign)."""
        los = self.resolve([self.poly(lp.start)], lp, keep) if self.poly(lp.start) is not None else None
        his = self.resolve([self.poly(lp.end)], lp, keep) if self.poly(lp.end) is not None else None
        step = self.poly(lp.step) if lp.step is not None else affine.const(1)
        if los is None or his is None or step is None or step == {}:
            return None
        steps = self.resolve([step], lp, keep)
        if not steps:
            return None
        # a step set on several paths (``es = 1``, or ``es = -1`` to run backwards): each
        # combination of the values first, last and step may hold (a union: sound, wider)
        combos = [(st, lo, hi) for st in steps for lo in los for hi in his]
        if len(combos) > 64 or any(st == {} for st, _, _ in combos):
            return None
        out = []
        for step, lo, hi in combos:
            if affine.is_const(step) and affine.constant(step) in (1, -1):
                last = hi
            else:
                # the last index actually reached: lo + ((hi - lo)/step)*step
                num = affine.add(hi, lo, -1)
                if affine.is_const(num) and affine.is_const(step):
                    k = affine.const(int(affine.constant(num) / affine.constant(step)))
                else:
                    k = self.atom(ir.BinOp("/", self.expr(num), self.expr(step), ftype=ir.INTEGER))
                    if k is None:
                        return None
                last = affine.add(lo, affine.mul(k, step))
            asc = (affine.constant(step) > 0) if affine.is_const(step) else None
            out.append((lo, last, asc))
        return out

    def endpoints(self, p: affine.Poly, loops: list[ir.Do], want_max: bool) -> Optional[list[affine.Poly]]:
        """Candidate extremes of ``p`` over the loop ranges (innermost loop first). A linear
        function of the indices reaches its extremes at corners of the iteration space, so
        both ends are kept when the coefficient's sign is not known (a stride)."""
        cands = [p]
        for i in range(len(loops) - 1, -1, -1):
            lp = loops[i]
            keep = {x.var for x in loops[:i]}
            rng = None
            nxt = []
            for q in cands:
                c, _ = affine.split(q, lp.var)
                if c is None:
                    return None
                if not c:
                    nxt.append(q)
                    continue
                if rng is None:
                    rng = self.ranges(lp, keep)
                    if rng is None:
                        return None
                for first, last, asc in rng:
                    sign = _coef_sign(c)
                    if asc is None or sign is None:
                        nxt += [affine.substitute(q, lp.var, first), affine.substitute(q, lp.var, last)]
                    else:
                        lo, hi = (first, last) if asc else (last, first)
                        nxt.append(affine.substitute(q, lp.var, hi if sign == want_max else lo))
            cands = nxt
            if len(cands) > 64:
                return None
        return cands

    def inductions(self, p: affine.Poly, loops: list[ir.Do], stmt: ir.Stmt) -> Optional[list[affine.Poly]]:
        """Induction variables of the enclosing loops replaced by their closed forms, one
        polynomial per possible initial value."""
        out = [p]
        for i, lp in enumerate(loops):
            for ind in lp.info.inductions:
                if not any(ind.var in affine.names(q) for q in out):
                    continue
                inits = initial_values(self.k.body, lp, ind.var)
                ps = self.poly(ind.step)
                start = self.poly(lp.start)
                step = self.poly(lp.step) if lp.step is not None else affine.const(1)
                if inits is None or ps is None or start is None or step is None or not affine.is_const(step) \
                        or affine.constant(step) not in (1, -1):
                    return None
                kk = affine.add(affine.var(lp.var), start, -1)
                if affine.constant(step) == -1:
                    kk = affine.mul(affine.const(-1), kk)
                order = list(ir.walk(lp.body))
                upd = next((j for j, x in enumerate(order) if isinstance(x, ir.Assign) and x.line == ind.line
                            and isinstance(x.target, ir.Name) and x.target.name == ind.var), None)
                pos = next((j for j, x in enumerate(order) if x is stmt), None)
                after = upd is not None and pos is not None and pos > upd
                closed = []
                for e in inits:
                    q0 = self.poly(e)
                    if q0 is None:
                        return None
                    q = affine.add(q0, affine.mul(kk, ps))
                    closed.append(affine.add(q, ps) if after else q)
                out = [affine.substitute(q, ind.var, c) for q in out for c in closed]
        return out

    def bounds(self, arg: ir.Argument) -> list[Optional[tuple[ir.Expr, ir.Expr]]]:
        if not arg.dims:
            return []
        lows: list[list[affine.Poly]] = [[] for _ in arg.dims]
        highs: list[list[affine.Poly]] = [[] for _ in arg.dims]
        failed = [False] * len(arg.dims)
        any_ref = False
        for ref, loops, stmt in _refs_with_loops(self.k.body, arg.name, calls=self.calls, caller=self.k):
            any_ref = True
            for d, dim in enumerate(arg.dims):
                if failed[d]:
                    continue
                r = self._ref_range(ref, d, dim, loops, stmt)
                if r is None:
                    failed[d] = True
                    continue
                lows[d] += r[0]
                highs[d] += r[1]
        out: list[Optional[tuple[ir.Expr, ir.Expr]]] = []
        for d in range(len(arg.dims)):
            if failed[d] or not any_ref or not lows[d]:
                out.append(None)
            else:
                out.append((self.combine(lows[d], False), self.combine(highs[d], True)))
        return out

    def _ref_range(self, ref, d, dim, loops, stmt):
        if isinstance(ref, ir.Name):
            lo = self.poly(dim.lower) if dim.lower is not None else affine.const(1)
            hi = self.poly(dim.upper) if dim.upper is not None else None
            if lo is None or hi is None or (affine.names(lo) | affine.names(hi)) - self.args - set(self.atoms):
                return None
            return [lo], [hi]
        if d >= len(ref.subscripts):
            return None
        sub = ref.subscripts[d]
        if loops:  # a temporary the iteration computes first: the value it holds
            sub = self._iteration_values(loops[0]).substituted(sub, stmt)
        if isinstance(sub, ir.Slice):
            lo_e = sub.lower if sub.lower is not None else (dim.lower or ir.Literal(1, "1", ftype=ir.INTEGER))
            hi_e = sub.upper if sub.upper is not None else dim.upper
            if hi_e is None or sub.step is not None:
                return None
            plo, phi = self.poly(lo_e), self.poly(hi_e)
        else:
            plo = phi = self.poly(sub)
        if plo is None or phi is None:
            return None
        los, his = self.inductions(plo, loops, stmt), self.inductions(phi, loops, stmt)
        if los is None or his is None:
            return None
        mins, maxs = [], []
        for q in los:
            e = self.endpoints(q, loops, False)
            if e is None:
                return None
            mins += e
        for q in his:
            e = self.endpoints(q, loops, True)
            if e is None:
                return None
            maxs += e
        anchor = loops[0] if loops else stmt
        mins = self.resolve(mins, anchor, set())
        maxs = self.resolve(maxs, anchor, set())
        if mins is None or maxs is None:
            return None
        if any(affine.names(q) - self.args - set(self.atoms) for q in mins + maxs):
            return None
        return mins, maxs

    def combine(self, polys: list[affine.Poly], want_max: bool) -> ir.Expr:
        uniq: list[affine.Poly] = []
        for p in polys:
            if p not in uniq:
                uniq.append(p)
        keep = []
        for p in uniq:
            dominated = False
            for q in uniq:
                if q is p:
                    continue
                d = affine.add(q, p, -1)
                if affine.is_const(d) and affine.constant(d) != 0 and ((affine.constant(d) > 0) == want_max):
                    dominated = True
                    break
            if not dominated:
                keep.append(p)
        if len(keep) == 1:
            return self.expr(keep[0])
        return ir.FuncCall("max" if want_max else "min", [self.expr(p) for p in keep], True, ftype=ir.INTEGER)


def access_bounds(k: ir.Kernel, arg: ir.Argument, env: dict, calls=None) -> list[Optional[tuple[ir.Expr, ir.Expr]]]:
    """For each dimension of ``arg``: (min, max) subscript the kernel can touch, as
    expressions of the arguments (None where it cannot be bounded). Sound: the union over
    all references and all values locals may hold; with ``calls`` (``effects.Calls``) the
    elements its calls touch through sequence association too."""
    return BoundsFinder(k, env, calls).bounds(arg)
