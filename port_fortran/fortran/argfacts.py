"""Facts about arguments: inferred intent, used_as_size, used_as_index, compared_with and
the subscript range each dimension touches (``access_bounds``). Pure functions over the IR."""
from __future__ import annotations

from typing import Optional

from . import affine, ir
from .build import stmt_exprs

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
    """The scalar is surely assigned on the way through ``body`` before any read of it."""
    from .dependence import exposed_reads, has_jumps
    if has_jumps(body):
        return False
    exposed: set[str] = set()
    defined = exposed_reads(body, set(), arrays, exposed)
    return name in defined and name not in exposed


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
    names: set[str] = set()
    for a in k.args:
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


def _refs_with_loops(body: list[ir.Stmt], name: str, loops=None):
    """(ref, enclosing DO loops outermost first) for every reference to ``name``."""
    loops = loops or []
    for s in body:
        for e in stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, (ir.ArrayRef, ir.Name)) and x.name == name:
                    yield x, loops
        if isinstance(s, ir.Do):
            yield from _refs_with_loops(s.body, name, loops + [s])
        else:
            yield from _refs_with_loops(ir.children(s), name, loops)


def _positive(c: affine.Poly, positive_names: set[str]) -> Optional[bool]:
    """Sign of a coefficient: True (>0), False (<0), None (unknown or zero)."""
    if not c:
        return None
    if affine.is_const(c):
        v = affine.constant(c)
        return True if v > 0 else False
    if all(v > 0 for v in c.values()) and all(n in positive_names for n in affine.names(c)) and () not in c:
        return True  # strides and leading dimensions: assumed positive (BLAS convention)
    return None


def _extreme(p: affine.Poly, loops: list[ir.Do], env, want_max: bool, positive: set[str]) -> Optional[affine.Poly]:
    for lp in reversed(loops):
        c, r = affine.split(p, lp.var)
        if c is None:
            return None
        if not c:
            continue
        lo, hi = affine.poly_of(lp.start, env), affine.poly_of(lp.end, env)
        if lo is None or hi is None:
            return None
        step = affine.poly_of(lp.step, env) if lp.step is not None else affine.const(1)
        if step is None or not affine.is_const(step) or affine.constant(step) == 0:
            return None
        if affine.constant(step) < 0:
            lo, hi = hi, lo
        sign = _positive(c, positive)
        if sign is None:
            return None
        pick = hi if (sign == want_max) else lo
        p = affine.substitute(p, lp.var, pick)
    return p


def _combine(polys: list[affine.Poly], want_max: bool) -> ir.Expr:
    uniq: list[affine.Poly] = []
    for p in polys:
        if p not in uniq:
            uniq.append(p)
    # drop those dominated by a constant difference
    keep = []
    for p in uniq:
        dominated = False
        for q in uniq:
            if q is p:
                continue
            d = affine.add(q, p, -1)
            if affine.is_const(d) and ((affine.constant(d) > 0) == want_max) and affine.constant(d) != 0:
                dominated = True
                break
        if not dominated:
            keep.append(p)
    if len(keep) == 1:
        return affine.to_expr(keep[0])
    return ir.FuncCall("max" if want_max else "min", [affine.to_expr(p) for p in keep], True, ftype=ir.INTEGER)


def access_bounds(k: ir.Kernel, arg: ir.Argument, env: dict) -> list[Optional[tuple[ir.Expr, ir.Expr]]]:
    if not arg.dims:
        return []
    argnames = {a.name for a in k.args}
    positive = {a.name for a in k.args if a.ftype.base == "integer" and not a.dims}
    lows: list[list[affine.Poly]] = [[] for _ in arg.dims]
    highs: list[list[affine.Poly]] = [[] for _ in arg.dims]
    failed = [False] * len(arg.dims)
    any_ref = False
    for ref, loops in _refs_with_loops(k.body, arg.name):
        any_ref = True
        loop_vars = {lp.var for lp in loops}
        for d, dim in enumerate(arg.dims):
            if failed[d]:
                continue
            if isinstance(ref, ir.Name):
                lo = affine.poly_of(dim.lower, env) if dim.lower is not None else affine.const(1)
                hi = affine.poly_of(dim.upper, env) if dim.upper is not None else None
                if lo is None or hi is None:
                    failed[d] = True
                    continue
                lows[d].append(lo)
                highs[d].append(hi)
                continue
            if d >= len(ref.subscripts):
                failed[d] = True
                continue
            sub = ref.subscripts[d]
            if isinstance(sub, ir.Slice):
                lo_e = sub.lower if sub.lower is not None else (dim.lower or ir.Literal(1, "1", ftype=ir.INTEGER))
                hi_e = sub.upper if sub.upper is not None else dim.upper
                if hi_e is None or (sub.step is not None):
                    failed[d] = True
                    continue
                plo, phi = affine.poly_of(lo_e, env), affine.poly_of(hi_e, env)
            else:
                plo = phi = affine.poly_of(sub, env)
            if plo is None or phi is None:
                failed[d] = True
                continue
            mn = _extreme(plo, loops, env, False, positive)
            mx = _extreme(phi, loops, env, True, positive)
            if mn is None or mx is None:
                failed[d] = True
                continue
            if (affine.names(mn) | affine.names(mx)) - argnames:
                failed[d] = True
                continue
            lows[d].append(mn)
            highs[d].append(mx)
    out: list[Optional[tuple[ir.Expr, ir.Expr]]] = []
    for d in range(len(arg.dims)):
        if failed[d] or not any_ref or not lows[d]:
            out.append(None)
        else:
            out.append((_combine(lows[d], False), _combine(highs[d], True)))
    return out


# --------------------------------------------------------------------------- everything


def analyse_arguments(k: ir.Kernel, callees: dict[str, ir.Kernel]) -> None:
    acc = ordered_accesses(k.body, callees)
    arrays = {a.name for a in k.args if a.dims} | {n for n, v in k.locals.items() if v.dims}
    cw = _cond_writes(k.body)
    for a in k.args:
        if not a.intent_declared:
            a.intent = infer_intent(a, acc, cw)
            if a.intent == "inout" and not a.dims and scalar_out(k.body, a.name, arrays):
                a.intent = "out"
    names = {a.name for a in k.args}
    cmp = compared_literals(k.body, names)
    sizes = size_names(k)
    idx = index_arrays(k.body)
    env = {n: v.parameter for n, v in k.locals.items() if v.parameter is not None}
    for a in k.args:
        a.compared_with = cmp.get(a.name, [])
        a.used_as_size = a.name in sizes and not a.dims
        a.used_as_index = a.name in idx
        a.access_bounds = access_bounds(k, a, env)
