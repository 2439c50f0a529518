"""Comparing what the port wrote with what the original wrote (pure, numpy).

Every argument is compared (inputs too: a port must not scribble on them) and the function
result. Reals and complex: NaN in both counts as equal (poison the original left alone);
NaN only in the port where the original wrote a value is an element never written. The
allowed error of an element is ``abs + rel * max(|ref|, mean |ref|)``, and for outputs of
reductions also ``rel * S`` with S the largest sum of magnitudes of a real input array
(a parallel port may reorder those sums). Integers, logicals and characters must match
exactly; the poison sentinel left in the port's output is reported as never written.
Zero-size outputs of the same rank and type are equal whatever their bounds.

The original's own sensitivity (``noise``): how far each output element moves when the
original runs again on its inputs perturbed by two units in the last place (the harness,
``Harness.sensitivity``). Where a computation is ill-conditioned (recurrences at high degree,
differences of near-equal values) a port that rounds differently -- another order of
operations -- is as right as the original; the allowed error of such an element is raised
to ``NOISE_FACTOR`` times that movement, but never past ``NOISE_CAP`` of the element's
magnitude (an output that jumps under a rounding perturbation cannot be checked closer by
any port and fails as before). The check says how many elements needed it.
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


NOISE_FACTOR = 16.0  # allowed error >= this times the original's own movement under 2-ulp input perturbations
NOISE_CAP = 1e-6  # ... but never past this fraction of the element's magnitude
FULL_COMPARE_ELEMENTS = 1 << 27  # outputs up to this many elements are compared whole
CHUNK = 1 << 22  # elements compared at a time (bounds the temporaries of a large output)
SAMPLE_ELEMENTS = 1 << 22  # elements of the sample of a larger output, about


def compare(ref: Record, port: Record, tol: Tolerance, scale: float = 0.0,
            full_limit: Optional[int] = None, noise: Optional[np.ndarray] = None) -> OutputCheck:
    """Compare one output. Up to ``full_limit`` elements (default FULL_COMPARE_ELEMENTS)
    every element, in chunks; above it a deterministic sample (:func:`sample_indices`),
    and the check says it was sampled and how many elements it compared."""
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
    where: Optional[np.ndarray] = None  # flat positions compared, when sampled
    nz = None
    if noise is not None and noise.shape == ref.data.shape:
        nz = np.asarray(noise, dtype=np.float64).reshape(-1, order="F")
    if n > (FULL_COMPARE_ELEMENTS if full_limit is None else full_limit):
        where = sample_indices(ref.data.shape)
        r, p = r[where], p[where]
        nz = nz[where] if nz is not None else None
    if r.dtype.kind in "fc":
        out = _compare_float(ref, r, p, tol, scale, where, nz)
    elif r.dtype.kind == "S":
        poison = np.array(CHAR_POISON * r.dtype.itemsize, dtype=r.dtype)
        out = _exact_result(ref, r, p, lambda pc: pc == poison, lambda i: f"{p[i]!r} vs {r[i]!r}", where)
    else:
        sentinel = LOGICAL_POISON if ref.code in (7, 11, 12) else (INT_POISON if r.dtype.itemsize >= 4 else -123)
        out = _exact_result(ref, r, p, lambda pc: pc == sentinel, lambda i: f"{p[i]} vs {r[i]}", where)
    if where is not None:
        out.sampled, out.total_elements = True, n
        out.message = (out.message + "; " if out.message else "") + \
            f"sampled: {out.elements} of {n} elements compared (every tile, the last elements of each dimension)"
    return out


def sample_indices(shape: tuple[int, ...], budget: int = SAMPLE_ELEMENTS) -> np.ndarray:
    """Flat (Fortran-order) positions of a deterministic sample of an array of ``shape``:
    along each dimension the first 2 and last 3 indices and every ``step``-th between them,
    ``step`` odd and below the largest block a port may use at that position
    (translate.blocks), so every tile holds a sampled element and the samples walk through
    the positions within tiles; steps grow until the grid fits ``budget``; plus
    ``budget // 4`` positions drawn at random with a fixed seed."""
    from ..translate.blocks import blocks_at

    rank = len(shape)
    steps = []
    for d in range(rank):
        b = max(blocks_at(rank, d))
        steps.append(max(1, b - 1 if b % 2 == 0 else b))

    def axis(d: int) -> np.ndarray:
        e = shape[d]
        return np.unique(np.concatenate([np.arange(0, e, steps[d]), np.arange(min(2, e)),
                                         np.arange(max(0, e - 3), e)]))

    axes = [axis(d) for d in range(rank)]
    while int(np.prod([len(a) for a in axes], dtype=np.int64)) > budget:
        d = max(range(rank), key=lambda k: len(axes[k]))
        steps[d] = 2 * steps[d] + 1
        axes[d] = axis(d)
    grid = np.ravel_multi_index(np.meshgrid(*axes, indexing="ij"), shape, order="F").reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(20240607)
    extra = rng.integers(0, n, size=min(n, budget // 4))
    return np.unique(np.concatenate([grid.astype(np.int64), extra.astype(np.int64)]))


def _bounds(rec: Record) -> str:
    if not rec.data.ndim:
        return "scalar"
    return "(" + ",".join(f"{l}:{u}" for l, u in zip(rec.lbound, rec.ubound)) + ")"


def _chunks(n: int):
    for lo in range(0, n, CHUNK):
        yield lo, min(n, lo + CHUNK)


def _flat(k: int, where: Optional[np.ndarray]) -> int:
    return int(where[k]) if where is not None else k


def _exact_result(ref: Record, r: np.ndarray, p: np.ndarray, is_poison, show,
                  where: Optional[np.ndarray]) -> OutputCheck:
    n = int(r.size)
    nbad = nu = 0
    first: Optional[int] = None
    for lo, hi in _chunks(n):
        bad = r[lo:hi] != p[lo:hi]
        if bad.any():
            nbad += int(bad.sum())
            nu += int((bad & is_poison(p[lo:hi])).sum())
            if first is None:
                first = lo + int(np.argmax(bad))
    if first is None:
        return OutputCheck(ref.name, True, n)
    where_f = fortran_index(_flat(first, where), ref.data.shape, ref.lbound)
    msg = f"{nbad} of {n} elements differ; first at {_at(ref.name, where_f)}: port {show(first)} original"
    if nu:
        msg = f"{nu} element(s) never written (poison left), " + msg
    return OutputCheck(ref.name, False, n, max_abs_err=float("inf") if nu else 1.0, max_rel_err=float("inf"),
                       worst_index=where_f, message=msg)


def _at(name: str, where: list[int]) -> str:
    return f"{name}({','.join(map(str, where))})" if where else name


def _compare_float(ref: Record, r: np.ndarray, p: np.ndarray, tol: Tolerance, scale: float,
                   where: Optional[np.ndarray], noise: Optional[np.ndarray] = None) -> OutputCheck:
    n = int(r.size)
    if all(np.array_equal(r[lo:hi], p[lo:hi], equal_nan=True) for lo, hi in _chunks(n)):
        # identical (an input left alone, most outputs of element-wise kernels): no error
        return OutputCheck(ref.name, True, n, worst_index=fortran_index(_flat(0, where), ref.data.shape, ref.lbound),
                           tolerance=tol.rel)
    # pass 1: mean |ref| over the elements both wrote (finite)
    total, count = 0.0, 0
    with np.errstate(invalid="ignore", over="ignore"):
        for lo, hi in _chunks(n):
            rc, pc = r[lo:hi], p[lo:hi]
            finite = ~(np.isnan(rc) | np.isnan(pc)) & np.isfinite(rc)
            if finite.any():
                total += float(np.sum(np.abs(rc[finite]), dtype=np.float64))
                count += int(finite.sum())
    mean_ref = total / count if count else 0.0
    # pass 2: per element
    n_unw = n_extra = n_over = n_noise = 0
    worst_noise = 0.0
    first_unw: Optional[int] = None
    first_extra: Optional[int] = None
    worst_over: tuple[float, int] = (-np.inf, -1)
    max_diff: tuple[float, int] = (-np.inf, -1)
    max_rel = 0.0
    any_ok = False
    over_at: dict[int, tuple] = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for lo, hi in _chunks(n):
            rc, pc = r[lo:hi], p[lo:hi]
            rn, pn = np.isnan(rc), np.isnan(pc)
            unwritten = pn & ~rn
            extra = rn & ~pn
            ok_vals = ~(rn | pn)
            absr = np.abs(rc)
            diff = np.where(ok_vals, np.abs(pc - rc), 0.0)
            same_inf = ok_vals & ~np.isfinite(rc) & (pc == rc)
            diff = np.where(same_inf, 0.0, diff)
            diff = np.where(ok_vals & (np.isinf(diff) | np.isnan(diff)) & ~same_inf, np.inf, diff)
            base = np.maximum(absr, mean_ref)
            if tol.reduction:
                base = np.maximum(base, scale)
            allowed = tol.abs + tol.rel * np.where(np.isfinite(base), base, 0.0)
            if noise is not None:  # the original's own sensitivity to rounding (module doc)
                nzc = np.where(np.isfinite(noise[lo:hi]), noise[lo:hi], 0.0)
                floor = np.minimum(NOISE_FACTOR * nzc, NOISE_CAP * np.where(np.isfinite(base), base, 0.0))
                raised = ok_vals & (diff > allowed) & (diff <= floor)
                if raised.any():
                    n_noise += int(raised.sum())
                    worst_noise = max(worst_noise, float(np.max(np.where(raised, nzc, 0.0))))
                allowed = np.maximum(allowed, floor)
            rel = np.where(ok_vals & (absr > 0), diff / np.where(absr > 0, absr, 1.0),
                           np.where(diff > 0, np.inf, 0.0))
            over = ok_vals & (diff > allowed)
            if unwritten.any():
                n_unw += int(unwritten.sum())
                if first_unw is None:
                    first_unw = lo + int(np.argmax(unwritten))
            if extra.any():
                n_extra += int(extra.sum())
                if first_extra is None:
                    first_extra = lo + int(np.argmax(extra))
            if over.any():
                n_over += int(over.sum())
                excess = np.where(over, diff - allowed, -np.inf)
                k = int(np.argmax(excess))
                if excess[k] > worst_over[0]:
                    worst_over = (float(excess[k]), lo + k)
                    over_at[lo + k] = (float(diff[k]), float(allowed[k]))
            k = int(np.argmax(diff))
            if diff[k] > max_diff[0]:
                max_diff = (float(diff[k]), lo + k)
            if ok_vals.any():
                any_ok = True
                max_rel = max(max_rel, float(rel[ok_vals].max()))
    max_abs = max_diff[0]
    if first_unw is not None:
        worst = first_unw
    elif first_extra is not None:
        worst = first_extra
    elif n_over:
        worst = worst_over[1]
    else:
        worst = max_diff[1]
    where_f = fortran_index(_flat(worst, where), ref.data.shape, ref.lbound)
    passed = not (n_unw or n_extra or n_over)
    msg = ""
    if n_unw:
        msg = (f"{n_unw} of {n} element(s) never written (NaN poison left by the port where the "
               f"original wrote a value), first at {_at(ref.name, where_f)}")
        max_abs = float("inf")
    elif n_extra:
        msg = f"{n_extra} element(s) NaN in the original but not in the port, first at {_at(ref.name, where_f)}"
    elif n_over:
        d, a = over_at[worst]
        msg = (f"{n_over} of {n} elements outside tolerance; worst {_at(ref.name, where_f)}: "
               f"port {p[worst]!r} original {r[worst]!r} (abs err {d:.3g} > allowed {a:.3g})")
    if n_noise:
        msg = (msg + "; " if msg else "") + (
            f"{n_noise} element(s) within {NOISE_FACTOR:g}x the original's own sensitivity (its outputs move by up "
            f"to {worst_noise:.3g} there when its inputs move by 2 ulp), beyond the tolerance {tol.rel:g}")
    return OutputCheck(ref.name, passed, n, max_abs_err=max_abs, max_rel_err=max_rel if any_ok else 0.0,
                       worst_index=where_f, tolerance=tol.rel, message=msg)
