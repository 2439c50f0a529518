"""What a call touches of an array section passed as its actual argument, per dimension
(pure; for ``effects.Calls.actual_ref``).

An F90 caller passes ``qtot(:, :, :, :, :, g)`` to a dummy ``q(cmom, ichunk, ny, nz, nc)``
that the callee writes at ``q(.., ic, j, k, ich)`` with ``j`` and ``k`` its arguments.
The section is passed by sequence association (copied in and out when not contiguous), so
element (i1, .., ir) of the dummy is element (i1, .., ir) of the section exactly when the
dummy's leading extents are the section's: then each dimension of the section maps to the
same dimension of the dummy, and what the callee touches of the dummy, dimension by
dimension (``bounds.BoundsFinder``: min and max subscript, in its arguments), is what the
call touches of the caller's array: ``qtot(1:cmom, 1:ichunk, j, k, 1:nc, g)`` -- which
the caller's loops over ``j`` and ``k`` do not share. A dimension the callee's subscripts
do not bound is the section's whole extent (the most a legal call can touch); anything
else (other leading extents, a stride, a rank that differs) is no mapping (None: the
caller then takes the whole array, as before)."""
from __future__ import annotations

from typing import Callable, Optional

from . import affine, ir


def _lower(d: ir.Dim) -> ir.Expr:
    return d.lower if d.lower is not None else ir.Literal(1, "1", ftype=ir.INTEGER)


def section_ref(v: ir.Variable, actual: ir.Expr, dummy: ir.Argument, dim_bounds: list,
                in_caller: Callable[[ir.Expr], Optional[ir.Expr]], env: dict) -> Optional[ir.Expr]:
    """The caller's array ``v`` as the call touches it through the section ``actual``
    passed to ``dummy``: an ArrayRef with a range (or a point) for each section dimension
    and the section's own points elsewhere; None when the section's shape is not the
    dummy's (see the module docstring). ``dim_bounds``: per dimension of the dummy, the
    (min, max) subscript the callee touches in its own names, or None; ``in_caller``: a
    callee expression in the caller's names (None when it cannot be said there)."""
    if not isinstance(actual, ir.ArrayRef) or len(actual.subscripts) != len(v.dims):
        return None
    where = [i for i, s in enumerate(actual.subscripts) if isinstance(s, ir.Slice)]
    if not where or len(where) != len(dummy.dims) or any(actual.subscripts[i].step is not None for i in where):
        return None
    P = lambda e: affine.poly_of(e, env) if e is not None else None  # noqa: E731
    out = list(actual.subscripts)
    for k, i in enumerate(where):
        s, vd, dd = actual.subscripts[i], v.dims[i], dummy.dims[k]
        s_lo = s.lower if s.lower is not None else _lower(vd)
        s_hi = s.upper if s.upper is not None else vd.upper
        d_lo = in_caller(_lower(dd))
        d_hi = in_caller(dd.upper) if dd.upper is not None else None
        p_slo, p_shi, p_dlo, p_dhi = P(s_lo), P(s_hi), P(d_lo), P(d_hi)
        if p_slo is None or p_dlo is None:
            return None
        if k < len(where) - 1:  # a leading dimension: the extents must be the same
            if p_shi is None or p_dhi is None:
                return None
            if affine.add(affine.add(p_shi, p_slo, -1), affine.add(p_dhi, p_dlo, -1), -1) != affine.const(0):
                return None
        shift = affine.add(p_slo, p_dlo, -1)  # caller index = dummy index + shift
        b = dim_bounds[k] if k < len(dim_bounds) else None
        lo = hi = None
        if b is not None:
            lo, hi = P(in_caller(b[0])), P(in_caller(b[1]))
        if lo is None or hi is None:  # not bounded by the callee's subscripts: the section's extent
            out[i] = ir.Slice(s_lo, s_hi)
            continue
        lo, hi = affine.add(lo, shift), affine.add(hi, shift)
        out[i] = affine.to_expr(lo) if lo == hi else ir.Slice(affine.to_expr(lo), affine.to_expr(hi))
    return ir.ArrayRef(v.name, out, ftype=v.ftype)
