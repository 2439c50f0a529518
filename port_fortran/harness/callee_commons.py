"""COMMON members a routine's callees touch, in the routine's own names (pure over the IR).

A routine that declares a COMMON block hands its callees the whole block. The harness
drove only the members the routine's own statements touch (and those its calls pass to
callees that only read them, ``effects.pass_common_reads``): a callee that also writes the
block (a call counter, a trace stack: Livermore's TRACE, WATCH) got its other members as
0, so one dividing by ``nx * ny`` died of SIGFPE on every input (``original-failed``;
``tests/data/common/calleeblk.f``), and what such a callee writes is an output of the
routine that the comparison never looked at.

:func:`callee_commons` gives, for each member of a block the routine declares, whether a
routine it calls (and theirs, :data:`DEPTH` calls deep) reads it (False) or may write it
(True): the callee's member at the same offset of the block of the same name, with the same
type and shape, is the routine's member (``translate.common_blocks`` lays both out as
gfortran does). A block either side cannot lay out for sure, and members that do not line
up, are left out: they stay what they were (not driven), never guessed. The harness drives
them like the routine's own members (``members.driven_kernel``): drawn before the call,
compared after it where a callee may write them.
"""
from __future__ import annotations

import copy
from typing import Callable, Optional

from ..fortran import ir
from ..fortran.common_use import call_sites
from ..translate.common_blocks import Block, blocks
from ..translate.symbols import Refusal

DEPTH = 4  # calls followed below the routine

Resolve = Callable[[ir.Kernel, str], Optional[ir.Kernel]]
_Key = tuple  # (block name, offset, type, bounds)


def _layout(k: ir.Kernel) -> list[Block]:
    """``k``'s blocks laid out one at a time: a block that cannot be laid out for sure
    (Livermore's TRACE keeps CHARACTER names in /DEBUG/) costs only itself."""
    out: list[Block] = []
    for name in dict.fromkeys(cb.name for cb in k.commons):
        one = copy.copy(k)
        one.commons = [cb for cb in k.commons if cb.name == name]
        try:
            out += blocks(one)
        except Refusal:
            continue
    return out


def _key(block: str, m) -> _Key:
    return (block, m.offset, (m.ftype.base, m.ftype.kind, m.ftype.char_len), tuple(m.bounds))


def _touched(k: ir.Kernel, resolve: Resolve, depth: int, memo: dict, active: frozenset) -> dict[_Key, bool]:
    """Members ``k`` or its callees touch: key -> whether one may write it."""
    if (id(k), depth) in memo:
        return memo[(id(k), depth)]
    out: dict[_Key, bool] = {}
    for b in _layout(k):
        for m in b.used():
            out[_key(b.name, m)] = out.get(_key(b.name, m), False) or m.written
    if depth > 0:
        for name, _args, _line in call_sites(k.body):
            callee = resolve(k, name)
            if callee is None or callee is k or callee.name in active:
                continue
            for key, w in _touched(callee, resolve, depth - 1, memo, active | {k.name}).items():
                out[key] = out.get(key, False) or w
    memo[(id(k), depth)] = out
    return out


def callee_commons(k: ir.Kernel, resolve: Optional[Resolve], memo: Optional[dict] = None) -> dict[str, bool]:
    """{member name in ``k``: whether a callee may write it} for the members of the blocks
    ``k`` declares that its own statements do not touch but a routine it calls does (as
    the module docstring says); {} without ``resolve``, COMMON or calls."""
    if resolve is None or not k.commons or not k.calls:
        return {}
    mine = {_key(b.name, m): m for b in _layout(k) for m in b.members if not m.used}
    if not mine:
        return {}
    # what k touches itself is no key of ``mine``: only its callees' touches remain
    theirs = _touched(k, resolve, DEPTH, _memo(memo, "touched"), frozenset())
    return {mine[key].name: w for key, w in theirs.items() if key in mine}


def callee_state(k: ir.Kernel, resolve: Optional[Resolve], module_reads=()) -> ir.Kernel:
    """The kernel the harness drives (``members.driven_kernel``): ``k`` with its COMMON
    members, those only its callees touch (:func:`callee_commons`) and its module variables
    as arguments, and what its callees' checks ask of its inputs (:func:`callee_checks`)
    added to its ``accepts``. The three walk the callees once between them (one memo)."""
    from .members import driven_kernel
    memo: dict = {}
    k = callee_blocks(k, resolve, memo)
    theirs = callee_commons(k, resolve, memo) if k.commons and k.calls else {}
    return driven_kernel(k, module_reads, theirs, callee_checks(k, resolve, memo))


def _callees(k: ir.Kernel, resolve: Resolve) -> list[ir.Kernel]:
    """The routines ``k`` calls, and theirs, :data:`DEPTH` calls deep (each once, callers
    first)."""
    out: list[ir.Kernel] = []
    seen = {id(k)}
    level = [k]
    for _ in range(DEPTH + 1):
        nxt = []
        for r in level:
            for name, _args, _line in call_sites(r.body):
                c = resolve(r, name)
                if c is not None and id(c) not in seen:
                    seen.add(id(c))
                    out.append(c)
                    nxt.append(c)
        level = nxt
    return out


def callee_blocks(k: ir.Kernel, resolve: Optional[Resolve], memo: Optional[dict] = None) -> ir.Kernel:
    """``k`` (a copy) declaring the COMMON blocks it does not declare itself that the checks
    of its callees read (Livermore's SORDID calls TRACE, whose WATCH checks /ALPHA/, which
    SORDID never names: :func:`callee_checks` before the callee's members have names in
    ``k``), laid out as every callee declaring it does, its members renamed where ``k`` has
    the name (``pf_<block>_<name>``); the harness then drives the members a callee touches
    as it drives ``k``'s own blocks' (:func:`callee_commons`), so the checks can be kept
    false. Other blocks only callees declare stay as the drivers leave them (zero): drawn at
    random they would hold what no program holds (Nekbone's /nekmpi/ communicator and
    datatype codes made its MPI stand-ins copy past a scalar). A block some callee lays out
    otherwise, or that cannot be laid out for sure, is left out. ``k`` itself when there is
    none."""
    if resolve is None or not k.calls:
        return k
    memo = memo if memo is not None else {}
    declared = {cb.name for cb in k.commons}
    checked = {n.split("/")[1] for c, _l, _w in _entry_checks(k, resolve, DEPTH, memo, frozenset(), top=True)
               for n in _names(c) if _is_slot(n)} - declared
    if not checked:
        return k
    found: dict[str, Block] = {}
    keys: dict[str, set] = {}
    for c in _callees(k, resolve):
        for b in _layout(c):
            if b.name in checked:
                found.setdefault(b.name, b)
                keys.setdefault(b.name, set()).update(_key(b.name, m) for m in b.members)
    touched = _touched(k, resolve, DEPTH, _memo(memo, "touched"), frozenset())
    taken = {a.name for a in k.args} | set(k.locals) | set(k.module_vars) | {k.name}
    added = []
    for name, b in found.items():
        mine = {_key(name, m) for m in b.members}
        if keys[name] != mine or not any(key in touched for key in mine):
            continue  # laid out otherwise by another callee, or touched by none
        added.append(b)
    if not added:
        return k
    out = copy.copy(k)
    out.commons, out.locals = list(k.commons), dict(k.locals)
    lit = lambda v: ir.Literal(v, str(v), ftype=ir.INTEGER)  # noqa: E731
    for b in added:
        names = []
        for m in b.members:
            new = m.name if m.name not in taken else f"pf_{b.name}_{m.name}"
            taken.add(new)
            names.append(new)
            out.locals[new] = ir.Variable(new, m.ftype, [ir.Dim(lit(lo), lit(hi)) for lo, hi in m.bounds],
                                          common=b.name, line=k.line_start)
        out.commons.append(ir.CommonBlock(b.name, names, line=k.line_start))
    return out


def callee_checks(k: ir.Kernel, resolve: Optional[Resolve],
                  memo: Optional[dict] = None) -> list[tuple[ir.Expr, int, str]]:
    """The checks the routines ``k`` calls on every run make before they return (their own
    argument and state checks, ``error_exits.exit_conditions``, and those of the routines
    they call on every run, :data:`DEPTH` calls deep), in ``k``'s names: (condition that ends
    the program, line of ``k``'s call, what says so) -- what ``k``'s inputs must not meet
    (``harness.constraints``' ``accepts``; an or'ed condition as its parts, each of which
    must be false). A callee's dummies are the call's actual arguments, a COMMON member is
    ``k``'s member at the same place of the block (the routines between need not declare
    the block); a part naming anything else, or what ``k`` or a callee may change before the
    call (the Livermore loops' TRACE counts its calls in a member WATCH then checks), is
    left out."""
    if resolve is None or not k.calls:
        return []
    mine = {_slot(key): ir.Name(m.name, ftype=m.ftype) for key, m in _scalars(k).items()}
    out = []
    for cond, line, what in _entry_checks(k, resolve, DEPTH, memo if memo is not None else {}, frozenset(), top=True):
        c = _renamed(cond, mine, keep={a.name for a in k.args} | set(k.locals))
        if c is not None:
            out.append((c, line, what))
    return out


def _scalars(k: ir.Kernel) -> dict[_Key, object]:
    return {_key(b.name, m): m for b in _layout(k) for m in b.members if not m.bounds}


def _slot(key: _Key) -> str:
    """A name no routine has for a COMMON member, the same in every routine: the block, the
    offset, the type."""
    block, offset, (base, kind, clen), _bounds = key
    return f"/{block}/{offset}/{base}{kind}/{clen}"


def _entry_checks(r: ir.Kernel, resolve: Resolve, depth: int, memo: dict, active: frozenset,
                  top: bool = False) -> list[tuple[ir.Expr, int, str]]:
    """Parts of the checks of ``r`` (not for the top routine: its own are ``accepts``
    already) and of those it calls on every run, COMMON members as :func:`_slot` names."""
    from pathlib import Path

    from ..fortran.error_exits import _straight, exit_conditions, or_parts
    from ..fortran.render import expr_str

    slots = {m.name: ir.Name(_slot(key), ftype=m.ftype) for key, m in _scalars(r).items()}
    own = [] if top else exit_conditions(r, resolve, _memo(memo, "exits"))
    out = []
    for c, line in own:
        what = f"{r.name} ({Path(r.file).name}:{line}) ends the program when {expr_str(c)}"
        out += [(x, line, what) for x in (_renamed(p, slots, keep=_any) for p in or_parts(c)) if x is not None]
    if depth <= 0:
        return out
    written: set[str] = set()
    for s in r.body:
        if isinstance(s, ir.CallStmt):
            callee = resolve(r, s.name)
            if callee is not None and callee is not r and callee.name not in active:
                table = {a.name: _renamed(s.args[i], slots, keep=_any) for i, a in enumerate(callee.args)
                         if i < len(s.args) and not a.dims}
                table = {n: e for n, e in table.items() if e is not None}
                for cond, _line, what in _entry_checks(callee, resolve, depth - 1, memo, active | {r.name}):
                    mapped = _renamed(cond, table, keep=_is_slot)
                    if mapped is not None and not (_names(mapped) & written):
                        out.append((mapped, s.line, what))
        more = _writes(r, s, resolve, memo, slots)
        if more is None or not _straight([s]):
            break  # what follows may not run, or runs on state no one can say
        written |= more
    return out


def _memo(memo: Optional[dict], part: str) -> dict:
    """One part of a memo the walks of :func:`callee_state` share ('touched': ``_touched``'s,
    'exits': ``exit_conditions``'); a fresh one without."""
    return memo.setdefault(part, {}) if memo is not None else {}


def _any(_name: str) -> bool:
    return True


def _is_slot(name: str) -> bool:
    return name.startswith("/")


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, (ir.Name, ir.ArrayRef))}


def _renamed(e: ir.Expr, table: dict[str, ir.Expr], keep) -> Optional[ir.Expr]:
    """``e`` with the names of ``table`` replaced; None when it names an array, or a name
    neither in ``table`` nor one ``keep`` accepts (a set, or a predicate)."""
    from ..fortran.rewrite import replace_names
    if any(isinstance(x, ir.ArrayRef) for x in ir.walk_expr(e)):
        return None
    ok = keep.__contains__ if isinstance(keep, set) else keep
    if not all(n in table or ok(n) for n in _names(e)):
        return None
    return replace_names(e, table)


def _writes(r: ir.Kernel, s: ir.Stmt, resolve: Resolve, memo: dict, slots: dict) -> Optional[set[str]]:
    """What statement ``s`` of ``r`` may change: ``r``'s names, its COMMON members as
    :func:`_slot` names (a call: the variables it passes, the members the callee or its
    callees may write); None for a statement whose writes the IR does not say."""
    out: set[str] = set()
    for x in ir.walk([s]):
        if isinstance(x, ir.Unsupported):
            if x.writes is None:
                return None
            out |= set(x.writes)
        elif isinstance(x, ir.Assign):
            out.add(x.target.name)
        elif isinstance(x, ir.Do):
            out.add(x.var)
        elif isinstance(x, ir.CallStmt):
            out |= {a.name for a in x.args if isinstance(a, (ir.Name, ir.ArrayRef))}
            callee = resolve(r, x.name)
            if callee is None:
                return None
            touched = _touched(callee, resolve, DEPTH, _memo(memo, "touched"), frozenset())
            out |= {_slot(key) for key, w in touched.items() if w}
        for e in ir.stmt_exprs(x):
            if any(isinstance(f, ir.FuncCall) and not f.intrinsic for f in ir.walk_expr(e)):
                return None  # a function may change its arguments and the blocks
    return out | {slots[n].name for n in out if n in slots}
