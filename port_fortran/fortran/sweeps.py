"""Recurrences that fill a scratch array, for ``privatize`` (pure over the IR).

A loop such as ``do k = lo + 1, hi; d(k - lo) = (r(k) - a(k) * d(k - lo - 1)) / b(k)``
reads the array it writes, so it is no fill by ``fills.fill_boxes`` -- yet every element
it reads was written by an earlier pass or, for the first passes, before the loop: after
it, the elements it wrote are as good as a fill's (TeaLeaf's block-Jacobi solve, a forward
sweep and a back substitution per column). ``forget`` drops from a scan's environment the
scalars that changed and the values written in terms of them."""
from __future__ import annotations

from . import affine, ir
from .fills import assigned_names


def forget(env: dict, gone: set) -> dict:
    """``env`` without the names ``gone`` and the values written in terms of them."""
    return {k: v for k, v in env.items()
            if k not in gone and not (isinstance(v, dict) and affine.names(v) & gone)}


def recurrence_box(do: ir.Do, name: str, env: dict, known: list) -> list:
    """The part of ``name`` a recurrence loop writes (``[box]``), where every element it reads
    was written before -- by an earlier pass of the loop or, for the first passes, in
    ``known`` (boxes this iteration of the enclosing loop wrote before the loop): TeaLeaf's
    block solve, ``dp_l(k - bottom) = (r(j, k) + c * dp_l(k - bottom - 1)) * bfp(j, k)`` for
    ``k = bottom + 1, top`` after ``dp_l(0)`` was set, and the back substitution
    ``z_l(k - bottom) = dp_l(k - bottom) - cp(j, k) * z_l(k - bottom + 1)`` for ``k = top - 1,
    bottom, -1``. The loop (step 1 or -1, bounds unchanged by it) holds assignments only,
    one of which, unconditional, writes ``name`` at the loop's variable plus a constant in
    one dimension and at the same expressions free of the loop in the others; every read of
    ``name`` is at those expressions, and in the loop's dimension behind the write (an
    element an earlier pass wrote) or, in a statement after the write, at it. [] otherwise."""
    sp = affine.const(1) if do.step is None else affine.poly_of(do.step, env)
    step = affine.constant(sp) if sp is not None and affine.is_const(sp) else None
    if step not in (1, -1) or not do.body or not all(isinstance(s, (ir.Assign, ir.Continue)) for s in do.body):
        return []
    changed = assigned_names(list(ir.walk(do.body))) | {do.var}
    first, last = affine.poly_of(do.start, env), affine.poly_of(do.end, env)
    if first is None or last is None or any(len(m) > 1 for m in list(first) + list(last)) \
            or (affine.names(first) | affine.names(last)) & changed:
        return []
    env = forget(env, changed)  # in the body: not what held before the loop of its own variable
    writes = [(n, s) for n, s in enumerate(do.body) if isinstance(s, ir.Assign)
              and isinstance(s.target, ir.ArrayRef) and s.target.name == name]
    if len(writes) != 1:
        return []
    at, target = writes[0][0], writes[0][1].target

    def shape(ref: ir.ArrayRef):
        """(the dimension of the loop's variable, its offset, the other subscripts) or None."""
        dim, off, rest = None, None, []
        for d, sub in enumerate(ref.subscripts):
            p = affine.poly_of(sub, env) if not isinstance(sub, ir.Slice) else None
            if p is None or any(len(m) > 1 for m in p):
                return None
            if (do.var,) in p:
                if p[(do.var,)] != 1 or dim is not None:
                    return None
                dim, off = d, affine.add(p, affine.var(do.var), -1)
                if affine.names(off) & changed:
                    return None
            elif affine.names(p) & changed:
                return None
            else:
                rest.append(p)
        return (dim, off, rest) if dim is not None else None

    w = shape(target)
    if w is None:
        return []
    need_lo = None  # the elements the first passes read from before the loop (the furthest offset)
    for n, s in enumerate(do.body):
        if not isinstance(s, ir.Assign):
            continue
        exprs = [s.value] + ([x for x in s.target.subscripts] if isinstance(s.target, ir.ArrayRef) else [])
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Name) and x.name == name:
                    return []
                if not (isinstance(x, ir.ArrayRef) and x.name == name):
                    continue
                r = shape(x)
                if r is None or r[0] != w[0] or r[2] != w[2]:
                    return []
                delta = affine.add(r[1], w[1], -1)
                if not affine.is_const(delta):
                    return []
                d = affine.constant(delta) * step  # > 0: ahead of the write, never written yet
                if d > 0 or (d == 0 and n <= at):
                    return []
                if d < 0:
                    need_lo = d if need_lo is None else min(need_lo, d)
    dim, off, rest = w
    start = affine.add(first, off)  # the element the first pass writes
    if need_lo is not None:  # passes 1..|d| read what was written before the loop
        lo, hi = (affine.add(start, affine.const(need_lo)), affine.add(start, affine.const(-1))) if step == 1 \
            else (affine.add(start, affine.const(1)), affine.add(start, affine.const(-need_lo)))
        needed = rest[:dim] + [None] + rest[dim:]
        if not any(len(b) == len(needed) and all(
                affine.nonneg(affine.add(lo, blo, -1)) and affine.nonneg(affine.add(bhi, hi, -1)) if p is None else
                (blo == p and bhi == p) for p, (blo, bhi) in zip(needed, b)) for b in known):
            return []
    end = affine.add(last, off)
    box = [(p, p) for p in rest]
    box.insert(dim, (start, end) if step == 1 else (end, start))
    return [box]
