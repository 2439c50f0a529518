"""How a routine uses COMMON (pure over the IR): the names it references (declaration
bounds included), whether it only reads the COMMON members it names, and the copy of a
routine that only reads them taking those members as extra arguments (what its device
function takes; the calls pass them: ``effects.pass_common_reads``)."""
from __future__ import annotations

import copy
from typing import Optional

from . import ir
from .stmts import referenced_names


def names_used(k: ir.Kernel) -> set[str]:
    """Every name the routine's statements reference (read, write, pass, loop over) or
    its arguments' and locals' bounds read."""
    out = set(referenced_names(k.body))
    for v in list(k.args) + list(k.locals.values()):
        for d in getattr(v, "dims", None) or []:
            for e in (d.lower, d.upper):
                if e is not None:
                    out |= {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Name)}
    return out


def names_written(k: ir.Kernel) -> Optional[set[str]]:
    """Names the routine's statements may change: assigned, looped over, read into, or
    passed to a call or a function (which may write its argument); None when a statement
    the IR does not model may write anything."""
    out: set[str] = set()
    for s in ir.walk(k.body):
        if isinstance(s, ir.Assign):
            out.add(s.target.name)
        elif isinstance(s, ir.Do):
            out.add(s.var)
        elif isinstance(s, ir.Unsupported):
            if s.writes is None:
                return None
            out |= set(s.writes)
        calls = [s.args] if isinstance(s, ir.CallStmt) else []
        for e in ir.stmt_exprs(s):
            calls += [x.args for x in ir.walk_expr(e) if isinstance(x, ir.FuncCall) and not x.intrinsic]
        for args in calls:
            out |= {a.name for a in args if isinstance(a, (ir.Name, ir.ArrayRef))}
    return out


def common_reads(k: ir.Kernel) -> Optional[list[tuple[str, str]]]:
    """The COMMON members the routine references, as (block, member) in the order the
    blocks and their members are declared, when it only reads them; None when it may
    write one (assigns it, passes it to a call, reads into it). A callee that only reads
    COMMON (NPB's exact_solution reads ce, Nekbone's masking nelt) can run as a device
    function given those members as extra arguments (:func:`promoted`)."""
    named = names_used(k)
    members = [(c.name, v) for c in k.commons for v in c.variables if v in named]
    if not members:
        return []
    written = names_written(k)
    if written is None or {m for _b, m in members} & written:
        return None
    return list(dict.fromkeys(members))


def promoted(k: ir.Kernel) -> ir.Kernel:
    """A copy of a routine that only reads COMMON (:func:`common_reads`) whose members are
    extra trailing arguments (intent in) instead: what its device function takes, the
    calls passing the caller's members (``effects.pass_common_reads``). The routine
    itself when it reads none."""
    reads = common_reads(k) or []
    if not reads:
        return k
    out = copy.copy(k)
    out.args = list(k.args)
    out.locals = dict(k.locals)
    blocks = {b for b, _m in reads}
    out.commons = [c for c in k.commons if c.name not in blocks]
    for _b, m in reads:
        v = out.locals.pop(m)
        out.args.append(ir.Argument(m, v.ftype, list(v.dims), line=v.line, position=len(out.args), intent="in",
                                    intent_declared=True))
    for b in blocks:
        for c in k.commons:
            if c.name == b:
                for v in c.variables:
                    out.locals.pop(v, None)
    return out
