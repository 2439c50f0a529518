"""Comparisons a routine's callees make on what it passes them, in the routine's names (pure).

The harness gives every comparison of an integer input with a constant both sides over its
cases (``harness.infer._branch_values``): drawn at random, TeaLeaf's neighbour codes almost
never equal ``EXTERNAL_FACE`` and a port whose work sits behind that test was compared on
inputs that skip the work. A routine that only passes its inputs on has the tests in its
callee: ``update_halo_kernel`` hands ``chunk_neighbours`` to ``update_halo_cell``, which
works on a face only when ``chunk_neighbours(CHUNK_LEFT) == EXTERNAL_FACE``; its cases drew
the neighbour codes in [-5, 5] and no case reached a face (``original-no-effect``).

:func:`callee_tests` finds, in the IF conditions of every routine the routine calls (and of
theirs, a few calls deep), each comparison between a dummy and a constant (the callee's
named constants evaluated), and writes it in the caller's names when the dummy is

- a scalar whose actual argument is a variable or an element at constant subscripts, or
- an array element at constant subscripts whose actual argument is the caller's whole array
  of the same rank and lower bounds (and the same extents but in the last dimension), so
  that the element is the same storage.

Anything else (an actual that is an expression, an array section, an element passed as the
start of an array dummy) is left out: a wrong mapping would only aim the draw elsewhere,
never change a verdict, but it would say something false in the spec's notes.
"""
from __future__ import annotations

import copy
from typing import Optional

from . import ir
from .common_use import Resolve, call_sites

DEPTH = 3  # calls followed below the routine
_COMPARE = {"==", "/=", "<", ">", "<=", ">="}


def callee_tests(k: ir.Kernel, resolve: Optional[Resolve], _depth: int = DEPTH,
                 _memo: Optional[dict] = None, _active: frozenset = frozenset()) -> list[tuple[ir.Expr, int]]:
    """(comparison in ``k``'s names, line of the call) for each comparison of a dummy with a
    constant that ``k``'s callees make, as the module docstring says; none without ``resolve``."""
    if resolve is None or _depth <= 0:
        return []
    memo = _memo if _memo is not None else {}
    mine = _ints(k, memo)
    out: list[tuple[ir.Expr, int]] = []
    for name, args, line in call_sites(k.body):
        callee = resolve(k, name)
        if callee is None or callee.name in _active or callee is k:
            continue
        table = _actuals(k, callee, args, mine, _ints(callee, memo))
        if not table:
            continue
        key = (id(callee), _depth)
        if key not in memo:
            memo[key] = _own_tests(callee, _ints(callee, memo)) + [c for c, _l in callee_tests(
                callee, resolve, _depth - 1, memo, _active | {k.name})]
        for c in memo[key]:
            m = _mapped(c, table)
            if m is not None:
                out.append((m, line))
    return out


def _ints(k: ir.Kernel, memo: dict) -> dict[str, int]:
    """The routine's integer named constants (once per routine and walk)."""
    key = ("consts", id(k))
    if key not in memo:
        memo[key] = {n: v for n, v in k.constants().items() if isinstance(v, int) and not isinstance(v, bool)}
    return memo[key]


def _own_tests(k: ir.Kernel, consts: dict[str, int]) -> list[ir.Expr]:
    """The routine's comparisons of a name or an element at literal subscripts with a
    constant (``consts``: its integer constants), the constant evaluated (``EXTERNAL_FACE``
    -> -1)."""
    out = []
    for s in ir.walk(k.body):
        if not isinstance(s, ir.If):
            continue
        for cond, _body in s.branches:
            for x in ir.walk_expr(cond):
                if not isinstance(x, ir.BinOp) or x.op not in _COMPARE:
                    continue
                left, right = _operand(x.left, consts), _operand(x.right, consts)
                if left is not None and right is not None and (isinstance(left, ir.Literal) != isinstance(right, ir.Literal)):
                    out.append(ir.BinOp(x.op, left, right, ftype=x.ftype))
    return out


def _operand(e: ir.Expr, consts: dict[str, int]) -> Optional[ir.Expr]:
    """A constant as a literal, a name, an element at constant subscripts (as literals), or
    None."""
    v = _value(e, consts)
    if v is not None:
        return ir.Literal(v, str(v), ftype=ir.INTEGER)
    if isinstance(e, ir.Name):
        return e
    if isinstance(e, ir.ArrayRef) and e.subscripts:
        subs = [_value(s, consts) for s in e.subscripts]
        if None not in subs:
            return ir.ArrayRef(e.name, [ir.Literal(v, str(v), ftype=ir.INTEGER) for v in subs], ftype=e.ftype)
    return None


def _value(e: ir.Expr, consts: dict[str, int]) -> Optional[int]:
    if isinstance(e, (ir.Literal, ir.Name, ir.UnaryOp, ir.BinOp)):
        try:
            v = ir.evaluate(e, consts)
        except (KeyError, ValueError, TypeError, ZeroDivisionError, AttributeError):
            return None
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    return None


def _actuals(k: ir.Kernel, callee: ir.Kernel, args: list, consts: dict[str, int],
             theirs: dict[str, int]) -> dict[str, tuple]:
    """Dummy name -> ('scalar', actual) or ('array', caller's array name, offsets per
    dimension) for the dummies whose actual argument the module docstring allows
    (``consts``, ``theirs``: the integer constants of ``k`` and of ``callee``)."""
    out: dict[str, tuple] = {}
    for q, d in enumerate(callee.args):
        if q >= len(args) or args[q] is None:
            break
        a = args[q]
        if not d.dims:
            if isinstance(a, ir.Name) or (isinstance(a, ir.ArrayRef) and a.subscripts
                                          and None not in [_value(s, consts) for s in a.subscripts]):
                out[d.name] = ("scalar", a)
            continue
        if not isinstance(a, ir.Name):
            continue
        mine = _variable(k, a.name)
        if mine is None or len(mine.dims) != len(d.dims):
            continue
        offsets = []
        for j, (dm, dd) in enumerate(zip(mine.dims, d.dims)):
            lo_m, lo_d = _lower(dm, consts), _lower(dd, theirs)
            if lo_m is None or lo_d is None:
                break
            if j < len(d.dims) - 1:  # the same strides: element (i, j) is the same storage
                e = _extent(dm, consts)
                if e is None or e != _extent(dd, theirs):
                    break
            offsets.append(lo_m - lo_d)
        else:
            out[d.name] = ("array", a.name, offsets)
    return out


def _variable(k: ir.Kernel, name: str):
    for a in k.args:
        if a.name == name:
            return a
    return k.locals.get(name)


def _lower(d: ir.Dim, consts: dict[str, int]) -> Optional[int]:
    return 1 if d.lower is None else _value(d.lower, consts)


def _extent(d: ir.Dim, consts: dict[str, int]) -> Optional[int]:
    lo, hi = _lower(d, consts), (None if d.upper is None else _value(d.upper, consts))
    return None if lo is None or hi is None else hi - lo + 1


def _mapped(c: ir.BinOp, table: dict[str, tuple]) -> Optional[ir.Expr]:
    """The comparison ``c`` (one side a literal) in the caller's names, or None."""
    def side(e: ir.Expr) -> Optional[ir.Expr]:
        if isinstance(e, ir.Literal):
            return e
        if isinstance(e, ir.Name) and e.name in table and table[e.name][0] == "scalar":
            return copy.deepcopy(table[e.name][1])
        if isinstance(e, ir.ArrayRef) and e.name in table and table[e.name][0] == "array":
            _kind, name, offsets = table[e.name]
            if len(e.subscripts) != len(offsets):
                return None
            subs = [ir.Literal(s.value + o, str(s.value + o), ftype=ir.INTEGER)
                    for s, o in zip(e.subscripts, offsets)]
            return ir.ArrayRef(name, subs, ftype=e.ftype)
        return None

    left, right = side(c.left), side(c.right)
    if left is None or right is None:
        return None
    return ir.BinOp(c.op, left, right, ftype=c.ftype)
