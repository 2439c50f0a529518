"""Facts about arguments: inferred intent, used_as_size, used_as_index, compared_with and
the subscript range each dimension touches (``access_bounds``). Pure functions over the IR."""
from __future__ import annotations

from typing import Optional

from . import affine, ir
from .bounds import BoundsFinder, _refs_with_loops, access_bounds
from .accesses import CallSites, scalar_writes
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
    reads = callee_module_reads(k, calls)
    k.callee_module_reads = {n: r.var for n, r in reads.items()}
    k.module_bounds = module_array_bounds(k, env, calls, reads)


def callee_module_reads(k: ir.Kernel, calls=None) -> dict:
    """Module variables the routines ``k`` calls read (``module_reads.ModuleRead`` by name;
    callees whose effects have no blockers: they change none) that ``k`` does not name
    itself: a hybrid port's nests pass them to the device functions they call, and its
    harness sets them (``harness.members``)."""
    if calls is None:
        return {}
    own = {a.name for a in k.args} | set(k.locals) | set(k.module_vars) | set(k.host_vars)
    out: dict = {}
    for name in dict.fromkeys(k.calls):
        eff = calls.effects(k, name)
        if eff.translatable:
            for r in eff.module_reads:
                if r.name not in own:
                    out.setdefault(r.name, r)
    return out


def module_array_bounds(k: ir.Kernel, env: dict, calls=None, reads: Optional[dict] = None) -> dict[str, list]:
    """access_bounds of each allocatable module array the kernel uses (a hybrid port's
    harness allocates them): the bounds may name the module scalars the kernel reads and
    never changes itself, which the harness sets before the call (SNAP's ``ib`` passed
    whole to a helper declaring it ``cb(lc+1)`` with ``lc = nx``: ``nx + 1``). ``reads``
    (:func:`callee_module_reads`): those its callees read, bounded by the subscripts of
    the routine reading them where they name only such module scalars."""
    reads = reads or {}
    arrays = [v for v in k.module_vars.values() if v.allocatable and v.dims]
    if not arrays and not any(r.var.allocatable and r.var.dims for r in reads.values()):
        return {}
    scalars = {n: v for n, v in list(k.module_vars.items()) + [(n, r.var) for n, r in reads.items()]
               if not v.dims and v.parameter is None and v.ftype.base == "integer"}
    fixed = set(scalars) - changed_module_scalars(k, calls)
    finder = BoundsFinder(k, env, calls)
    finder.args |= fixed & set(k.module_vars)
    out = {v.name: finder.bounds(v) for v in arrays}
    for n, r in reads.items():
        if r.var.allocatable and r.var.dims and r.routine is not None:
            out[n] = _owner_bounds(r, fixed, scalars, calls)
    return out


def _owner_bounds(r, fixed: set, scalars: dict, calls) -> list:
    """The subscripts the routine reading module array ``r`` takes, where they name only
    the same module scalars of ``fixed`` (else None for that dimension)."""
    owner = r.routine
    env = {n: v.parameter for n, v in owner.locals.items() if v.parameter is not None}
    same = {n for n in fixed if n in owner.module_vars and owner.module_vars[n].module == scalars[n].module}
    finder = BoundsFinder(owner, env, calls)
    finder.args = set(same)
    out = []
    for b in finder.bounds(r.var):
        names = set() if b is None else {x.name for e in b for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
        out.append(b if b is not None and names <= same else None)
    return out


def changed_module_scalars(k: ir.Kernel, calls) -> set[str]:
    """Names the kernel may change (``accesses.scalar_writes`` with its calls' effects, and
    what statements the IR does not model read into); every module variable when a callee
    may touch module state (a callee that is not a routine of the program free of side
    effects; any callee without ``calls``) or a statement may write anything."""
    everything = set(k.module_vars) | set(k.callee_module_reads)
    if calls is None:
        return everything
    read_into: set[str] = set()
    for s in ir.walk(k.body):
        if isinstance(s, ir.Unsupported):
            if s.writes is None:
                return everything
            read_into |= set(s.writes)
        called = [s.name] if isinstance(s, ir.CallStmt) else []
        called += [x.name for e in stmt_exprs(s) for x in ir.walk_expr(e) if isinstance(x, ir.FuncCall) and not x.intrinsic]
        if not all(calls.effects(k, c).translatable for c in called):
            return everything
    arrays = {n for n, v in {**k.locals, **k.module_vars}.items() if v.dims} | {a.name for a in k.args if a.dims}
    return set(scalar_writes(k.body, arrays, CallSites(k, calls))) | read_into


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
        a.declared_one = True  # gfortran -fcheck=bounds still sees the (1) (harness.checked)
        return
