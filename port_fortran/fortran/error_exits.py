"""Error exits of a callee: branches that end the program (pure over the IR).

A helper called inside a loop often checks its arguments first and, when they are wrong,
prints a message and stops -- directly (``STOP``, ``CALL EXIT``) or through a routine that
never returns (Nekbone's ``exitt``, BLAS' ``XERBLA``):

    IF (NP.GT.NPMAX) THEN
       WRITE (6,*) 'Too large polynomial degree in HGJ'
       call exitt
    ENDIF

Such a branch changes nothing the caller sees unless the program ends. In a device
function (a callee run inside a kernel) it cannot print, but it can end the program:
:func:`without_error_exits` gives a copy of the routine in which each such branch is one
:class:`ErrorStop` (``pf::error_stop``: ``Kokkos::abort`` naming the routine and line), so
the I/O, the COMMON the stopping routine touches and the call itself are no reasons to keep
the loop serial. The routine's own port (full or hybrid) is untouched: there the branch
stays as written (kept in Fortran).

A branch counts when its statements run straight (no jump, RETURN, DO WHILE, or EXIT out
of it before it ends; counted DO loops and IFs that stay inside it are straight) into
``STOP``, ``CALL EXIT``/``CALL ABORT`` or a call to a routine that never returns
(:func:`never_returns`: its own statements run straight into one of those)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import ir
from .common_use import Resolve, call_sites, promoted

_ENDS = ("exit", "abort")  # GNU intrinsic subroutines that end the program
_JUMPS = (ir.Return, ir.Goto, ir.ComputedGoto, ir.ArithmeticIf, ir.DoWhile)


@dataclass
class ErrorStop(ir.Stmt):
    """Where the original ends the program on an error path (its messages not printed):
    the device function stops the program with ``message``."""

    message: str = ""


def _terminates(s: ir.Stmt, k: ir.Kernel, resolve: Optional[Resolve], memo: dict) -> bool:
    if isinstance(s, ir.Stop):
        return True
    if isinstance(s, ir.CallStmt):
        callee = resolve(k, s.name) if resolve is not None else None
        if callee is None:
            return s.name in _ENDS  # the intrinsic (no routine of the program by that name)
        return never_returns(callee, resolve, memo)
    return False


def _straight(stmts: list[ir.Stmt], in_loop: bool = False) -> bool:
    """Whether control leaves ``stmts`` only at their end (or where the program ends): no
    jump, RETURN, DO WHILE or I/O that may jump (ERR=, END=) in them, and EXIT/CYCLE only
    of a DO loop inside them (a counted DO always ends: WHERE of the Livermore loops prints
    its banner 200 times in one before its STOP)."""
    for x in stmts:
        if isinstance(x, _JUMPS) or (isinstance(x, ir.Unsupported) and x.targets):
            return False
        if isinstance(x, (ir.Exit, ir.Cycle)) and (not in_loop or x.construct_name):
            return False
        if not _straight(ir.children(x), in_loop or isinstance(x, ir.Do)):
            return False
    return True


def _runs_into_end(body: list[ir.Stmt], k: ir.Kernel, resolve: Optional[Resolve], memo: dict) -> bool:
    """The statements run straight into one that ends the program."""
    for s in body:
        if _terminates(s, k, resolve, memo):
            return True
        if not _straight([s]):
            return False  # a jump, or I/O that may jump (ERR=, END=), before the end
    return False


def never_returns(k: ir.Kernel, resolve: Optional[Resolve], _memo: Optional[dict] = None) -> bool:
    """Whether every call of ``k`` ends the program (recursion: no)."""
    memo = _memo if _memo is not None else {}
    key = (str(k.file), k.name)
    if key not in memo:
        memo[key] = False
        memo[key] = _runs_into_end(k.body, k, resolve, memo)
    return memo[key]


def _lines(stmts: list[ir.Stmt]) -> set[int]:
    return {s.line for s in ir.walk(stmts)}


def without_error_exits(k: ir.Kernel, resolve: Optional[Resolve]) -> ir.Kernel:
    """A copy of ``k`` whose error exits are :class:`ErrorStop` statements (``k`` itself
    when it has none): its ``unsupported`` and ``calls`` lose what only those branches held."""
    memo: dict = {}
    dropped: list[list[ir.Stmt]] = []

    def rewrite(body: list[ir.Stmt]) -> list[ir.Stmt]:
        out = []
        for s in body:
            if isinstance(s, ir.If):
                branches = []
                for cond, b in s.branches:
                    if _runs_into_end(b, k, resolve, memo):
                        dropped.append(b)
                        b = [_stop(k, b)]
                    else:
                        b = rewrite(b)
                    branches.append((cond, b))
                els = s.else_body
                if els and _runs_into_end(els, k, resolve, memo):
                    dropped.append(els)
                    els = [_stop(k, els)]
                elif els:
                    els = rewrite(els)
                s = copy.copy(s)
                s.branches, s.else_body = branches, els
            elif isinstance(s, (ir.Do, ir.DoWhile)):
                s = copy.copy(s)
                s.body = rewrite(s.body)
            out.append(s)
        return out

    body = rewrite(k.body)
    if not dropped:
        return k
    gone = set().union(*(_lines(b) for b in dropped))
    out = copy.copy(k)
    out.body = body
    out.unsupported = [u for u in k.unsupported if u.line not in gone]
    kept = {name for name, _a, _l in call_sites(body)}
    out.calls = [c for c in k.calls if c in kept]
    return out


def _stop(k: ir.Kernel, branch: list[ir.Stmt]) -> ErrorStop:
    line = branch[0].line if branch else k.line_start
    return ErrorStop(line=line, message=f"{k.name} ({Path(k.file).name}:{line}): error exit of the original "
                                        "(it prints a message and ends the program here)")


def exit_conditions(k: ir.Kernel, resolve: Optional[Resolve],
                    _memo: Optional[dict] = None) -> list[tuple[ir.Expr, int]]:
    """The argument checks of ``k``'s preamble (the IF statements before its first other
    statement) whose first branch is an error exit: (condition, line), each condition in
    ``k``'s dummies, its named constants and the locals the preamble sets from them
    replaced by their values (``NPMAX = NZD`` with ``NZD = 84``: ``np > 84``). What the
    inputs of a routine calling ``k`` must not meet (``harness.constraints``: ``accepts``)."""
    from .rewrite import replace_names

    memo = _memo if _memo is not None else {}
    table: dict[str, ir.Expr] = {n: ir.Literal(v, str(v), ftype=ir.INTEGER) for n, v in k.constants().items()
                                 if isinstance(v, int) and not isinstance(v, bool)}
    out = []
    for s in k.body:
        if isinstance(s, ir.Continue):
            continue
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name in k.locals:
            value = replace_names(s.value, table)
            if not any(isinstance(x, (ir.Name, ir.ArrayRef)) or (isinstance(x, ir.FuncCall) and not x.intrinsic)
                       for x in ir.walk_expr(value)):
                table[s.target.name] = value
                continue
            table.pop(s.target.name, None)
            continue
        if not isinstance(s, ir.If):
            break
        cond, branch = s.branches[0]
        if _runs_into_end(branch, k, resolve, memo):
            out.append((replace_names(cond, table), s.line))
        for x in ir.walk([s]):  # what the IF's branches assign has no known value after it
            if isinstance(x, ir.Assign) and isinstance(x.target, ir.Name):
                table.pop(x.target.name, None)
            elif isinstance(x, ir.CallStmt):
                for a in x.args:
                    if isinstance(a, ir.Name):
                        table.pop(a.name, None)
    return out


def as_device_callee(k: ir.Kernel, resolve: Optional[Resolve]) -> ir.Kernel:
    """The routine as a kernel calls it from the device: its error exits stopping the
    program, the COMMON members it only reads as trailing arguments
    (``common_use.promoted``). One answer for the translator's device functions and the
    symbol table's view of the callee (their argument counts must agree)."""
    return promoted(without_error_exits(k, resolve), resolve)
