"""Loop dependence analysis: which DO loops may run their iterations in parallel.

Pure functions over the IR. For every ``Do`` of a kernel, ``loop_info`` computes an
``ir.LoopInfo``: the verdict, the trip count, reductions (scalar and array-element),
privatisable scalars, indirect and scattered arrays, calls, early exits and, when the
loop is not parallel, the reasons as ``Diagnostic(code, message, line)``.

The accesses a loop makes are :mod:`.accesses`; the array test (exact for subscripts affine
in the loop indices: same coefficient, constant distance; different coefficients, GCD
test; conservative otherwise) is :mod:`.arraytest`.

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

import dataclasses
from dataclasses import dataclass
from typing import Optional

from . import affine, ir
from .affine import trip_count
from .ir import stmt_exprs
from .accesses import Access, CallSites, array_accesses, scalar_writes
from .arraytest import LoopScope, join_conditions, never_same, pair_test
from .dataflow import FlowGraph, IterationValues, exposed_reads
from .facts import Facts, guard_facts, loop_var_facts, path_to
from .inductions import find_inductions, induction_substitution
from . import interchange, sink
from .lastvalue import last_private_scalar
from .privatize import last_private_array, privatizable_array, unmodelled_reader, write_through_boxes
from .reductions import (constant_section, index_loc_idiom, mentions, minmax_idiom, per_thread, reduction_op,
                         same_expr)
from .render import expr_str

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


def _subscript_text(subs: Optional[list[ir.Expr]]) -> str:
    from .render import expr_str
    if subs is None:
        return "(:)"
    return "(" + ", ".join(expr_str(x) for x in subs) + ")"


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
    cond = entry_names(join_conditions("and", [c for c, _, _ in conditional]))
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
    env = k.constants()
    shared = set(k.module_vars) | set(k.host_vars) | {n for n, v in k.locals.items() if v.common is not None or v.save}
    sites = CallSites(k, calls) if calls is not None else None
    outs = sites.outs() if sites is not None else None
    flow = FlowGraph(k.body, live_at_end=globals_, globals_=shared, outs=outs, consts=env)
    return Context(arrays, globals_, env, flow, sites)


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
    exposed = set(exposed_reads(loop.body, outs=ctx.outs, consts=ctx.env)) - ctx.arrays - {v}
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
    subst_of = induction_substitution(loop, inductions, ctx)

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

    # the index of the first minimum (maximum) of an array the loop does not change
    for s in ir.walk(loop.body):
        il = index_loc_idiom(s, v)
        if il is None or il[0] in handled or _other_uses(loop.body, il[0], s) or _array_written(loop.body, il[2]):
            continue
        m, op, arr = il
        reasons.append(ir.Diagnostic("loc-reduction", f"{op}loc-style search: {m} is the index of the first "
                                     f"{op}imum of {arr} (line {s.line}): needs a MaxLoc/MinLoc reducer", s.line))
        handled.add(m)

    for name in sorted(variant - handled, key=lambda n: (writes[n], n)):  # by name on one line: the same code every run
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
        if (name in exposed or live_after(loop, name, ctx)) and last_private_scalar(name, loop, ctx.sites):
            info.private.append(name)  # its own copy per iteration; the last one hands it on
            info.last_private.append(name)
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
    accesses = _through_temporaries(loop, array_accesses(loop.body, ctx.arrays, ctx.sites, _call_facts(loop, entry, ctx)),
                                    variant, ctx.flow.globals_)
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
            if all(not pair_test(w, a, scope).carried for w in ws for a in accs):
                continue  # another dimension keeps iterations apart: cs(k(j), i) in the loop over i
            if _is_update(accs):
                info.scattered.append(name)
                reasons.append(ir.Diagnostic("scattered-update", f"{name}{_subscript_text(ws[0].subs)} is updated through "
                                             f"an index array in the loop over {v} (line {ws[0].line}): iterations may "
                                             "hit the same element (atomics make it parallel)", ws[0].line))
            else:
                reasons.append(ir.Diagnostic("indirect-write", f"{name}{_subscript_text(ws[0].subs)} is written through an "
                                             f"index array in the loop over {v} (line {ws[0].line})", ws[0].line))
            continue
        # a local scratch array every iteration fills before reading it (stencil(1:4) in
        # miniWeather's flux loops): private to each iteration, not a dependence
        if privatizable_array(name, loop, kernel, ctx.env, ctx.sites):
            info.private.append(name)
            info.dead_after += [] if unmodelled_reader(name, loop, kernel) else [name]  # later nests fill it first
            continue
        if last_private_array(name, loop, kernel, ctx.env, ctx.sites):  # NPB's COMMON scratch: the last iteration writes it
            info.private.append(name)
            info.last_private.append(name)
            continue
        boxes = write_through_boxes(name, loop, kernel, ctx.env, ctx.sites)
        if boxes:  # the same, its reads outside what the iteration wrote seeing the array before the loop
            info.private.append(name)
            info.last_private.append(name)
            info.scratch_boxes[name] = boxes
            continue
        # accumulation into an element invariant in the loop
        red = _array_reduction(accs, v, inner_vars, variant, ctx, inner_loops, loop)
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


def _through_temporaries(loop: ir.Do, accesses: list[Access], variant: set[str], globals_=()) -> list[Access]:
    """Subscripts through a scalar the iteration computes first (``index = off + j +
    k*depth``, then ``buf(index)``) spelled as the value it surely holds there
    (``dataflow.IterationValues``), so the array test sees the expression itself."""
    if not variant:
        return accesses
    values = None
    out = []
    for a in accesses:
        if a.subs is not None and any(isinstance(x, ir.Name) and x.name in variant
                                      for sub in a.subs for x in ir.walk_expr(sub)):
            values = values or IterationValues(loop.body, globals_)
            a = dataclasses.replace(a, subs=[values.substituted(x, a.stmt) for x in a.subs])
        out.append(a)
    return out


def _touches(s: ir.Stmt, name: str) -> bool:
    if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
        return True
    return any(mentions(e, name) for e in stmt_exprs(s))


def _mentions_direct(s: ir.Stmt, name: str) -> bool:
    return any(mentions(e, name) for e in stmt_exprs(s))


def _other_uses(body: list[ir.Stmt], name: str, idiom: ir.Stmt) -> bool:
    inside = {id(x) for x in ir.walk([idiom])}
    for s in ir.walk(body):
        if id(s) in inside:
            continue
        if _touches(s, name):
            return True
    return False


def _array_written(body: list[ir.Stmt], name: str) -> bool:
    """Is array ``name`` assigned in ``body``, or passed whole or by element to a call?"""
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.ArrayRef) and s.target.name == name:
            return True
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name == name:
            return True
        if isinstance(s, ir.CallStmt) and any(mentions(a, name) for a in s.args):
            return True
        if isinstance(s, ir.Unsupported):
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


def _array_reduction(accs: list[Access], v: str, inner: set[str], variant: set[str], ctx: Context,
                     inner_loops=(), loop: Optional[ir.Do] = None):
    """An element invariant in the loop, or a constant section over inner loops
    (reductions.constant_section), updated only by reduction statements of one operator."""
    ws = [a for a in accs if a.write]
    first = ws[0]
    if first.subs is None:
        return None
    if any(isinstance(sub, ir.Slice) for sub in first.subs):
        return None
    names = [{x.name for x in ir.walk_expr(sub) if isinstance(x, (ir.Name, ir.ArrayRef))} for sub in first.subs]
    section = None
    if any(nm & inner for nm in names):  # a section, over the inner loops around the updates
        at = {id(a.stmt) for a in accs}
        around = [d for d in inner_loops if isinstance(d, ir.Do) and any(id(x) in at for x in ir.walk(d.body))]
        section = constant_section(first.subs, {d.var: [x for x in around if x.var == d.var] for d in around},
                                   ctx.env)
        if section is None:
            return None
    for sub, nm in zip(first.subs, names):
        if v in nm or (nm - inner) & variant or any(isinstance(x, ir.ArrayRef) for x in ir.walk_expr(sub)):
            return None
    ops = set()
    loops = [loop, *[d for d in inner_loops if isinstance(d, ir.Do)]] if loop is not None and section is None else None
    # x(j), j < i, read while x(i) is summed (a triangular solve's row)
    apart = (lambda r: never_same(getattr(r, "subscripts", None) or r.subs, first.subs, loops, ctx.env)) if loops \
        else (lambda r: False)
    for a in accs:
        if not a.write and apart(a):
            continue
        if a.subs is None or len(a.subs) != len(first.subs) or not all(same_expr(x, y) for x, y in zip(a.subs, first.subs)):
            return None
        s = a.stmt
        if not isinstance(s, ir.Assign) or not isinstance(s.target, ir.ArrayRef) or not same_expr(s.target, first.ref):
            return None
        op = reduction_op(s.target, s.value, apart)
        if op is None:
            return None
        ops.add(op)
    if len(ops) != 1:
        return None
    return ir.Reduction(first.name, ops.pop(), first.line, target=first.ref, section=section)


# --------------------------------------------------------------------------- whole kernel


def _band(loop: ir.Do) -> int:
    if not loop.info.parallel:
        return 0
    body = [s for s in loop.body if not isinstance(s, ir.Continue)]
    if len(body) == 1 and isinstance(body[0], ir.Do):
        inner = body[0]
        bound_names = set()
        for e in (inner.start, inner.end, inner.step):
            if e is not None:
                bound_names |= {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}
        outer_scalars = {r.var for r in loop.info.reductions if per_thread(r)}
        inner_ok = inner.info.parallel and all(per_thread(r) and r.var in outer_scalars for r in inner.info.reductions) \
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
            if (eff.common_reads or eff.module_reads) and nargs < len(eff.dummies):  # not yet passed
                why = _shared_reads_blocked(eff, body, ctx)
                if why:
                    return name, s.line, why
    return None


def _shared_reads_blocked(eff, body: list[ir.Stmt], ctx: Context) -> str:
    """Why a callee reading COMMON members or module variables cannot be a device function
    in this loop: the caller must declare the blocks as the callee does (it passes its own
    members: ``pass_common_reads``) and the loop must not write what the callee reads (the
    read would depend on the iteration order). A call that already passes them (an
    extended call, an outlined nest's) is an ordinary one."""
    from .effects import same_common

    caller = ctx.sites.kernel
    for b in dict.fromkeys(b for b, _m in eff.common_reads):
        why = same_common(caller, eff.callee, b)
        if why:
            return f"{eff.name} ({eff.where}) reads COMMON /{b}/, and {why}"
    read = {m: f"COMMON member {m}" for _b, m in eff.common_reads}
    for r in eff.module_reads:  # the caller's own name for the same module variable
        v = caller.module_vars.get(r.name)
        if v is not None and v.module == r.module:
            read[r.name] = f"module variable {r.name}"
    written = set(scalar_writes(body, ctx.arrays, ctx.sites))
    written |= {a.name for a in array_accesses(body, ctx.arrays, ctx.sites) if a.write}
    hit = sorted(set(read) & written)
    if hit:
        return f"{eff.name} ({eff.where}) reads {read[hit[0]]}, which the loop writes"
    return ""


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
    (without it, or for any other callee, a call keeps its loop serial). A serial loop
    around one parallel loop is then interchanged where the turned nest is parallel
    (``interchange``), and a parallel column loop updating its rows through loops over them
    sunk into a band where the rows stay independent (``sink``)."""
    ctx = kernel_context(k, calls)
    _visit(k.body, [], k, ctx)
    rejected: set = set()
    turned: list = []  # (nest, line): a later visit of the whole body makes fresh infos; marks stay
    while True:
        cand = next(((body, idx, do) for body, idx, do in interchange.candidates(k.body, ctx.arrays)
                     if (do.line, do.var) not in rejected), None)
        if cand is None:
            break
        body, idx, outer = cand
        band = interchange.split(outer, ctx.arrays)[1]
        new = interchange.build(outer, ctx.arrays)
        body[idx] = new
        trial = kernel_context(k, calls)
        _visit([new], interchange.enclosing(k.body, new), k, trial)
        if new.info.parallel and new.info.tightly_nested_parallel >= len(band):  # as much parallelism, one launch
            ctx = trial
            _visit(k.body, [], k, ctx)  # the loops around it see the new nest
            turned.append((new, band[0].line))
            for nest, line in turned:  # the mark picks a nest's host form (TeaLeaf's block solve lost it)
                nest.info.interchanged = line
        else:
            body[idx] = outer
            rejected.add((outer.line, outer.var))
    sink.apply(k, lambda: kernel_context(k, calls), _visit)
    for nest, line in turned:
        nest.info.interchanged = line


def _visit(body: list[ir.Stmt], outer: list[ir.Do], k: ir.Kernel, ctx: Context) -> None:
    for s in body:
        if isinstance(s, ir.Do):
            _visit(s.body, outer + [s], k, ctx)
            s.info = loop_info(s, k, ctx, outer)
            s.info.tightly_nested_parallel = _band(s)
        elif isinstance(s, ir.DoWhile):
            _visit(s.body, outer, k, ctx)
        else:
            _visit(ir.children(s), outer, k, ctx)
