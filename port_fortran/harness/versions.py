"""The values of scalar arguments that select each version of a routine's loops, drawn only
where the original accepts them.

A loop independent only under a condition (``LoopInfo.condition``: a stride or coefficient
that may be zero, an offset that may be small) is ported twice, parallel when the
condition holds and serial when not, so the proof must run both; and every stride's sign
selects a path of its own (BLAS-style code starts from the far end for a negative one).
:func:`choose` therefore gives each stride argument zero and a negative value besides the
positive ones, and each integer scalar of a condition values on both sides of it (``k = 0``,
``k`` small, ``k`` at least the trip count). A value is kept only if the original accepts it
in every case the spec makes with it (:func:`accepts`: following the routine's control
flow for those values, no subscript leaves a declared bound and no DO step or integer
divisor is zero); what was left out, and why, goes to the spec's notes. Pure functions.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional

from ..fortran import affine, ir
from ..fortran.render import expr_str
from . import ir_facts
from .flowranges import FlowRanges, GiveUp
from .inputs import layout
from .spec import eval_expr

STRIDE_EXTRA = (-2, 0)  # besides the inferred positive strides
MAX_COMBOS = 512  # cases checked for one candidate value; beyond it the value is left out


# --------------------------------------------------------------------------- acceptance


def accepts(kernel: ir.Kernel, values: dict, array_values: Optional[dict] = None) -> tuple[bool, str]:
    """Would the original run without error on these scalar values? ``values`` maps scalar
    arguments to an int, an (lo, hi) interval (any value in it), a string or bool (flags,
    logicals) or None (any value). Returns (accepted, why not)."""
    try:
        fr = FlowRanges(kernel, values, array_values).run()
    except GiveUp as exc:
        return False, f"the routine's control flow could not be followed ({exc})"
    if fr.errors:
        return False, f"the original would fail ({fr.errors[0]})"
    ints = {n: v for n, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
    for a in kernel.args:
        if not a.rank or a.name not in fr.touched:
            continue
        for k, dim in enumerate(a.dims):
            t = fr.touched[a.name][k]
            if t is not None and t[0] > t[1]:
                continue  # not touched in this dimension
            if t is None:
                return False, f"{a.name}: the subscripts of dimension {k + 1} could not be bounded"
            lo = _bound(dim.lower, ints, 1)
            if lo is None or t[0] < lo:
                return False, (f"{a.name} would be indexed at {t[0]}, below the lower bound "
                               f"{expr_str(dim.lower) if dim.lower is not None else 1} of dimension {k + 1}")
            if dim.upper is not None and not dim.assumed_shape:
                hi = _bound(dim.upper, ints, None)
                if hi is None or t[1] > hi:
                    return False, (f"{a.name} would be indexed at {t[1]}, above the upper bound "
                                   f"{expr_str(dim.upper)} of dimension {k + 1}")
    return True, ""


def _bound(e: Optional[ir.Expr], ints: dict, default: Optional[int]) -> Optional[int]:
    if e is None:
        return default
    try:
        v = ir.evaluate(e, ints)
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------- case values


def _cycled(spec, n: str) -> bool:
    a = spec.args[n]
    return a.role in ("stride", "flag") or (a.role == "scalar" and a.values is not None
                                            and not any(isinstance(v, bool) for v in a.values))


def _case_values(kernel: ir.Kernel, spec, sizes: dict, choice: dict, points: bool = False) -> tuple[dict, dict]:
    """Scalar values and integer array value ranges of a case. A scalar drawn at random is
    an interval (any value of its range), or with ``points`` the low end of its range."""
    lay = layout(kernel, spec, sizes, choice, rng=None)
    values: dict[str, Any] = dict(lay.scalars)
    arrays: dict[str, tuple] = dict(lay.index_ranges)
    for n, ptr in lay.pointer_values.items():
        arrays[n] = (1, int(ptr[-1]))
    for a in kernel.args:
        s = spec.args[a.name]
        if a.rank:
            if a.ftype.base == "integer" and s.role == "array" and s.range is not None:
                arrays[a.name] = (int(s.range[0]), int(s.range[1]))
            continue
        if s.role == "scalar" and a.name not in choice:
            if a.ftype.base == "integer" and s.range is not None:
                lo, hi = int(s.range[0]), int(s.range[1])
                values[a.name] = lo if points else (lo, hi)
            else:
                values[a.name] = None  # random: any value
    return values, arrays


def _combos(spec, fixed: dict) -> Optional[list[dict]]:
    """Every combination of the cycled choices (``fixed`` pins some), or None if too many."""
    names = [n for n in spec.args if _cycled(spec, n) or n in fixed]
    lists = [[fixed[n]] if n in fixed else list(spec.args[n].values) for n in names]
    total = 1
    for x in lists:
        total *= max(1, len(x))
    if total * max(1, len(spec.correctness)) > MAX_COMBOS:
        return None
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def resolve(v, sizes: dict):
    """A choice value: an int, or a spec expression of the sizes (``n``, ``n + 1``)."""
    if isinstance(v, str):
        try:
            return eval_expr(v, sizes)
        except ValueError:
            return v
    return v


def _accepted(kernel: ir.Kernel, spec, name: str, value) -> tuple[bool, str]:
    combos = _combos(spec, {name: value})
    if combos is None:
        return False, "too many combinations of the other choices to check"
    for sizes in spec.correctness:
        for choice in combos:
            ch = {n: resolve(v, sizes) for n, v in choice.items()}
            try:
                values, arrays = _case_values(kernel, spec, sizes, ch)
            except (ValueError, KeyError) as exc:
                return False, f"the inputs cannot be made ({exc})"
            ok, why = accepts(kernel, values, arrays)
            if not ok:
                where = " ".join(f"{k}={v}" for k, v in {**sizes, **ch}.items())
                return False, f"{why} (with {where})"
    return True, ""


# --------------------------------------------------------------------------- conditions


def _entry(kernel: ir.Kernel, spec, do: ir.Do, sizes: dict, choice: dict):
    """(walk, the values where ``do`` starts) in one case, the random scalars at the low end
    of their ranges; (None, None) when the loop is not reached or the walk gives up."""
    try:
        values, arrays = _case_values(kernel, spec, sizes, choice, points=True)
        fr = FlowRanges(kernel, values, arrays).run()
    except (GiveUp, ValueError, KeyError):
        return None, None
    return fr, fr.entry.get(id(do))


def _atoms(e: ir.Expr) -> list[ir.Expr]:
    if isinstance(e, ir.BinOp) and e.op in ("and", "or"):
        return _atoms(e.left) + _atoms(e.right)
    if isinstance(e, ir.UnaryOp) and e.op == "not":
        return _atoms(e.operand)
    return [e]


def _pivots(atom: ir.Expr, name: str, known: dict) -> list:
    """Values of ``name`` at which a comparison changes: E in ``name op E`` (or
    ``abs(name) op E``), or the solution of a comparison linear in ``name``; polynomials of
    the size arguments, other scalars taken at ``known`` values."""
    if not (isinstance(atom, ir.BinOp) and atom.op in ("==", "/=", "<", "<=", ">", ">=")):
        return []

    def fix(p):
        if p is None:
            return None
        for n, v in known.items():
            if v is not None and n in affine.names(p):
                p = affine.substitute(p, n, affine.const(v))
        return p

    for side, other in ((atom.left, atom.right), (atom.right, atom.left)):
        inner = side.args[0] if isinstance(side, ir.FuncCall) and side.name in ("abs", "iabs") and side.args else side
        if isinstance(inner, ir.Name) and inner.name == name and name not in ir_facts.names_in(other):
            p = fix(affine.poly_of(other))
            if p is not None and all(known.get(n, 0) is None for n in affine.names(p)):
                return [p]
            return []
    left, right = affine.poly_of(atom.left), affine.poly_of(atom.right)
    if left is None or right is None:
        return []
    c, rest = affine.split(fix(affine.add(left, right, -1)), name)
    if c is None or not affine.is_const(c) or affine.constant(c) not in (1, -1) \
            or not all(known.get(n, 0) is None for n in affine.names(rest)):
        return []
    return [affine.mul(affine.const(-affine.constant(c)), rest)]


def _spelled(p) -> Any:
    if affine.is_const(p):
        return affine.constant(p)
    return ir_facts.to_py(affine.to_expr(p))


def _candidates(cond: ir.Expr, name: str, known: dict) -> list:
    out: list = [1, 0, -1, 2]
    for atom in _atoms(cond):
        for p in _pivots(atom, name, known):
            for q in (p, affine.add(p, affine.const(1)), affine.add(p, affine.const(-1)),
                      affine.mul(affine.const(-1), p)):
                v = _spelled(q)
                if v not in out:
                    out.append(v)
    return out


def _reference_sizes(spec) -> dict:
    """The size set with the most iterations (a version matters only past one iteration)."""
    return max(spec.correctness, key=lambda s: (sum(s.values()), len(s))) if spec.correctness else {}


def _base_choice(spec, sizes: dict) -> dict:
    return {n: resolve(spec.args[n].values[0], sizes) for n in spec.args
            if _cycled(spec, n) and spec.args[n].values}


def _known(kernel: ir.Kernel, spec, name: str) -> dict:
    """For pivots: size arguments stay symbolic (None); other integer scalars are taken at
    their first value or the low end of their range."""
    out: dict = {n: None for n in spec.sizes()}
    for a in kernel.args:
        s = spec.args[a.name]
        if a.rank or a.name == name or a.ftype.base != "integer" or s.role not in ("scalar", "stride"):
            continue
        if s.values and isinstance(s.values[0], int) and not isinstance(s.values[0], bool):
            out[a.name] = s.values[0]
        elif s.range is not None:
            out[a.name] = int(s.range[0])
    return out


def _condition_values(kernel: ir.Kernel, spec, do: ir.Do, name: str, notes: list[str]) -> None:
    """Values of the integer scalar ``name`` on both sides of the loop's condition and of
    each comparison in it (a coefficient also gets a negative value, where accepted). The
    first value selects the parallel version (it is the one timed)."""
    cond = do.info.condition
    ref = _reference_sizes(spec)
    a = spec.args[name]
    saved = a.values
    exprs = [cond] + [x for x in _atoms(cond) if name in ir_facts.names_in(x)]
    nonzero = any(isinstance(x, ir.BinOp) and x.op == "/=" and name in ir_facts.names_in(x) for x in exprs[1:])
    seen: dict = {}

    def probe(v):
        if repr(v) not in seen:
            a.values = [v]
            try:
                fr, env = _entry(kernel, spec, do, ref, _base_choice(spec, ref))
            finally:
                a.values = saved
            truths = [None if env is None else fr.bval(e, env) for e in exprs]
            seen[repr(v)] = (resolve(v, ref), truths)
        return seen[repr(v)]

    goals = [("parallel", lambda val, t: t[0] is True), ("serial", lambda val, t: t[0] is False)]
    for i in range(1, len(exprs)):
        goals += [(f"{expr_str(exprs[i])}", lambda val, t, i=i: t[i] is True),
                  (f".not. {expr_str(exprs[i])}", lambda val, t, i=i: t[i] is False)]
    if nonzero:
        goals.append(("negative", lambda val, t: isinstance(val, int) and val < 0))
    chosen: list = []
    left_out: dict = {}
    accepted: dict = {}
    for label, goal in goals:
        if any(goal(*probe(v)) for v in chosen):
            continue
        for v in _candidates(cond, name, _known(kernel, spec, name)):
            if not goal(*probe(v)):
                continue
            if repr(v) not in accepted:
                accepted[repr(v)] = _accepted(kernel, spec, name, v)
            ok, why = accepted[repr(v)]
            if ok:
                chosen.append(v)
                break
            left_out.setdefault(repr(v), f"{v} ({label}): {why}")
    text = expr_str(cond)
    if not chosen:
        notes.append(f"{name}: no accepted value decides the condition {text} of the loop at line {do.line}; "
                     "kept the random range")
        return
    parallel = [v for v in chosen if probe(v)[1][0] is True]
    serial = [v for v in chosen if probe(v)[1][0] is False]
    a.values = parallel[:1] + [v for v in chosen if v not in parallel[:1]]
    a.range = None
    msg = (f"{name}: values {', '.join(map(str, a.values))} for the loop at line {do.line}, parallel only if {text} "
           f"(parallel with {', '.join(map(str, parallel)) or 'none'}, serial with {', '.join(map(str, serial)) or 'none'}"
           f" at {' '.join(f'{k}={v}' for k, v in ref.items())})")
    if not serial or not parallel:
        msg += f"; the {'serial' if not serial else 'parallel'} version is not exercised"
    if left_out:
        msg += "; left out: " + "; ".join(left_out.values())
    notes.append(msg)


def _stride_versions(kernel: ir.Kernel, spec, do: ir.Do, name: str) -> str:
    """Which of a stride's values select which version of the loop (at the largest sizes)."""
    ref = _reference_sizes(spec)
    par, ser, other = [], [], []
    for v in spec.args[name].values:
        choice = _base_choice(spec, ref)
        choice[name] = v
        fr, env = _entry(kernel, spec, do, ref, choice)
        t = None if env is None else fr.bval(do.info.condition, env)
        (par if t is True else ser if t is False else other).append(str(v))
    text = (f"{name}: the loop at line {do.line} runs in parallel only if {expr_str(do.info.condition)}: "
            f"with {name} = {', '.join(par) or '(none)'} in parallel, with {', '.join(ser) or '(none)'} serially")
    if other:
        text += f", with {', '.join(other)} not decided (or not reached) when the others take their first value"
    if not par or not ser:
        text += f" (the {'serial' if not ser else 'parallel'} version is not exercised)"
    return text


# --------------------------------------------------------------------------- the spec


def choose(kernel: ir.Kernel, spec) -> None:
    """Extend the inferred spec (in place): zero and negative strides, and values on both
    sides of each loop's condition for the integer scalars in it, where accepted."""
    notes: list[str] = []
    strides = [n for n, a in spec.args.items() if a.role == "stride"]
    for n in strides:
        a = spec.args[n]
        for x in STRIDE_EXTRA:
            if x in a.values:
                continue
            ok, why = _accepted(kernel, spec, n, x)
            if ok:
                a.values.append(x)
            else:
                notes.append(f"{n}: stride {x} left out: {why}")
    for do in kernel.loops():
        cond = getattr(do.info, "condition", None)
        if cond is None:
            continue
        text = expr_str(cond)
        for n in do.info.condition_args:
            s = spec.args.get(n)
            if s is None or s.role == "stride":
                continue
            arg = kernel.arg(n)
            if s.role == "scalar" and arg.ftype.base == "integer" and not arg.rank:
                if s.values is None:
                    _condition_values(kernel, spec, do, n, notes)
                continue
            if s.role != "size":  # sizes vary over the size sets anyway
                notes.append(f"the loop at line {do.line} runs in parallel only if {text}: {n} ({s.role}) is "
                             "not varied for it")
        for n in do.info.condition_args:
            if n in strides:
                notes.append(_stride_versions(kernel, spec, do, n))
        names = set(do.info.condition_args)
        if not names & set(strides) and not any(spec.args[n].role == "scalar" for n in names if n in spec.args):
            notes.append(f"the loop at line {do.line} runs in parallel only if {text}: which version runs depends on "
                         f"{', '.join(sorted(names)) or 'values the spec does not set'}")
    spec.notes.extend(notes)
