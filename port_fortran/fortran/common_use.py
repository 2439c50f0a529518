"""How a routine uses COMMON (pure over the IR): the names it references (declaration
bounds included), whether it only reads the COMMON members it names, and the copy of a
routine that only reads them taking those members as extra arguments (what its device
function takes; the calls pass them: ``effects.pass_common_reads``)."""
from __future__ import annotations

import copy
from typing import Callable, Optional

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


Resolve = Callable[[ir.Kernel, str], Optional[ir.Kernel]]


def names_written(k: ir.Kernel, resolve: Optional[Resolve] = None,
                  _memo: Optional[dict] = None) -> Optional[set[str]]:
    """Names the routine's statements may change: assigned, looped over, read into, or
    passed to a call or a function that may write its argument; None when a statement
    the IR does not model may write anything. Without ``resolve`` (caller, name) -> the
    callee's IR, every argument of a call counts as written; with it, only those the
    callee may write (:func:`dummy_written`, through its own calls too)."""
    memo = _memo if _memo is not None else {}
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
        calls = [(s.name, s.args)] if isinstance(s, ir.CallStmt) else []
        for e in ir.stmt_exprs(s):
            calls += [(x.name, x.args) for x in ir.walk_expr(e) if isinstance(x, ir.FuncCall) and not x.intrinsic]
        for name, args in calls:
            callee = resolve(k, name) if resolve is not None else None
            out |= {a.name for q, a in enumerate(args) if isinstance(a, (ir.Name, ir.ArrayRef))
                    and (callee is None or dummy_written(callee, q, resolve, memo))}
    return out


_BUSY = object()  # a routine whose writes are being found (recursion reaches it again)


def dummy_written(callee: ir.Kernel, q: int, resolve: Resolve, _memo: Optional[dict] = None) -> bool:
    """Whether ``callee`` may change its ``q``-th dummy (directly or through its own calls);
    True when that cannot be told (no such dummy, recursion, a statement the IR does not
    model). An INTENT(IN) dummy is never changed (the compiler holds the routine to it).
    ``_memo``: each routine's written names, found once per question."""
    if q >= len(callee.args):
        return True
    a = callee.args[q]
    if a.intent == "in" and getattr(a, "intent_declared", False):
        return False
    memo = _memo if _memo is not None else {}
    key = (str(callee.file), callee.name, len(callee.args))
    if key not in memo:
        memo[key] = _BUSY
        memo[key] = names_written(callee, resolve, memo)
    written = memo[key]
    return written is None or written is _BUSY or a.name in written


def common_reads(k: ir.Kernel, resolve: Optional[Resolve] = None) -> Optional[list[tuple[str, str]]]:
    """The COMMON members the routine references, as (block, member) in the order the
    blocks and their members are declared, when it only reads them; None when it may
    write one (assigns it, reads into it, passes it to a call that may change it: with
    ``resolve``, the callees are asked, else every call may). A callee that only reads
    COMMON (NPB's exact_solution reads ce, Nekbone's masking nelt, Nekbone's ax_e passing
    its derivative matrices on to local_grad3) can run as a device function given those
    members as extra arguments (:func:`promoted`). Every stage must ask with the same
    ``resolve`` (the program's), or callers and device functions disagree on the arguments."""
    named = names_used(k)
    members = [(c.name, v) for c in k.commons for v in c.variables if v in named]
    if not members:
        return []
    written = names_written(k, resolve)
    if written is None or {m for _b, m in members} & written:
        return None
    return list(dict.fromkeys(members))


def promoted(k: ir.Kernel, resolve: Optional[Resolve] = None) -> ir.Kernel:
    """A copy of a routine that only reads COMMON (:func:`common_reads`) whose members are
    extra trailing arguments (intent in) instead: what its device function takes, the
    calls passing the caller's members (``effects.pass_common_reads``). The routine
    itself when it reads none."""
    reads = common_reads(k, resolve) or []
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
