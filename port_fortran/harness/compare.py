"""Comparing what the port wrote with what the original wrote (pure, numpy).

Every argument is compared (inputs too: a port must not scribble on them) and the function
result. Reals and complex: NaN in both counts as equal (poison the original left alone);
NaN only in the port where the original wrote a value is an element never written. The
allowed error of an element is ``abs + rel * max(|ref|, mean |ref|)``, and for outputs of
reductions also ``rel * S`` with S the largest sum of magnitudes of a real input array
(a parallel port may reorder those sums). Integers, logicals and characters must match
exactly; the poison sentinel left in the port's output is reported as never written.
Zero-size outputs of the same rank and type are equal whatever their bounds.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..records import OutputCheck
from .inputs import CHAR_POISON, INT_POISON, LOGICAL_POISON, Record
from .spec import Tolerance


def fortran_index(flat: int, shape: tuple[int, ...], lbound: tuple[int, ...]) -> list[int]:
    if not shape:
        return []
    idx = np.unravel_index(flat, shape, order="F")
    return [int(i) + int(lb) for i, lb in zip(idx, lbound)]


def magnitude_scale(inputs: list[Record]) -> float:
    """The largest sum of |values| over the real/complex input arrays."""
    best = 0.0
    for r in inputs:
        if r.data.dtype.kind in "fc" and r.data.size:
            with np.errstate(invalid="ignore"):
                s = float(np.nansum(np.abs(r.data)))
            best = max(best, s)
    return best


def compare(ref: Record, port: Record, tol: Tolerance, scale: float = 0.0) -> OutputCheck:
    name = ref.name
    if ref.data.size == 0 and port.data.size == 0 and ref.data.ndim == port.data.ndim and ref.code == port.code:
        # zero-size: gfortran reports an empty array as (1:0), the port keeps the declared
        # bounds (7:6); nothing to compare either way
        return OutputCheck(name, True, 0, tolerance=tol.rel)
    if ref.data.shape != port.data.shape or tuple(ref.lbound) != tuple(port.lbound):
        return OutputCheck(name, False, int(ref.data.size),
                           message=f"shape differs: original {_bounds(ref)}, port {_bounds(port)}")
    if ref.code != port.code:
        return OutputCheck(name, False, int(ref.data.size), message=f"type code {port.code} != {ref.code}")
    r = ref.data.reshape(-1, order="F")
    p = port.data.reshape(-1, order="F")
    n = int(r.size)
    if n == 0:
        return OutputCheck(name, True, 0, tolerance=tol.rel)
    if r.dtype.kind in "fc":
        return _compare_float(ref, r, p, tol, scale)
    if r.dtype.kind == "S":
        bad = r != p
        unwritten = bad & (p == np.array(CHAR_POISON * r.dtype.itemsize, dtype=r.dtype))
        return _exact_result(ref, bad, unwritten, lambda i: f"{p[i]!r} vs {r[i]!r}")
    bad = r != p
    sentinel = LOGICAL_POISON if ref.code in (7, 11, 12) else (INT_POISON if r.dtype.itemsize >= 4 else -123)
    unwritten = bad & (p == sentinel)
    return _exact_result(ref, bad, unwritten, lambda i: f"{p[i]} vs {r[i]}")


def _bounds(rec: Record) -> str:
    if not rec.data.ndim:
        return "scalar"
    return "(" + ",".join(f"{l}:{u}" for l, u in zip(rec.lbound, rec.ubound)) + ")"


def _exact_result(ref: Record, bad: np.ndarray, unwritten: np.ndarray, show) -> OutputCheck:
    n = int(bad.size)
    if not bad.any():
        return OutputCheck(ref.name, True, n)
    first = int(np.argmax(bad))
    where = fortran_index(first, ref.data.shape, ref.lbound)
    nu = int(unwritten.sum())
    msg = f"{int(bad.sum())} of {n} elements differ; first at {_at(ref.name, where)}: port {show(first)} original"
    if nu:
        msg = f"{nu} element(s) never written (poison left), " + msg
    return OutputCheck(ref.name, False, n, max_abs_err=float("inf") if nu else 1.0, max_rel_err=float("inf"),
                       worst_index=where, message=msg)


def _at(name: str, where: list[int]) -> str:
    return f"{name}({','.join(map(str, where))})" if where else name


def _compare_float(ref: Record, r: np.ndarray, p: np.ndarray, tol: Tolerance, scale: float) -> OutputCheck:
    n = int(r.size)
    rn, pn = np.isnan(r), np.isnan(p)
    unwritten = pn & ~rn
    extra = rn & ~pn
    both = rn & pn
    ok_vals = ~(rn | pn)
    with np.errstate(invalid="ignore", over="ignore"):
        absr = np.abs(r)
        finite = ok_vals & np.isfinite(r)
        mean_ref = float(np.mean(absr[finite])) if finite.any() else 0.0
        diff = np.where(ok_vals, np.abs(p - r), 0.0)
        same_inf = ok_vals & ~np.isfinite(r) & (p == r)
        diff = np.where(same_inf, 0.0, diff)
        diff = np.where(ok_vals & (np.isinf(diff) | np.isnan(diff)) & ~same_inf, np.inf, diff)
        base = np.maximum(absr, mean_ref)
        if tol.reduction:
            base = np.maximum(base, scale)
        allowed = tol.abs + tol.rel * np.where(np.isfinite(base), base, 0.0)
        rel = np.where(ok_vals & (absr > 0), diff / np.where(absr > 0, absr, 1.0), np.where(diff > 0, np.inf, 0.0))
    over = ok_vals & (diff > allowed)
    bad = over | unwritten | extra
    max_abs = float(diff.max()) if n else 0.0
    max_rel = float(rel[ok_vals].max()) if ok_vals.any() else 0.0
    worst: Optional[int] = None
    if unwritten.any():
        worst = int(np.argmax(unwritten))
    elif extra.any():
        worst = int(np.argmax(extra))
    elif over.any():
        excess = np.where(over, diff - allowed, -np.inf)
        worst = int(np.argmax(excess))
    elif n:
        worst = int(np.argmax(diff))
    where = fortran_index(worst, ref.data.shape, ref.lbound) if worst is not None else None
    passed = not bad.any()
    msg = ""
    if unwritten.any():
        msg = (f"{int(unwritten.sum())} of {n} element(s) never written (NaN poison left by the port where the "
               f"original wrote a value), first at {_at(ref.name, where)}")
        max_abs = float("inf")
    elif extra.any():
        msg = f"{int(extra.sum())} element(s) NaN in the original but not in the port, first at {_at(ref.name, where)}"
    elif over.any():
        w = worst
        msg = (f"{int(over.sum())} of {n} elements outside tolerance; worst {_at(ref.name, where)}: "
               f"port {p[w]!r} original {r[w]!r} (abs err {diff[w]:.3g} > allowed {allowed[w]:.3g})")
    del both
    return OutputCheck(ref.name, passed, n, max_abs_err=max_abs, max_rel_err=max_rel,
                       worst_index=where, tolerance=tol.rel, message=msg)
