"""Loop dependence analysis: which DO loops may run their iterations in parallel.

Pure functions over the IR. For every ``Do`` of a kernel, ``loop_info`` computes an
``ir.LoopInfo``: the verdict, the trip count, reductions (scalar and array-element),
privatisable scalars, indirect and scattered arrays, calls, early exits and, when the
loop is not parallel, the reasons as ``Diagnostic(code, message, line)``.

The array test is exact for subscripts affine in the loop indices (same coefficient:
constant distance; different coefficients: GCD test) and conservative otherwise.
Reason codes: loop-carried-dependence, possible-dependence, scalar-dependence,
last-value, loc-reduction, scattered-update, indirect-write, early-exit, call-in-loop,
io-in-loop, unsupported-in-loop, loop-variable-modified.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Optional

from . import affine, ir
from .build import stmt_exprs
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


def _expr_reads(e: ir.Expr, out: list[Access], s: ir.Stmt, arrays: set[str]):
    for x in ir.walk_expr(e):
        if isinstance(x, ir.ArrayRef):
            out.append(Access(x.name, list(x.subscripts), False, s.line, s, x))
        elif isinstance(x, ir.Name) and x.name in arrays:
            out.append(Access(x.name, None, False, s.line, s, x))


def array_accesses(body: list[ir.Stmt], arrays: set[str]) -> list[Access]:
    """Reads and writes of arrays in ``body`` (nested statements included), in order."""
    out: list[Access] = []
    for s in ir.walk(body):
        if isinstance(s, ir.Assign):
            t = s.target
            if isinstance(t, ir.ArrayRef):
                for sub in t.subscripts:
                    _expr_reads(sub, out, s, arrays)
                _expr_reads(s.value, out, s, arrays)
                out.append(Access(t.name, list(t.subscripts), True, s.line, s, t))
            else:
                _expr_reads(s.value, out, s, arrays)
                if t.name in arrays:
                    out.append(Access(t.name, None, True, s.line, s, t))
        elif isinstance(s, ir.CallStmt):
            for a in s.args:
                _expr_reads(a, out, s, arrays)
                if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name in arrays:
                    out.append(Access(a.name, None, True, s.line, s, a))
        else:
            for e in stmt_exprs(s):
                _expr_reads(e, out, s, arrays)
    return out


# --------------------------------------------------------------------------- scalar dataflow


def _reads_of(e: ir.Expr, arrays: set[str]) -> list[str]:
    return [x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name) and x.name not in arrays]


def exposed_reads(body: list[ir.Stmt], defined: set[str], arrays: set[str], exposed: set[str]) -> set[str]:
    """Must-define dataflow over structured statements: adds to ``exposed`` every scalar read
    that may happen before any write in ``body``; returns the scalars surely defined after."""
    d = set(defined)
    for s in body:
        if isinstance(s, ir.Assign):
            for n in _reads_of(s.value, arrays):
                if n not in d:
                    exposed.add(n)
            if isinstance(s.target, ir.ArrayRef):
                for sub in s.target.subscripts:
                    for n in _reads_of(sub, arrays):
                        if n not in d:
                            exposed.add(n)
            elif s.target.name not in arrays:
                d.add(s.target.name)
        elif isinstance(s, ir.If):
            outs = []
            cur = set(d)
            for cond, b in s.branches:
                for n in _reads_of(cond, arrays):
                    if n not in cur:
                        exposed.add(n)
                outs.append(exposed_reads(b, cur, arrays, exposed))
            outs.append(exposed_reads(s.else_body, cur, arrays, exposed) if s.else_body else set(cur))
            inter = set.intersection(*outs) if outs else set(cur)
            d |= inter
        elif isinstance(s, ir.SelectCase):
            for n in _reads_of(s.expr, arrays):
                if n not in d:
                    exposed.add(n)
            outs = [exposed_reads(c.body, d, arrays, exposed) for c in s.cases]
            if not any(not c.values for c in s.cases):
                outs.append(set(d))
            if outs:
                d |= set.intersection(*outs)
        elif isinstance(s, ir.Do):
            for e in (s.start, s.end, s.step):
                if e is not None:
                    for n in _reads_of(e, arrays):
                        if n not in d:
                            exposed.add(n)
            exposed_reads(s.body, d | {s.var}, arrays, exposed)
            d.add(s.var)
        elif isinstance(s, ir.DoWhile):
            for n in _reads_of(s.cond, arrays):
                if n not in d:
                    exposed.add(n)
            exposed_reads(s.body, d, arrays, exposed)
        elif isinstance(s, ir.Where):
            for e in [s.mask]:
                for n in _reads_of(e, arrays):
                    if n not in d:
                        exposed.add(n)
            exposed_reads(s.body, d, arrays, exposed)
            exposed_reads(s.elsewhere, d, arrays, exposed)
        else:
            for e in stmt_exprs(s):
                for n in _reads_of(e, arrays):
                    if n not in d:
                        exposed.add(n)
    return d


def has_jumps(body: list[ir.Stmt]) -> bool:
    return any(isinstance(s, (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)) for s in ir.walk(body))


def scalar_writes(body: list[ir.Stmt], arrays: set[str]) -> dict[str, int]:
    """Scalars assigned in ``body`` (name -> first line); DO variables of inner loops too,
    and scalars passed to CALLs (they may be written)."""
    out: dict[str, int] = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name not in arrays:
            out.setdefault(s.target.name, s.line)
        elif isinstance(s, ir.Do):
            out.setdefault(s.var, s.line)
        elif isinstance(s, ir.CallStmt):
            for a in s.args:
                if isinstance(a, ir.Name) and a.name not in arrays:
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


def _dim_relation(sw: ir.Expr, sa: ir.Expr, v: str, inner: set[str], variant: set[str], env,
                  subst_w: dict | None = None, subst_a: dict | None = None) -> tuple[str, bool]:
    """How two subscripts in one dimension can coincide for iterations i1, i2 of ``v``.
    ``subst_*`` replace induction variables by their closed form. Returns (relation, exact)."""
    if isinstance(sw, ir.Slice) or isinstance(sa, ir.Slice):
        return _ANY, False
    pw, pa = _subst(affine.poly_of(sw, env), subst_w), _subst(affine.poly_of(sa, env), subst_a)
    if pw is None or pa is None:
        return _ANY, False
    nw, na = affine.names(pw), affine.names(pa)
    if (nw | na) & variant:
        return _ANY, False
    if (nw | na) & inner:
        # inner loop indices range freely; identical subscripts free of v touch the
        # same elements in every iteration of v
        if pw == pa and v not in nw:
            return _ANY, True
        return _ANY, False
    cw, rw = affine.split(pw, v)
    ca, ra = affine.split(pa, v)
    if cw is None or ca is None:
        return _ANY, False
    diff = affine.add(ra, rw, -1)  # c*(i1) + rw == c*(i2) + ra  => c*(i1-i2) = ra - rw
    if cw == ca:
        if not cw:
            if not diff:
                return _ANY, True  # same element in every iteration
            if affine.is_const(diff):
                return _NEVER, True
            return _ANY, False
        if not diff:
            # a symbolic coefficient (a stride such as incx) is taken as nonzero
            return _SAME_ITER, affine.is_const(cw)
        if affine.is_const(cw) and affine.is_const(diff):
            c, d = affine.constant(cw), affine.constant(diff)
            if d % c != 0:
                return _NEVER, True
            return _ANY, True  # constant dependence distance d/c
        return _ANY, False
    if affine.is_const(cw) and affine.is_const(ca) and affine.is_const(diff):
        g = gcd(affine.constant(cw), affine.constant(ca))
        if g and affine.constant(diff) % g != 0:
            return _NEVER, True
        return _ANY, True
    return _ANY, False


def pair_carried(w: Access, a: Access, v: str, inner: set[str], variant: set[str], env,
                 subst_of=None, assumptions: list | None = None) -> tuple[bool, bool]:
    """(carried, exact) for a write and another access of the same array w.r.t. loop ``v``.
    Independence that assumes a symbolic stride is nonzero adds the subscript to ``assumptions``."""
    if w.subs is None or a.subs is None or len(w.subs) != len(a.subs):
        return True, False
    exact = True
    sw_map = subst_of(w) if subst_of else None
    sa_map = subst_of(a) if subst_of else None
    for sw, sa in zip(w.subs, a.subs):
        rel, ex = _dim_relation(sw, sa, v, inner, variant, env, sw_map, sa_map)
        if rel in (_NEVER, _SAME_ITER):
            if not ex and assumptions is not None:
                assumptions.append(sw)
            return False, True
        exact = exact and ex
    return True, exact


# --------------------------------------------------------------------------- the verdict


@dataclass
class Context:
    """Facts about the kernel the loop analysis needs."""

    arrays: set[str]
    globals_: set[str]  # arguments, COMMON, module and host variables, function result: live after the kernel
    env: dict  # PARAMETER values
    # name -> line of its first read outside every DO over it (see loop_var_reads_outside)
    reads_outside: dict = field(default_factory=dict)
    where: dict = field(default_factory=dict)  # id(stmt) -> (block, index, parent stmt): block_index
    jumps: bool = False  # the kernel has GOTOs (has_jumps of its body)


def kernel_context(k: ir.Kernel) -> Context:
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
    return Context(arrays, globals_, env, loop_var_reads_outside(k.body), block_index(k.body), has_jumps(k.body))


def block_index(body: list[ir.Stmt], parent: Optional[ir.Stmt] = None, out: Optional[dict] = None) -> dict:
    """id(stmt) -> (the block holding it, its index there, the statement owning the block),
    for every statement nested in ``body``: one pass, then paths cost their depth."""
    out = {} if out is None else out
    for i, s in enumerate(body):
        out[id(s)] = (body, i, parent)
        for b in _blocks(s):
            block_index(b, s, out)
    return out


def _blocks(s: ir.Stmt) -> list[list[ir.Stmt]]:
    if isinstance(s, (ir.Do, ir.DoWhile)):
        return [s.body]
    if isinstance(s, ir.If):
        return [b for _, b in s.branches] + [s.else_body]
    if isinstance(s, ir.SelectCase):
        return [c.body for c in s.cases]
    if isinstance(s, ir.Where):
        return [s.body, s.elsewhere]
    return []


def path_in(where: dict, target: ir.Stmt):
    """What :func:`_path_to` returns, from a :func:`block_index`."""
    loc = where.get(id(target))
    if loc is None:
        return None
    out = [(loc[0], loc[1], None)]
    parent = loc[2]
    while parent is not None:
        block, idx, up = where[id(parent)]
        out.append((block, idx, parent))
        parent = up
    return out[::-1]


def _path_to(body: list[ir.Stmt], target: ir.Stmt, path=None):
    """[(block, index, owner)] from the kernel body down to ``target``."""
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
            r = _path_to(b, target, path + [(body, i, s)])
            if r is not None:
                return r
    return None


def live_after(kbody: list[ir.Stmt], loop: ir.Do, name: str, ctx: Context) -> bool:
    """May the value ``name`` has when ``loop`` ends be read later?"""
    path = path_in(ctx.where, loop) if ctx.where else _path_to(kbody, loop)
    if path is None or (ctx.jumps if ctx.where else has_jumps(kbody)):
        return True
    defined: set[str] = set()
    for level in range(len(path) - 1, -1, -1):
        block, idx, _ = path[level]
        exposed: set[str] = set()
        after = exposed_reads(block[idx + 1:], defined, ctx.arrays, exposed)
        if name in exposed:
            return True
        if name in after:
            return False
        defined = after
        owner = path[level - 1][2] if level > 0 else None
        if isinstance(owner, (ir.Do, ir.DoWhile)):
            # next iteration of an enclosing loop runs the statements before this one again
            exposed = set()
            exposed_reads(block[:idx], set(), ctx.arrays, exposed)
            if name in exposed:
                return True
    return name in ctx.globals_


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
    if calls:
        name, line = calls[0]
        reasons.append(ir.Diagnostic("call-in-loop", f"call to {name} (line {line}) inside the loop over {v}: "
                                     "its side effects are not analysed", line))

    # scalars
    writes = scalar_writes(loop.body, ctx.arrays)
    if v in writes:
        reasons.append(ir.Diagnostic("loop-variable-modified", f"the loop variable {v} is assigned inside the loop "
                                     f"(line {writes[v]})", writes[v]))
    exposed: set[str] = set()
    exposed_reads(loop.body, {v}, ctx.arrays, exposed)
    if has_jumps(loop.body):
        # GOTOs inside the body can skip a write and reach a read: the must-define
        # dataflow above does not follow them, so every scalar read counts as exposed
        for s in ir.walk(loop.body):
            for e in stmt_exprs(s):
                exposed.update(x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name) and x.name not in ctx.arrays)
    variant = set(writes) - {v} - inner_vars
    handled: set[str] = set()

    # induction variables: ix = ix + incx, once per iteration
    inductions = find_inductions(loop, writes, variant | inner_vars | {v}, ctx)
    for ind in inductions:
        ind.live_after = live_after(kernel.body, loop, ind.var, ctx)
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
            if live_after(kernel.body, loop, name, ctx):
                reasons.append(ir.Diagnostic("last-value", f"{name} is assigned in the loop over {v} (line {writes[name]}) "
                                             "and its last value is used after the loop", writes[name]))
            else:
                info.private.append(name)
            continue
        reasons.append(ir.Diagnostic("scalar-dependence", f"loop-carried dependence on {name} across iterations of {v} "
                                     f"({name} is read before it is assigned, line {writes[name]})", writes[name]))
    for iv in sorted(inner_vars):
        if iv not in info.private:
            info.private.append(iv)
    for lv in [v] + sorted(inner_vars):
        where = ctx.reads_outside.get(lv)
        if where is not None or lv in ctx.globals_:
            reasons.append(ir.Diagnostic("last-value", f"the value of the loop variable {lv} after the loop over {v} "
                                         f"is used (line {where or loop.line})", where or loop.line))

    # arrays
    accesses = array_accesses(loop.body, ctx.arrays)
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
    assumed: list = []
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
        for w in ws:
            for a in accs:
                c, exact = pair_carried(w, a, v, inner_vars, variant - {i.var for i in inductions}, ctx.env,
                                        subst_of, assumed)
                if c:
                    carried = (w, a, exact)
                    break
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
    if assumed:
        sub = assumed[0]
        kernel.diagnostics.append(ir.Diagnostic(
            "assumed-nonzero-stride", f"the loop over {v} (line {loop.line}) is independent only if the stride in "
            f"{expr_str(sub)} is nonzero", loop.line))
    info.reasons = reasons
    info.parallel = not reasons
    return info


def loop_var_reads_outside(kbody: list[ir.Stmt]) -> dict[str, int]:
    """For every name, the line of its first read outside every DO over it (the value a
    loop variable has after its loop), in one pass over the kernel: the same answers as
    :func:`loop_var_read_outside` for each name, without a pass per loop."""
    out: dict[str, int] = {}

    def note(e: ir.Expr, enclosing: frozenset, line: int):
        for x in ir.walk_expr(e):
            if isinstance(x, (ir.Name, ir.ArrayRef)) and x.name not in enclosing and x.name not in out:
                out[x.name] = line

    def visit(body, enclosing: frozenset):
        for s in body:
            if isinstance(s, ir.Do):
                for e in (s.start, s.end, s.step):
                    if e is not None:
                        note(e, enclosing, s.line)
                visit(s.body, enclosing | {s.var})
                continue
            for e in stmt_exprs(s):
                if isinstance(s, ir.Assign) and e is s.target and isinstance(e, ir.Name):
                    continue
                note(e, enclosing, s.line)
            visit(ir.children(s), enclosing)

    visit(kbody, frozenset())
    return out


def loop_var_read_outside(kbody: list[ir.Stmt], v: str) -> Optional[int]:
    """Line of a read of ``v`` outside every DO over ``v`` (its value after a loop), or None."""
    def visit(body, inside):
        for s in body:
            if isinstance(s, ir.Do):
                for e in (s.start, s.end, s.step):
                    if e is not None and not inside and _mentions(e, v):
                        return s.line
                r = visit(s.body, inside or s.var == v)
                if r is not None:
                    return r
                continue
            if not inside:
                for e in stmt_exprs(s):
                    if isinstance(s, ir.Assign) and e is s.target and isinstance(e, ir.Name):
                        continue
                    if _mentions(e, v):
                        return s.line
            r = visit(ir.children(s), inside)
            if r is not None:
                return r
        return None
    return visit(kbody, False)


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


def analyse_loops(k: ir.Kernel) -> None:
    """Fill ``info`` of every DO in the kernel (inner loops first)."""
    ctx = kernel_context(k)

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
