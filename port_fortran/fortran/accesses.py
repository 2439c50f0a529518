"""The accesses a loop body makes, as the dependence test sees them (pure): array
references (reads and writes, with their subscripts, calls' effects counted as the ranges
the callee touches: ``effects.Calls``) and the scalars a body may assign."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import ir
from .ir import stmt_exprs


@dataclass
class Access:
    name: str
    subs: Optional[list[ir.Expr]]  # None: the whole array
    write: bool
    line: int
    stmt: ir.Stmt
    ref: Optional[ir.Expr] = None


class CallSites:
    """The effects of the calls of one kernel (``effects.Calls``), as the dependence test
    needs them: what a call reads and writes of the arrays and scalars it is passed."""

    def __init__(self, kernel: ir.Kernel, calls):
        self.kernel = kernel
        self.calls = calls
        self._cache: dict[str, object] = {}

    def effects(self, name: str):
        if name not in self._cache:
            self._cache[name] = self.calls.effects(self.kernel, name)
        return self._cache[name]

    def analysed(self, name: str, nargs: int):
        """The callee's effects when they are known for this call (a routine of the
        program, called with no more arguments than it has), else None."""
        eff = self.effects(name)
        if eff.callee is None or nargs > len(eff.dummies):
            return None
        return eff

    def written(self, name: str, nargs: int) -> Optional[set[int]]:
        """Positions the call may write (None: any)."""
        eff = self.analysed(name, nargs)
        return None if eff is None else eff.written_positions()

    def outs(self) -> dict[str, set[int]]:
        """Called name -> positions of scalar dummies the callee surely assigns first
        (the dataflow's kills)."""
        out: dict[str, set[int]] = {}
        for name in self.kernel.calls:
            eff = self.effects(name)
            if eff.callee is not None:
                out[name] = eff.assigned_positions()
        return out


def _call_accesses(name: str, args: list[ir.Expr], s: ir.Stmt, arrays: set[str], out: list[Access],
                   sites: Optional[CallSites], facts) -> set[int]:
    """Accesses of the caller's arrays passed to an analysed callee (what the callee
    touches of them); returns the ids of the actual arguments it accounted for."""
    done: set[int] = set()
    eff = sites.analysed(name, len(args)) if sites is not None else None
    if eff is None:
        return done
    for q, a in enumerate(args):
        if not isinstance(a, (ir.Name, ir.ArrayRef)) or a.name not in arrays:
            continue
        done.add(id(a))
        if isinstance(a, ir.ArrayRef):
            for sub in a.subscripts:
                _expr_reads(sub, out, s, arrays, sites, facts)
        d = eff.dummies[q]
        ref = sites.calls.actual_ref(sites.kernel, name, args, q, facts)
        if ref is None:
            continue
        subs = list(ref.subscripts) if isinstance(ref, ir.ArrayRef) else None
        if d.read:
            out.append(Access(a.name, subs, False, s.line, s, ref))
        if d.write:
            out.append(Access(a.name, subs, True, s.line, s, ref))
    return done


def _expr_reads(e: ir.Expr, out: list[Access], s: ir.Stmt, arrays: set[str], sites: Optional[CallSites] = None,
                facts=None):
    skip: set[int] = set()
    if sites is not None:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.FuncCall) and not x.intrinsic:
                skip |= _call_accesses(x.name, x.args, s, arrays, out, sites, facts)
    for x in ir.walk_expr(e):
        if id(x) in skip:
            continue
        if isinstance(x, ir.ArrayRef):
            out.append(Access(x.name, list(x.subscripts), False, s.line, s, x))
        elif isinstance(x, ir.Name) and x.name in arrays:
            out.append(Access(x.name, None, False, s.line, s, x))


def array_accesses(body: list[ir.Stmt], arrays: set[str], sites: Optional[CallSites] = None,
                   facts_at=None) -> list[Access]:
    """Reads and writes of arrays in ``body`` (nested statements included), in order.
    With ``sites`` a call to a routine of the program accesses what the callee touches of
    the arrays passed (``effects.Calls.actual_ref``; ``facts_at(statement)``: the facts
    that hold there); any other call reads and writes the whole arrays it is passed."""
    out: list[Access] = []
    for s in ir.walk(body):
        facts = facts_at(s) if facts_at is not None and sites is not None else None
        if isinstance(s, ir.Assign):
            t = s.target
            if isinstance(t, ir.ArrayRef):
                for sub in t.subscripts:
                    _expr_reads(sub, out, s, arrays, sites, facts)
                _expr_reads(s.value, out, s, arrays, sites, facts)
                out.append(Access(t.name, list(t.subscripts), True, s.line, s, t))
            else:
                _expr_reads(s.value, out, s, arrays, sites, facts)
                if t.name in arrays:
                    out.append(Access(t.name, None, True, s.line, s, t))
        elif isinstance(s, ir.CallStmt):
            done = _call_accesses(s.name, s.args, s, arrays, out, sites, facts)
            for a in s.args:
                if id(a) in done:
                    continue
                _expr_reads(a, out, s, arrays, sites, facts)
                if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name in arrays:
                    out.append(Access(a.name, None, True, s.line, s, a))
        else:
            for e in stmt_exprs(s):
                _expr_reads(e, out, s, arrays, sites, facts)
    return out


def scalar_writes(body: list[ir.Stmt], arrays: set[str], sites: Optional[CallSites] = None) -> dict[str, int]:
    """Scalars assigned in ``body`` (name -> first line); DO variables of inner loops too,
    and scalars passed to CALLs (they may be written; with ``sites``, those passed to
    dummies an analysed callee writes, also through user functions)."""
    out: dict[str, int] = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name not in arrays:
            out.setdefault(s.target.name, s.line)
        elif isinstance(s, ir.Do):
            out.setdefault(s.var, s.line)
        elif isinstance(s, ir.CallStmt):
            w = sites.written(s.name, len(s.args)) if sites is not None else None
            for q, a in enumerate(s.args):
                if isinstance(a, ir.Name) and a.name not in arrays and (w is None or q in w):
                    out.setdefault(a.name, s.line)
        if sites is not None:
            for e in stmt_exprs(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.FuncCall) and not x.intrinsic:
                        w = sites.written(x.name, len(x.args)) or set()
                        for q, a in enumerate(x.args):
                            if q in w and isinstance(a, ir.Name) and a.name not in arrays:
                                out.setdefault(a.name, s.line)
    return out


def direct_actuals(s: ir.Stmt):
    """(called name, its actual arguments, position) for every actual argument of the
    statement's calls (the CALL itself and user functions in its expressions) that is a
    variable or an array element (what the callee may read or write in place)."""
    if isinstance(s, ir.CallStmt):
        for q, a in enumerate(s.args):
            if isinstance(a, (ir.Name, ir.ArrayRef)):
                yield s.name, s.args, q
    for e in ir.stmt_exprs(s):
        for x in ir.walk_expr(e):
            if isinstance(x, ir.FuncCall) and not x.intrinsic:
                for q, a in enumerate(x.args):
                    if isinstance(a, (ir.Name, ir.ArrayRef)):
                        yield x.name, x.args, q
