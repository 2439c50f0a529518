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
    inputs of a routine calling ``k`` must not meet (``harness.constraints``: ``accepts``).

    A check may raise a flag first and stop on the flag (:class:`_Flags`): LAPACK's
    ``INFO = 0``, ``IF (M.LT.0) THEN INFO = -1 ELSE IF ...``, ``IF (INFO.NE.0) CALL XERBLA``,
    or the Livermore loops' WATCH (``IE(k) = 0`` in a loop, ``IF (Nruns.GT.8) IE(4) = 4``,
    ``ierr = ierr + IE(k)`` in a loop, ``IF (ierr.NE.0) ... CALL WHERE``): the check's
    condition is then the conditions that raise the flag, or'ed."""
    from .rewrite import replace_names

    memo = _memo if _memo is not None else {}
    table: dict[str, ir.Expr] = {n: ir.Literal(v, str(v), ftype=ir.INTEGER) for n, v in k.constants().items()
                                 if isinstance(v, int) and not isinstance(v, bool)}
    flags = _Flags(k, table)
    out = []
    for s in k.body:
        if isinstance(s, ir.Continue):
            continue
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and (
                s.target.name in k.locals or (flags.scalar_dummy(s.target.name) and _int_literal(s.value) == 0)):
            value = replace_names(s.value, table)
            flags.assigned(s.target.name, value)
            if not any(isinstance(x, (ir.Name, ir.ArrayRef)) or (isinstance(x, ir.FuncCall) and not x.intrinsic)
                       for x in ir.walk_expr(value)):
                table[s.target.name] = value
                continue
            table.pop(s.target.name, None)
            continue
        if isinstance(s, ir.Do) and flags.loop(s):
            continue
        if not isinstance(s, ir.If):
            break
        cond, branch = s.branches[0]
        if _runs_into_end(branch, k, resolve, memo):
            raised = flags.raised(cond)
            cond = raised if raised is not None else replace_names(cond, table)
            if not any(isinstance(x, ir.Name) and flags.scalar_dummy(x.name) and x.name in flags.set_once
                       for x in ir.walk_expr(cond)):  # not a dummy's entry value any more
                out.append((cond, s.line))
        elif flags.raise_in(s):
            continue
        for x in ir.walk([s]):  # what the IF's branches assign has no known value after it
            if isinstance(x, ir.Assign):
                table.pop(x.target.name, None)
                flags.drop(x.target.name, assigned=True)
            elif isinstance(x, ir.CallStmt):
                for a in x.args:
                    if isinstance(a, (ir.Name, ir.ArrayRef)):
                        table.pop(a.name, None)
                        flags.drop(a.name, assigned=True)
    return out


def or_parts(c: ir.Expr) -> list[ir.Expr]:
    """The parts of an or'ed condition (``a .or. b .or. c``: [a, b, c]); [c] for any other.
    A check ends the program when one part holds: each must be kept false."""
    if isinstance(c, ir.BinOp) and c.op == "or":
        return or_parts(c.left) + or_parts(c.right)
    return [c]


def _int_literal(e: ir.Expr) -> Optional[int]:
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        v = _int_literal(e.operand)
        return None if v is None else -v
    if isinstance(e, ir.Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


class _Flags:
    """Integer locals (scalars, or arrays at constant subscripts) of a preamble that start at
    0 and are raised to non-zero constants under conditions: per flag, the conditions that
    raise it and the signs of what they raise it to. A sum of flags of one sign is non-zero
    exactly when one of them is raised."""

    def __init__(self, k: ir.Kernel, table: dict):
        self.k, self.table = k, table
        self.conds: dict[str, list[ir.Expr]] = {}
        self.signs: dict[str, set[int]] = {}
        self.raised_at: dict[str, set[int]] = {}  # array flags: the subscripts raised
        self.set_once: set[str] = set()  # names the preamble assigns

    def scalar_dummy(self, name: str) -> bool:
        """An INTEGER scalar dummy: LAPACK's INFO is one (set to 0 first, its entry value unused)."""
        return any(a.name == name and not a.dims and a.ftype.base == "integer" for a in self.k.args)

    def _local_int(self, name: str, array: bool) -> bool:
        if not array and self.scalar_dummy(name):
            return True
        v = self.k.locals.get(name)
        return v is not None and v.ftype.base == "integer" and bool(v.dims) == array and v.common is None \
            and v.parameter is None and not v.save

    def drop(self, name: str, assigned: bool = False) -> None:
        if assigned:
            self.set_once.add(name)
        for d in (self.conds, self.signs, self.raised_at):
            d.pop(name, None)

    def _reset(self, name: str) -> None:
        self.conds[name], self.signs[name], self.raised_at[name] = [], set(), set()

    def assigned(self, name: str, value: ir.Expr) -> None:
        self.set_once.add(name)
        if _int_literal(value) == 0 and self._local_int(name, False):
            self._reset(name)
        else:
            self.drop(name)

    def _bounds(self, do: ir.Do) -> Optional[tuple[int, int]]:
        from .rewrite import replace_names
        try:
            lo, hi = (ir.evaluate(replace_names(e, self.table), {}) for e in (do.start, do.end))
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            return None
        ok = isinstance(lo, int) and isinstance(hi, int) and (do.step is None or _int_literal(do.step) == 1)
        return (lo, hi) if ok else None

    def loop(self, do: ir.Do) -> bool:
        """A counted loop that clears an array flag (``IE(k) = 0``) or sums one into a scalar
        flag (``ierr = ierr + IE(k)``, over every element raised); False for any other."""
        bounds = self._bounds(do)
        if len(do.body) != 1 or not isinstance(do.body[0], ir.Assign) or bounds is None:
            return False
        lo, hi = bounds
        t, v = do.body[0].target, do.body[0].value
        at = lambda e: isinstance(e, ir.ArrayRef) and len(e.subscripts) == 1 and \
            isinstance(e.subscripts[0], ir.Name) and e.subscripts[0].name == do.var  # noqa: E731
        if at(t) and _int_literal(v) == 0 and self._local_int(t.name, True):
            self._reset(t.name)
            return True
        if isinstance(t, ir.Name) and t.name in self.conds and isinstance(v, ir.BinOp) and v.op == "+":
            other = v.right if isinstance(v.left, ir.Name) and v.left.name == t.name else \
                v.left if isinstance(v.right, ir.Name) and v.right.name == t.name else None
            if other is not None and at(other) and other.name in self.conds \
                    and all(lo <= i <= hi for i in self.raised_at[other.name]):
                self.conds[t.name] += self.conds[other.name]
                self.signs[t.name] |= self.signs[other.name]
                self.table.pop(t.name, None)
                return True
        return False

    def raise_in(self, s: ir.If) -> bool:
        """An IF whose every branch only raises flags (the same ones: an ELSE IF chain
        raises them exactly when one of its conditions holds); no ELSE."""
        from .rewrite import replace_names
        raised: list[tuple[str, Optional[int], int]] = []
        targets = None
        for _cond, body in s.branches:
            mine = []
            for x in body:
                if not isinstance(x, ir.Assign) or not _int_literal(x.value):
                    return False
                t = x.target
                if isinstance(t, ir.Name) and t.name in self.conds and not self.raised_at[t.name]:
                    mine.append((t.name, None, _int_literal(x.value)))
                elif isinstance(t, ir.ArrayRef) and t.name in self.conds and len(t.subscripts) == 1 \
                        and _int_literal(replace_names(t.subscripts[0], self.table)) is not None:
                    mine.append((t.name, _int_literal(replace_names(t.subscripts[0], self.table)),
                                 _int_literal(x.value)))
                else:
                    return False
            names = {n for n, _i, _v in mine}
            if not mine or (targets is not None and names != targets):
                return False
            targets = names
            raised.append(mine)
        if s.else_body or not raised:
            return False
        for (cond, _body), mine in zip(s.branches, raised):
            for name, i, value in mine:
                self.table.pop(name, None)  # no known value after the IF
                self.conds[name].append(replace_names(cond, self.table))
                self.signs[name].add(1 if value > 0 else -1)
                if i is not None:
                    self.raised_at[name].add(i)
        return True

    def raised(self, cond: ir.Expr) -> Optional[ir.Expr]:
        """``cond`` (``ierr .NE. 0``, ``info .LT. 0``) as the conditions raising its flag, or'ed;
        None when it tests no flag that way."""
        if not isinstance(cond, ir.BinOp) or cond.op not in ("/=", ">", "<"):
            return None
        name, zero = cond.left, cond.right
        if not isinstance(name, ir.Name) or name.name not in self.conds or _int_literal(zero) != 0:
            return None
        signs, conds = self.signs[name.name], self.conds[name.name]
        wanted = {"/=": signs if len(signs) == 1 else set(), ">": {1}, "<": {-1}}[cond.op]
        if not conds or signs != wanted:
            return None
        out = conds[0]
        for c in conds[1:]:
            out = ir.BinOp("or", out, c, ftype=ir.LOGICAL)
        return out


def as_device_callee(k: ir.Kernel, resolve: Optional[Resolve]) -> ir.Kernel:
    """The routine as a kernel calls it from the device: its error exits stopping the
    program, the COMMON members it only reads as trailing arguments
    (``common_use.promoted``). One answer for the translator's device functions and the
    symbol table's view of the callee (their argument counts must agree)."""
    return promoted(without_error_exits(k, resolve), resolve)
