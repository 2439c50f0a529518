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


#: (caller, called name) -> the callee's IR, or None when no routine of the program
#: defines it
Resolve = Callable[[ir.Kernel, str], Optional[ir.Kernel]]


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
    for _name, args, _line in call_sites(k.body):
        out |= {a.name for a in args if isinstance(a, (ir.Name, ir.ArrayRef))}
    return out


def call_sites(body: list[ir.Stmt]):
    """(called name, actual arguments, line) of every call in the statements: CALLs and
    references to functions that are not intrinsic."""
    for s in ir.walk(body):
        if isinstance(s, ir.CallStmt):
            yield s.name, s.args, s.line
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    yield x.name, x.args, s.line


def writes(k: ir.Kernel, names: set[str], resolve: Optional[Resolve] = None) -> dict[str, tuple[int, str]]:
    """The names of ``names`` the routine may change, each with the first line and how
    (assigned, a DO variable, read into, passed to a dummy that is not intent in -- the
    intents the program refines over the tree; a name passed to a routine ``resolve`` does
    not find counts as changed)."""
    out: dict[str, tuple[int, str]] = {}

    def note(n: str, line: int, how: str) -> None:
        if n in names and n not in out:
            out[n] = (line, how)

    for s in ir.walk(k.body):
        if isinstance(s, ir.Assign):
            note(s.target.name, s.line, "assigned")
        elif isinstance(s, ir.Do):
            note(s.var, s.line, "a DO variable")
        elif isinstance(s, ir.Unsupported):
            for n in (names if s.writes is None else s.writes):
                note(n, s.line, f"a statement the front end keeps as written ({s.construct}) may change it")
    for name, args, line in call_sites(k.body):
        callee = resolve(k, name) if resolve is not None else None
        for q, a in enumerate(args):
            if not isinstance(a, (ir.Name, ir.ArrayRef)) or a.name not in names:
                continue
            dummy = callee.args[q] if callee is not None and q < len(callee.args) else None
            if dummy is None or dummy.intent != "in":
                note(a.name, line, f"passed to {name}, which may change it")
    return out


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
    if writes(k, {m for _b, m in members}, resolve):
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
