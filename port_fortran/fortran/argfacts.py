"""Facts about arguments: inferred intent, used_as_size, used_as_index, compared_with and
the subscript range each dimension touches (``access_bounds``). Pure functions over the IR."""
from __future__ import annotations

from typing import Optional

from . import affine, ir
from .ir import stmt_exprs

# --------------------------------------------------------------------------- intent


def _base(e: ir.Expr) -> Optional[str]:
    if isinstance(e, (ir.Name, ir.ArrayRef)):
        return e.name
    return None


def ordered_accesses(body: list[ir.Stmt], callees: dict[str, ir.Kernel]) -> list[tuple[str, str, bool]]:
    """(name, 'r'|'w', conditional) in execution order of the text."""
    out: list[tuple[str, str, bool]] = []

    def reads(e: ir.Expr, cond: bool):
        for x in ir.walk_expr(e):
            if isinstance(x, (ir.Name, ir.ArrayRef)):
                out.append((x.name, "r", cond))
            elif isinstance(x, ir.FuncCall) and not x.intrinsic and x.name in callees:
                callee = callees[x.name]
                for i, a in enumerate(x.args):
                    b = _base(a)
                    if b and i < len(callee.args) and callee.args[i].intent in ("out", "inout"):
                        out.append((b, "w", cond))

    def visit(body, cond):
        for s in body:
            if isinstance(s, ir.Assign):
                reads(s.value, cond)
                if isinstance(s.target, ir.ArrayRef):
                    for sub in s.target.subscripts:
                        reads(sub, cond)
                out.append((s.target.name, "w", cond))
            elif isinstance(s, ir.Do):
                for e in (s.start, s.end, s.step):
                    if e is not None:
                        reads(e, cond)
                out.append((s.var, "w", cond))
                visit(s.body, True)
            elif isinstance(s, ir.DoWhile):
                reads(s.cond, cond)
                visit(s.body, True)
            elif isinstance(s, ir.If):
                for i, (c, b) in enumerate(s.branches):
                    reads(c, cond or i > 0)
                    visit(b, True)
                visit(s.else_body, True)
            elif isinstance(s, ir.SelectCase):
                reads(s.expr, cond)
                for c in s.cases:
                    visit(c.body, True)
            elif isinstance(s, ir.Where):
                reads(s.mask, cond)
                visit(s.body, True)
                visit(s.elsewhere, True)
            elif isinstance(s, ir.CallStmt):
                callee = callees.get(s.name)
                for i, a in enumerate(s.args):
                    b = _base(a)
                    if isinstance(a, ir.ArrayRef):
                        for sub in a.subscripts:
                            reads(sub, cond)
                    if b is None:
                        reads(a, cond)
                        continue
                    intent = "inout"
                    if callee is not None and i < len(callee.args):
                        intent = callee.args[i].intent
                    if intent in ("in", "inout"):
                        out.append((b, "r", cond))
                    if intent in ("out", "inout"):
                        out.append((b, "w", cond))
            else:
                for e in stmt_exprs(s):
                    reads(e, cond)

    visit(body, False)
    return out


def _cond_writes(body: list[ir.Stmt]) -> set[str]:
    """Names written inside IF/WHERE/CASE branches (partial writes of arrays)."""
    out: set[str] = set()

    def visit(body, in_branch):
        for s in body:
            if isinstance(s, ir.Assign) and in_branch:
                out.add(s.target.name)
            if isinstance(s, (ir.If, ir.SelectCase, ir.Where, ir.DoWhile)):
                visit(ir.children(s), True)
            else:
                visit(ir.children(s), in_branch)

    visit(body, False)
    return out


def infer_intent(arg: ir.Argument, acc: list[tuple[str, str, bool]], cond_writes: set[str]) -> str:
    mine = [(k, c) for n, k, c in acc if n == arg.name]
    reads = any(k == "r" for k, _ in mine)
    writes = any(k == "w" for k, _ in mine)
    if not writes:
        return "in"
    if not reads:
        if arg.dims and arg.name in cond_writes:
            return "inout"
        if not arg.dims and all(c for k, c in mine if k == "w"):
            return "inout"
        return "out"
    if arg.dims:
        return "inout"
    # scalars: out when a definite write comes before any read
    for k, c in mine:
        if k == "r":
            return "inout"
        if k == "w" and not c:
            return "out"
    return "inout"


def scalar_out(body: list[ir.Stmt], name: str, arrays: set[str]) -> bool:
    """The scalar is surely assigned on every path through ``body`` before any read of it
    (an early RETURN or a jump that skips the assignment leaves the caller's value)."""
    from .dataflow import FlowGraph
    return name not in FlowGraph(body, live_at_end={name}).exposed()


# --------------------------------------------------------------------------- flags and sizes


def compared_literals(body: list[ir.Stmt], names: set[str]) -> dict[str, list]:
    out: dict[str, list] = {n: [] for n in names}

    def add(n, v):
        if n in out and v not in out[n]:
            out[n].append(v)

    for s in ir.walk(body):
        exprs = stmt_exprs(s)
        if isinstance(s, ir.SelectCase) and isinstance(s.expr, ir.Name):
            for c in s.cases:
                for v in c.values:
                    if isinstance(v, ir.Literal):
                        add(s.expr.name, v.value)
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.BinOp) and x.op in ("==", "/="):
                    for a, b in ((x.left, x.right), (x.right, x.left)):
                        if isinstance(a, ir.Name) and isinstance(b, ir.Literal):
                            add(a.name, b.value)
                        elif isinstance(a, ir.Name) and isinstance(b, ir.UnaryOp) and isinstance(b.operand, ir.Literal) \
                                and b.op == "-" and isinstance(b.operand.value, (int, float)):
                            add(a.name, -b.operand.value)
                elif isinstance(x, ir.FuncCall) and not x.intrinsic and len(x.args) == 2:
                    a, b = x.args
                    for p, q in ((a, b), (b, a)):
                        if isinstance(p, ir.Name) and isinstance(q, ir.Literal) and isinstance(q.value, str):
                            add(p.name, q.value)
    return out


def size_names(k: ir.Kernel) -> set[str]:
    """Names in the bounds of array arguments, of automatic local arrays and of loops."""
    names: set[str] = set()
    for a in list(k.args) + [v for v in k.locals.values() if v.common is None and v.module is None]:
        for d in a.dims:
            for e in (d.lower, d.upper):
                if e is not None:
                    names |= {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
    for s in ir.walk(k.body):
        if isinstance(s, ir.Do):
            for e in (s.start, s.end, s.step):
                if e is not None:
                    names |= {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
    return names


def index_arrays(body: list[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in ir.walk(body):
        for e in stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.ArrayRef):
                    for sub in x.subscripts:
                        for y in ir.walk_expr(sub):
                            if isinstance(y, ir.ArrayRef):
                                out.add(y.name)
    return out


# --------------------------------------------------------------------------- access bounds


def _refs_with_loops(body: list[ir.Stmt], name: str, loops=None, calls=None, caller=None):
    """(ref, enclosing DO loops outermost first, statement) for every reference to ``name``.
    With ``calls`` (``effects.Calls``) an actual argument of a call is what the callee
    touches of it (an element passed to an array dummy: the elements from it on, as
    ranges); a call touching nothing of it is no reference."""
    loops = loops or []
    for s in body:
        mapped: dict[int, Optional[ir.Expr]] = {}
        if calls is not None:
            from .effects import direct_actuals
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
    from .dataflow import FlowGraph
    g = FlowGraph(kbody)
    defs = g.reaching_defs(loop, name)
    if not defs or not all(isinstance(d, ir.Assign) and isinstance(d.target, ir.Name) for d in defs):
        return None
    if any(g.follows(loop, d) for d in defs):
        return None  # assigned after the loop too: the value may come from an earlier iteration of an enclosing loop
    return [d.value for d in defs]


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
        self.args = {a.name for a in k.args}
        self.atoms: dict[str, ir.Expr] = {}
        self._atom_keys: dict[str, str] = {}

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
        integer = e.ftype is None or e.ftype.base == "integer"
        if integer and ((isinstance(e, ir.FuncCall) and e.intrinsic and e.name in _ATOM_FUNCS)
                        or (isinstance(e, ir.BinOp) and e.op == "/")):
            return self.atom(e)
        return None

    def expr(self, p: affine.Poly) -> ir.Expr:
        e = affine.to_expr(p)
        return _replace_names(e, self.atoms)

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
        if steps is None or len(steps) != 1:
            return None
        step = steps[0]
        out = []
        for lo in los:
            for hi in his:
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


def _replace_names(e: ir.Expr, table: dict[str, ir.Expr]) -> ir.Expr:
    import copy
    if isinstance(e, ir.Name) and e.name in table:
        return copy.deepcopy(table[e.name])
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, _replace_names(e.left, table), _replace_names(e.right, table), ftype=e.ftype)
    if isinstance(e, ir.UnaryOp):
        return ir.UnaryOp(e.op, _replace_names(e.operand, table), ftype=e.ftype)
    if isinstance(e, ir.FuncCall):
        return ir.FuncCall(e.name, [_replace_names(a, table) for a in e.args], e.intrinsic, dict(e.keywords),
                           ftype=e.ftype)
    return e


replace_names = _replace_names  # names -> expressions (interproc maps a caller's names to the callee's)


def access_bounds(k: ir.Kernel, arg: ir.Argument, env: dict, calls=None) -> list[Optional[tuple[ir.Expr, ir.Expr]]]:
    """For each dimension of ``arg``: (min, max) subscript the kernel can touch, as
    expressions of the arguments (None where it cannot be bounded). Sound: the union over
    all references and all values locals may hold; with ``calls`` (``effects.Calls``) the
    elements its calls touch through sequence association too."""
    return BoundsFinder(k, env, calls).bounds(arg)


# --------------------------------------------------------------------------- everything


def infer_intents(k: ir.Kernel, callees: dict[str, ir.Kernel]) -> None:
    """Intent of every argument not declared (callees of the same file taken into account)."""
    acc = ordered_accesses(k.body, callees)
    arrays = {a.name for a in k.args if a.dims} | {n for n, v in k.locals.items() if v.dims}
    cw = _cond_writes(k.body)
    for a in k.args:
        if not a.intent_declared:
            a.intent = infer_intent(a, acc, cw)
            if a.intent == "inout" and not a.dims and scalar_out(k.body, a.name, arrays):
                a.intent = "out"


def argument_facts(k: ir.Kernel, calls=None) -> None:
    """compared_with, used_as_size, used_as_index, access_bounds (loops analysed first:
    induction variables feed the bounds). ``calls`` (``effects.Calls``): the elements the
    kernel's calls touch of the arrays it passes them count as its own references."""
    names = {a.name for a in k.args}
    cmp = compared_literals(k.body, names)
    sizes = size_names(k)
    idx = index_arrays(k.body)
    env = {n: v.parameter for n, v in k.locals.items() if v.parameter is not None}
    for a in k.args:
        a.compared_with = cmp.get(a.name, [])
        a.used_as_size = a.name in sizes and not a.dims
        a.used_as_index = a.name in idx
        legacy_assumed_size(k, a, env, calls)
        a.access_bounds = access_bounds(k, a, env, calls)


def legacy_dims(k: ir.Kernel, calls=None) -> None:
    """:func:`legacy_assumed_size` for every argument (before the loops are analysed: what
    a call may touch from an element of such a dummy on reaches to its real end)."""
    env = {n: v.parameter for n, v in k.locals.items() if v.parameter is not None}
    for a in k.args:
        legacy_assumed_size(k, a, env, calls)


def legacy_assumed_size(k: ir.Kernel, a: ir.Argument, env: dict, calls=None) -> None:
    """The F77 idiom ``real x(1)`` / ``a(lda, 1)``: a dummy whose last dimension is
    declared 1 but used past it (a subscript other than 1, or the whole array passed on
    to a call) is assumed-size (``*``): its real extent is what the caller passes, and the
    harness and the port must not take it for one element."""
    if not a.dims or a.dims[-1].assumed_shape:
        return
    last = a.dims[-1]
    lo = affine.poly_of(last.lower, env) if last.lower is not None else affine.const(1)
    if last.upper is None or affine.poly_of(last.upper, env) != affine.const(1) or lo != affine.const(1):
        return
    one = affine.const(1)
    for ref, _loops, _stmt in _refs_with_loops(k.body, a.name, calls=calls, caller=k):
        if isinstance(ref, ir.ArrayRef) and len(ref.subscripts) == len(a.dims):
            sub = ref.subscripts[-1]
            ends = [sub.lower, sub.upper] if isinstance(sub, ir.Slice) else [sub]
            if all(x is not None and affine.poly_of(x, env) == one for x in ends):
                continue
        a.dims[-1] = ir.Dim(lower=last.lower, upper=None)
        return
